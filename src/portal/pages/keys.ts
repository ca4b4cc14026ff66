/**
 * The API keys pages: the keys of a mode with their values' prefixes and expiry; create (the
 * value shown once), rotate (a chosen grace), freeze, unfreeze, delete after confirming (admin).
 * Another account's key reads as absent. Create and rotate redirect (303) to the key's `issued`
 * page, which shows the new value once: it waits in the session (`reveal`) and is removed there
 * as it is shown; a reload shows the result without the value. Rotating or freezing a live key
 * is confirmed first on a page naming the key and its mode (GET …/rotate|freeze); a POST without
 * `confirm=yes` for a live key changes nothing and leads there.
 */
import type Router from '@koa/router';
import type { AppState } from '../../http/context';
import { modeOf, type PortalCtx, type PortalKit } from '../kit';
import type { KeyMode } from '../../api-keys/secrets';
import { AppError } from '../../shared/errors';
import type { CreateKeyInput, IssuedKey } from '../../api-keys/service';
import { confirmLiveKeyPage, deleteKeyPage, emptyCreateKeyForm, issuedKeyPage, keysPage, messagePage, type CreateKeyForm } from '../views';

export function registerKeyPages(pages: Router<AppState>, kit: PortalKit): void {
  const { deps, options, frame, send, redirect, requireAdmin, record, takeReveal } = kit;
  /** Keeps a new value for the key's `issued` page (once) and redirects there. */
  const reveal = (ctx: PortalCtx, issued: IssuedKey, change: 'created' | 'rotated') => {
    ctx.session!.reveal = {
      kind: 'key',
      id: issued.id,
      at: Date.now(),
      change,
      name: issued.name,
      mode: issued.mode,
      value: issued.key,
      previousValueExpiresAt: issued.previousValueExpiresAt,
    };
    redirect(ctx, `/portal/keys/${issued.id}/issued`);
  };
  /** The key with this id if it is the signed-in account's, else a 404 page (another account's key looks absent). */
  const ownKey = async (ctx: PortalCtx) => {
    const id = /^\d{1,9}$/.test(String(ctx.params?.id)) ? Number(ctx.params.id) : NaN;
    const key = Number.isFinite(id) ? await deps.apiKeys.get(id) : null;
    if (!key || key.rootAccountId !== ctx.state.teammate!.rootAccountId) {
      void kit.recordRefusal(ctx, 'refused_unknown_target', 'no such API key in this account');
      send(
        ctx,
        404,
        messagePage(frame(ctx, 'No such key'), 'This account has no such API key.', {
          href: '/portal/keys',
          label: 'Back to the API keys',
        }),
      );
      return null;
    }
    return key;
  };

  const keysView = async (ctx: PortalCtx, mode: KeyMode, form: CreateKeyForm, status = 200) => {
    const teammate = ctx.state.teammate!;
    const [keys, teammates] = await Promise.all([
      deps.apiKeys.list(teammate.rootAccountId),
      deps.accounts.listTeammates(teammate.rootAccountId),
    ]);
    send(
      ctx,
      status,
      keysPage(frame(ctx, 'API keys', { active: 'keys', modes: { current: mode, href: (m) => `/portal/keys?mode=${m}` } }), {
        keys: keys.filter((k) => k.mode === mode && k.status !== 'deleted'),
        mode,
        canChange: teammate.portalRole === 'admin',
        teammates,
        form,
        defaultGraceHours: options.defaultGraceHours,
      }),
    );
  };

  pages.get('/keys', async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    await keysView(ctx, modeOf(ctx.query.mode), emptyCreateKeyForm());
  });
  pages.post('/keys', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const mode = modeOf(body.mode);
    const str = (v: unknown) => (typeof v === 'string' ? v : '');
    const form: CreateKeyForm = {
      values: {
        name: str(body.name).trim(),
        description: str(body.description).trim(),
        agentId: str(body.agent_id),
        platformFeeBps: str(body.platform_fee_bps).trim(),
      },
      errors: {},
    };
    if (!form.values.name) form.errors.name = 'Enter a name for the key.';
    else if (form.values.name.length > 200) form.errors.name = 'The name is at most 200 characters.';
    if (form.values.description.length > 1000) form.errors.description = 'The description is at most 1000 characters.';
    const fee =
      form.values.platformFeeBps === '' ? null : /^\d{1,5}$/.test(form.values.platformFeeBps) ? Number(form.values.platformFeeBps) : NaN;
    if (fee !== null && !(Number.isInteger(fee) && fee >= 0 && fee <= 10000))
      form.errors.platformFeeBps = 'Enter a whole number from 0 to 10000, or leave it empty.';
    const agentId = form.values.agentId === '' ? null : /^\d{1,9}$/.test(form.values.agentId) ? Number(form.values.agentId) : NaN;
    if (agentId !== null && !Number.isFinite(agentId)) form.errors.agentId = 'Choose one of the listed agents.';
    if (Object.keys(form.errors).length) return keysView(ctx, mode, form, 400);
    const input: CreateKeyInput = {
      rootAccountId: ctx.state.teammate!.rootAccountId,
      name: form.values.name,
      description: form.values.description,
      mode,
      agentId,
      platformFeeBps: fee,
    };
    try {
      const issued = await record(
        ctx,
        'create_key',
        { kind: 'root_account', id: String(input.rootAccountId) },
        () => deps.apiKeys.create(input),
        (k) => ({
          api_key_id: k.id,
          name: k.name,
          mode: k.mode,
          agent_id: k.agentId,
          platform_fee_bps: k.platformFeeBps,
        }),
      );
      reveal(ctx, issued, 'created');
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      form.formError = `The key was not created: ${err.message}.`;
      if (/agent/.test(err.message)) form.errors.agentId = 'Choose one of the listed agents.';
      return keysView(ctx, mode, form, 400);
    }
  });
  /** A live key's change not yet confirmed: to its confirmation page (true); else false. */
  const unconfirmedLive = (ctx: PortalCtx, key: { id: number; mode: KeyMode }, change: 'rotate' | 'freeze') => {
    if (key.mode !== 'live' || (ctx.request.body as Record<string, unknown> | undefined)?.confirm === 'yes') return false;
    redirect(ctx, `/portal/keys/${key.id}/${change}`);
    return true;
  };
  for (const change of ['rotate', 'freeze'] as const) {
    pages.get(`/keys/:id/${change}`, requireAdmin, async (rawCtx) => {
      const ctx = rawCtx as unknown as PortalCtx;
      const key = await ownKey(ctx);
      if (!key) return;
      if (key.mode !== 'live' || key.status !== 'active') return redirect(ctx, `/portal/keys?mode=${key.mode}`);
      const title = `${change === 'rotate' ? 'Rotate' : 'Freeze'} the live key "${key.name}"?`;
      send(
        ctx,
        200,
        confirmLiveKeyPage(frame(ctx, title, { active: 'keys', live: true }), {
          key,
          change,
          defaultGraceHours: options.defaultGraceHours,
        }),
      );
    });
  }
  pages.post('/keys/:id/rotate', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const key = await ownKey(ctx);
    if (!key || unconfirmedLive(ctx, key, 'rotate')) return;
    const raw = String((ctx.request.body as Record<string, unknown> | undefined)?.grace_hours ?? '');
    const grace = /^\d{1,4}$/.test(raw) && Number(raw) <= 8760 ? Number(raw) : NaN;
    if (!Number.isFinite(grace)) {
      ctx.session!.flash = 'The key was not rotated: choose how long the old value keeps working.';
      return redirect(ctx, `/portal/keys?mode=${key.mode}`);
    }
    try {
      const issued = await record(
        ctx,
        'rotate_key',
        { kind: 'api_key', id: String(key.id) },
        () => deps.apiKeys.rotate(key.id, grace),
        (k) => ({
          previous_value_expires_at: k.previousValueExpiresAt,
          grace_hours: grace,
        }),
      );
      reveal(ctx, issued, 'rotated');
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      ctx.session!.flash = `Key "${key.name}" was not rotated: ${err.message}.`;
      redirect(ctx, `/portal/keys?mode=${key.mode}`);
    }
  });
  pages.get('/keys/:id/issued', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const key = await ownKey(ctx);
    if (!key) return;
    const kept = takeReveal(ctx, 'key', key.id);
    if (kept) {
      const title = kept.change === 'created' ? 'Key created' : 'Key rotated';
      return send(ctx, 200, issuedKeyPage(frame(ctx, title, { active: 'keys' }), kept));
    }
    send(
      ctx,
      200,
      messagePage(
        frame(ctx, 'Key value not shown again', { active: 'keys' }),
        `The value of key "${key.name}" was shown once, when it was created or rotated, and is not shown again. If it was not stored, rotate the key to get a new value.`,
        { href: `/portal/keys?mode=${key.mode}`, label: `Back to the ${key.mode} keys` },
      ),
    );
  });
  for (const action of ['freeze', 'unfreeze'] as const) {
    pages.post(`/keys/:id/${action}`, requireAdmin, async (rawCtx) => {
      const ctx = rawCtx as unknown as PortalCtx;
      const key = await ownKey(ctx);
      if (!key || (action === 'freeze' && unconfirmedLive(ctx, key, 'freeze'))) return;
      try {
        const k = await record(
          ctx,
          `${action}_key`,
          { kind: 'api_key', id: String(key.id) },
          () => deps.apiKeys[action](key.id),
          (r) => ({ status: r.status }),
        );
        ctx.session!.flash = `Key "${k.name}" is now ${k.status}.`;
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        ctx.session!.flash = `Key "${key.name}" was not changed: ${err.message}.`;
      }
      redirect(ctx, `/portal/keys?mode=${key.mode}`);
    });
  }
  pages.get('/keys/:id/delete', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const key = await ownKey(ctx);
    if (!key) return;
    send(
      ctx,
      200,
      deleteKeyPage(frame(ctx, `Delete the ${key.mode} key "${key.name}"?`, { active: 'keys', live: key.mode === 'live' }), key),
    );
  });
  pages.post('/keys/:id/delete', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const key = await ownKey(ctx);
    if (!key) return;
    if ((ctx.request.body as Record<string, unknown> | undefined)?.confirm !== 'yes') {
      return send(
        ctx,
        400,
        deleteKeyPage(
          frame(ctx, `Delete the ${key.mode} key "${key.name}"?`, { active: 'keys', live: key.mode === 'live' }),
          key,
          'Tick the box to confirm, or keep the key.',
        ),
      );
    }
    try {
      await record(
        ctx,
        'delete_key',
        { kind: 'api_key', id: String(key.id) },
        () => deps.apiKeys.delete(key.id),
        (r) => ({ status: r.status }),
      );
      ctx.session!.flash = `Key "${key.name}" is deleted.`;
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      ctx.session!.flash = `Key "${key.name}" was not deleted: ${err.message}.`;
    }
    redirect(ctx, `/portal/keys?mode=${key.mode}`);
  });
}
