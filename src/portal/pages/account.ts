/**
 * The account page (slug, public ids, checkout return URLs and teammates' roles, both changed by
 * an admin; the last admin stays one) and the audit log.
 */
import type Router from '@koa/router';
import type { AppState } from '../../http/context';
import type { PortalCtx, PortalKit } from '../kit';
import { AppError } from '../../shared/errors';
import { returnUrlProblem } from '../../shared/return-url';
import { accountPage, auditPage, type ReturnUrlsForm } from '../views';

export function registerAccountPages(pages: Router<AppState>, kit: PortalKit): void {
  const { deps, frame, send, redirect, requireAdmin, record, idParam, notFoundPage } = kit;
  pages.get('/audit', async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const entries = await deps.audit.list({ limit: 200, rootAccountId: ctx.state.teammate!.rootAccountId });
    send(ctx, 200, auditPage(frame(ctx, 'Audit log', { active: 'audit' }), entries));
  });
  const accountView = async (ctx: PortalCtx, form?: ReturnUrlsForm, status = 200) => {
    const id = ctx.state.teammate!.rootAccountId;
    const [profile, teammates] = await Promise.all([deps.accounts.profile(id), deps.accounts.listTeammates(id)]);
    send(
      ctx,
      status,
      accountPage(frame(ctx, 'Account', { active: 'account' }), {
        account: profile!,
        teammates,
        canChange: ctx.state.teammate!.portalRole === 'admin',
        form,
      }),
    );
  };
  pages.get('/account', async (rawCtx) => accountView(rawCtx as unknown as PortalCtx));
  pages.post('/account/return-urls', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const form: ReturnUrlsForm = {
      values: { successUrl: String(body.success_url ?? '').trim(), cancelUrl: String(body.cancel_url ?? '').trim() },
      errors: {},
    };
    for (const [field, label] of [
      ['successUrl', 'The success URL'],
      ['cancelUrl', 'The cancel URL'],
    ] as const) {
      const problem = form.values[field] ? returnUrlProblem(form.values[field]) : null;
      if (problem) form.errors[field] = `${label} ${problem}.`;
    }
    if (Object.keys(form.errors).length) return accountView(ctx, form, 400);
    const accountId = ctx.state.teammate!.rootAccountId;
    const change = { successUrl: form.values.successUrl || null, cancelUrl: form.values.cancelUrl || null };
    await record(
      ctx,
      'set_account_return_urls',
      { kind: 'root_account', id: String(accountId) },
      () => deps.apiKeys.setAccountReturnUrls(accountId, change),
      (a) => ({ checkout_success_url: a.checkoutSuccessUrl, checkout_cancel_url: a.checkoutCancelUrl }),
    );
    ctx.session!.flash = 'The checkout return URLs are saved.';
    redirect(ctx, '/portal/account');
  });
  pages.post('/teammates/:id/role', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const role = (ctx.request.body as Record<string, unknown> | undefined)?.role;
    if (role !== 'admin' && role !== 'viewer') {
      ctx.session!.flash = 'The role was not changed: choose admin or viewer.';
      return redirect(ctx, '/portal/account');
    }
    const accountId = ctx.state.teammate!.rootAccountId;
    const id = idParam(ctx);
    const result = await record(
      ctx,
      'set_teammate_role',
      { kind: 'teammate', id: String(id) },
      () => deps.accounts.setPortalRole(accountId, id, role),
      (t) => ({ role: t?.portalRole ?? null }),
    ).catch((err: unknown) => {
      if (err instanceof AppError) return err;
      throw err;
    });
    if (result === null) return notFoundPage(ctx, 'teammate', '/portal/account');
    ctx.session!.flash =
      result instanceof AppError
        ? `The role was not changed: ${result.message}.`
        : `${result.name} is now ${result.portalRole === 'admin' ? 'an admin' : 'a viewer'}.`;
    redirect(ctx, '/portal/account');
  });
}
