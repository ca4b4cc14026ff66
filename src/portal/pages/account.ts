/**
 * The account page (slug, public ids, checkout return URLs and teammates' roles, both changed by
 * an admin; the last admin stays one) and the audit log: 50 entries a page (`?page=`, from 1),
 * filtered by `who` and `what` (a part of either, any case) and `from`/`to` (UTC days, both
 * included), each target with its name when it is a key or endpoint of the account; refused
 * attempts are there too (kit.recordRefusal); GET /portal/audit.csv exports what the same filters match, newest first, at most
 * 10 000 rows (a cell starting with = + - @ is prefixed with ' so a spreadsheet shows it as text).
 */
import type Router from '@koa/router';
import type { AppState } from '../../http/context';
import type { PortalCtx, PortalKit } from '../kit';
import { AppError } from '../../shared/errors';
import { returnUrlProblem } from '../../shared/return-url';
import { accountPage, auditPage, targetText, type AuditFilters, type ReturnUrlsForm } from '../views';
import type { AuditEntry, AuditListOptions } from '../../audit/types';

const AUDIT_PAGE_SIZE = 50;
const AUDIT_CSV_MAX_ROWS = 10_000;

/** The audit filters of a query string: the values as typed, the list options they make, and what was wrong with them. */
function auditFiltersOf(query: Record<string, unknown>): { filters: AuditFilters; options: Omit<AuditListOptions, 'limit'> } {
  const str = (v: unknown, max: number) => (typeof v === 'string' ? v.trim().slice(0, max) : '');
  const values = { who: str(query.who, 200), what: str(query.what, 100), from: str(query.from, 10), to: str(query.to, 10) };
  const errors: AuditFilters['errors'] = {};
  const day = (text: string, name: 'from' | 'to'): Date | undefined => {
    if (!text) return undefined;
    const d = /^\d{4}-\d{2}-\d{2}$/.test(text) ? new Date(`${text}T00:00:00Z`) : null;
    if (!d || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== text) {
      errors[name] = `Enter the ${name === 'from' ? 'first' : 'last'} day as YYYY-MM-DD, e.g. 2026-11-28.`;
      return undefined;
    }
    return d;
  };
  const from = day(values.from, 'from');
  const last = day(values.to, 'to');
  if (from && last && last < from) errors.to = 'The last day is before the first day.';
  const to = last ? new Date(last.getTime() + 24 * 3600_000) : undefined;
  return {
    filters: { values, errors },
    options: { actor: values.who || undefined, action: values.what || undefined, from, to },
  };
}

/** One CSV cell: quoted, quotes doubled, and a leading = + - @ (or tab, CR) made text with a ' (a spreadsheet would run it). */
function csvCell(value: string | null | undefined): string {
  const text = value ?? '';
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return `"${safe.replace(/"/g, '""')}"`;
}

/** The audit log as CSV (RFC 4180, CRLF): a header line, then one line per entry; `target` as the page shows it (with its name). */
function auditCsv(entries: AuditEntry[], names: ReadonlyMap<string, string>): string {
  const header = [
    'started_at',
    'actor',
    'through',
    'action',
    'target_kind',
    'target_id',
    'target',
    'reason',
    'outcome',
    'outcome_detail',
    'client_address',
  ];
  const lines = entries.map((e) =>
    [
      e.startedAt.toISOString(),
      e.actor,
      e.actorKind,
      e.action,
      e.targetKind,
      e.targetId,
      targetText(e, names),
      e.reason,
      e.outcome,
      e.outcomeDetail,
      e.clientAddress,
    ]
      .map(csvCell)
      .join(','),
  );
  return [header.join(','), ...lines].map((l) => `${l}\r\n`).join('');
}

export function registerAccountPages(pages: Router<AppState>, kit: PortalKit): void {
  const { deps, frame, send, redirect, requireAdmin, record, idParam, notFoundPage } = kit;
  /** The account's keys (by name) and endpoints of both modes (by URL), keyed `<kind>:<id>` as audit targets are. */
  const targetNames = async (ctx: PortalCtx): Promise<Map<string, string>> => {
    const rootAccountId = ctx.state.teammate!.rootAccountId;
    const [keys, test, live] = await Promise.all([
      deps.apiKeys.list(rootAccountId),
      deps.webhookEndpoints.list({ rootAccountId, mode: 'test', agentId: null }, { pageSize: 100, pageIndex: 0 }),
      deps.webhookEndpoints.list({ rootAccountId, mode: 'live', agentId: null }, { pageSize: 100, pageIndex: 0 }),
    ]);
    return new Map([
      ...keys.map((k) => [`api_key:${k.id}`, k.name] as const),
      ...[...test.items, ...live.items].map((e) => [`webhook_endpoint:${e.id}`, e.url] as const),
    ]);
  };
  pages.get('/audit', async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const { filters, options } = auditFiltersOf(ctx.query);
    const page = /^\d{1,6}$/.test(String(ctx.query.page)) ? Math.max(Number(ctx.query.page) - 1, 0) : 0;
    const bad = Object.keys(filters.errors).length > 0;
    // One more than a page: whether an older page exists.
    const found = bad
      ? []
      : await deps.audit.list({
          ...options,
          rootAccountId: ctx.state.teammate!.rootAccountId,
          limit: AUDIT_PAGE_SIZE + 1,
          offset: page * AUDIT_PAGE_SIZE,
        });
    send(
      ctx,
      bad ? 400 : 200,
      auditPage(frame(ctx, 'Audit log', { active: 'audit' }), {
        entries: found.slice(0, AUDIT_PAGE_SIZE),
        filters,
        page,
        hasMore: found.length > AUDIT_PAGE_SIZE,
        pageSize: AUDIT_PAGE_SIZE,
        names: await targetNames(ctx),
      }),
    );
  });
  pages.get('/audit.csv', async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const { filters, options } = auditFiltersOf(ctx.query);
    if (Object.keys(filters.errors).length) {
      ctx.status = 400;
      ctx.type = 'text/plain';
      ctx.body = `${Object.values(filters.errors).join(' ')}\n`;
      return;
    }
    const entries = await deps.audit.list({
      ...options,
      rootAccountId: ctx.state.teammate!.rootAccountId,
      limit: AUDIT_CSV_MAX_ROWS,
      upTo10000: true,
    });
    ctx.status = 200;
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set(
      'Content-Disposition',
      `attachment; filename="audit-${ctx.state.viewer!.accountSlug}-${new Date().toISOString().slice(0, 10)}.csv"`,
    );
    ctx.body = auditCsv(entries, await targetNames(ctx));
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
    if (role !== 'admin' && role !== 'viewer' && role !== 'adjuster') {
      ctx.session!.flash = 'The role was not changed: choose admin, viewer or adjuster.';
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
        : `${result.name} is now ${result.portalRole === 'viewer' ? 'a' : 'an'} ${result.portalRole}.`;
    redirect(ctx, '/portal/account');
  });
}
