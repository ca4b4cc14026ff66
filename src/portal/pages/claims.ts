/**
 * Claims in the portal (issue 51, item 3): every teammate reads the claims the account sees (an
 * agency its own, with their history and comments; an insurer or MGA the claims of the products
 * naming it), through the claims service the API's routes call. A teammate with the `adjuster`
 * role of an insurer's or MGA's account decides them: acknowledge, start the review, approve (an
 * amount in major units, at most the amount claimed, and a reason) or deny (a reason code and its
 * text), each through the claim's workflow as the API's `POST /api/v1/claims/{id}/actions` does,
 * recorded in the claim's history as actor `adjuster` `teammate-<agent id>` and on the audit log.
 *
 *   GET  /portal/claims?mode=…&status=…   the newest 50 claims, filtered by status
 *   GET  /portal/claims/{id}?mode=…       one claim, its history, and the adjuster's forms
 *   POST /portal/claims/{id}/actions      a decision (adjuster): 303 to the claim with a notice; a
 *                                         mistake answers the claim page with the error summary, 400
 *                                         (409 when the claim's status no longer allows it)
 *
 * A viewer's decision is refused with 403 before anything is read; an admin's with 403 once the
 * claim is found (404 for a claim the account does not see, like any page of another account's);
 * each recorded as a refused change. An agency's adjuster reaches the service, which refuses it
 * (CLAIM_DECISION_NOT_ALLOWED).
 */
import type Router from '@koa/router';
import type { AppState } from '../../http/context';
import type { Principal } from '../../api-keys/service';
import type { KeyMode } from '../../api-keys/secrets';
import { AppError } from '../../shared/errors';
import { minorUnitsOfText } from '../../claims/buyer-service';
import { messagePage } from '../views';
import { modeOf, type PortalCtx, type PortalKit } from '../kit';
import { CLAIM_STATUSES, claimPage, claimsPage, type ClaimDecision, type ClaimStatusFilter, type DecisionForm } from '../views-claims';

const DECISIONS: readonly ClaimDecision[] = ['acknowledge', 'start_review', 'approve', 'deny'];
const REASON_CODE = /^[a-z][a-z0-9_]{0,63}$/;
/** The notice after each decision. */
const DONE: Record<ClaimDecision, string> = {
  acknowledge: 'acknowledged',
  start_review: 'review started',
  approve: 'approved',
  deny: 'denied',
};

/** The signed-in teammate's account in `mode` as the claims service sees a caller: the whole account, no key. */
const principalOf = (ctx: PortalCtx, mode: KeyMode): Principal => ({
  apiKeyId: 0,
  rootAccountId: ctx.state.teammate!.rootAccountId,
  mode,
  agentId: null,
  platformFeeBps: null,
});

/**
 * The decision a form sent, as the service's body, or the form with its mistakes: an approval
 * needs an amount in major units of `currency` and a reason; a denial a reason code and a text.
 */
export function decisionOf(fields: Record<string, unknown>, currency: string): { body: Record<string, unknown> } | { form: DecisionForm } {
  const str = (v: unknown) => (typeof v === 'string' ? v.trim() : '');
  const action = DECISIONS.find((d) => d === fields.action) ?? 'acknowledge';
  const values = { amount: str(fields.amount), reason: str(fields.reason), reason_code: str(fields.reason_code) };
  const errors: DecisionForm['errors'] = {};
  if (action === 'approve') {
    const amount = minorUnitsOfText(values.amount, currency);
    if (!values.amount) errors.amount = 'Enter the amount approved';
    else if (amount === null || amount < 1) errors.amount = 'Enter the amount approved as a number, like 900.00';
    if (!values.reason) errors.reason = 'Enter the reason for the approval';
    if (!errors.amount && !errors.reason) return { body: { action, amount, reason: values.reason } };
  } else if (action === 'deny') {
    if (!values.reason_code) errors.reason_code = 'Enter the reason code';
    else if (!REASON_CODE.test(values.reason_code)) errors.reason_code = 'Enter the reason code in lower-case words joined by underscores';
    if (!values.reason) errors.reason = 'Enter the reason given to the claimant';
    if (!errors.reason_code && !errors.reason) return { body: { action, reason_code: values.reason_code, reason: values.reason } };
  } else return { body: { action } };
  return { form: { action, values, errors } };
}

export function registerClaimPages(pages: Router<AppState>, kit: PortalKit): void {
  const { deps, frame, send, redirect, record, idParam, orNotFound, recordRefusal } = kit;
  const isAdjuster = (ctx: PortalCtx) => ctx.state.teammate!.portalRole === 'adjuster';
  const claimFrame = (ctx: PortalCtx, id: number, mode: KeyMode) =>
    frame(ctx, `Claim #${id}`, { active: 'claims', modes: { current: mode, href: (m) => `/portal/claims/${id}?mode=${m}` } });

  pages.get('/claims', async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const mode = modeOf(ctx.query.mode);
    const status = CLAIM_STATUSES.find((s) => s === ctx.query.status) ?? null;
    const filter = status ? `&status=${status}` : '';
    const page = await deps.claims.list(principalOf(ctx, mode), { ...(status ? { status } : {}), pageSize: 50, pageIndex: 0 });
    send(
      ctx,
      200,
      claimsPage(frame(ctx, 'Claims', { active: 'claims', modes: { current: mode, href: (m) => `/portal/claims?mode=${m}${filter}` } }), {
        mode,
        status: status as ClaimStatusFilter | null,
        claims: page.items,
        total: page.total,
      }),
    );
  });

  pages.get('/claims/:id', async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const mode = modeOf(ctx.query.mode);
    const id = idParam(ctx);
    const claim = await orNotFound(ctx, 'claim', `/portal/claims?mode=${mode}`, () => deps.claims.get(principalOf(ctx, mode), id));
    if (!claim) return;
    send(ctx, 200, claimPage(claimFrame(ctx, id, mode), { claim, mode, canDecide: isAdjuster(ctx) }));
  });

  pages.post('/claims/:id/actions', async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const mode = modeOf(ctx.query.mode);
    const id = idParam(ctx);
    const back = `/portal/claims/${id}?mode=${mode}`;
    const role = ctx.state.teammate!.portalRole;
    const refuse = async (why: string, message: string) => {
      await recordRefusal(ctx, 'refused_change', why);
      send(ctx, 403, messagePage(frame(ctx, 'Not allowed'), message, { href: back, label: 'Back to the claim' }));
    };
    // A viewer reads only (whatever the claim); anyone else learns of a claim they cannot see as of one that does not exist.
    if (role === 'viewer')
      return refuse(
        'the viewer role can only read',
        'Your role (viewer) can only read. Claims are decided by an adjuster of the insurer or MGA the product names; nothing was changed.',
      );
    const principal = principalOf(ctx, mode);
    const claim = await orNotFound(ctx, 'claim', `/portal/claims?mode=${mode}`, () => deps.claims.get(principal, id));
    if (!claim) return;
    if (!isAdjuster(ctx))
      return refuse(
        `the ${role} role does not decide claims`,
        `Your role (${role}) does not decide claims: an adjuster of the insurer or MGA the product names does. Nothing was changed.`,
      );
    const decided = decisionOf((ctx.request.body ?? {}) as Record<string, unknown>, claim.currency);
    if ('form' in decided)
      return send(ctx, 400, claimPage(claimFrame(ctx, id, mode), { claim, mode, canDecide: true, form: decided.form }));
    const body = decided.body as Parameters<typeof deps.claims.decide>[2];
    const teammate = ctx.state.teammate!;
    try {
      await record(
        ctx,
        `claim_${body.action}`,
        { kind: 'claim', id: String(id) },
        () => deps.claims.decide(principal, id, body, `teammate-${teammate.id}`),
        (c) => ({ status: c.status, ...(body.amount !== undefined ? { amount: body.amount } : {}) }),
      );
    } catch (err) {
      if (!(err instanceof AppError) || err.status === 404 || err.status >= 500) throw err;
      // A refusal of the service (an amount above the one claimed, a status that no longer allows it): the form again, with why.
      const action = body.action as ClaimDecision;
      const values = {
        amount: String((ctx.request.body as Record<string, unknown>).amount ?? ''),
        reason: body.reason,
        reason_code: body.reason_code,
      };
      const onAmount = action === 'approve' && /amount/.test(err.message);
      const form: DecisionForm = {
        action,
        values,
        ...(onAmount ? { errors: { amount: err.message } } : { errors: {}, formError: err.message }),
      };
      const fresh = await deps.claims.get(principal, id);
      return send(ctx, err.status === 409 ? 409 : 400, claimPage(claimFrame(ctx, id, mode), { claim: fresh, mode, canDecide: true, form }));
    }
    ctx.session!.flash = `Claim #${id}: ${DONE[body.action as ClaimDecision]}.`;
    redirect(ctx, back);
  });
}
