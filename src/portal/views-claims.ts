/**
 * The portal's claim pages (issue 51, item 3): the claims the account sees (an agency its own; an
 * insurer or MGA those of the products naming it), and one claim with its facts and history. An
 * adjuster (the `adjuster` role of an insurer's or MGA's account) also gets the forms of the
 * claim's next decision: acknowledge, start the review, approve (amount typed in major units,
 * kept in minor units, and a reason) or deny (a reason code and its text). Amounts arrive in
 * minor units and are shown in their currency. Same rendering and accessibility rules as
 * src/portal/views.ts.
 */
import { html } from 'htm/preact';
import type { KeyMode } from '../api-keys/secrets';
import type { Claim } from '../claims/schemas';
import { formatMinorUnits } from '../payments/checkout-link-email';
import { csrfField, field, page, when, type Frame } from './views';
import { descriptionList } from './description-list';
import { dataTable } from './table';
import { errorSummary, mistakesOf } from '../http/error-summary';

/** The statuses a claim list may be filtered by, in the claim's order. */
export const CLAIM_STATUSES = ['submitted', 'acknowledged', 'under_review', 'approved', 'denied', 'paid', 'closed', 'reopened'] as const;
export type ClaimStatusFilter = (typeof CLAIM_STATUSES)[number];

/** The decisions the portal's forms take: the API's adjuster actions an adjuster makes by hand. */
export type ClaimDecision = 'acknowledge' | 'start_review' | 'approve' | 'deny';

/** A decision form's values and mistakes, kept when it comes back with an error. */
export interface DecisionForm {
  action: ClaimDecision;
  values: Partial<Record<'amount' | 'reason' | 'reason_code', string>>;
  errors: Partial<Record<'amount' | 'reason' | 'reason_code', string>>;
  formError?: string;
}

const words = (s: string) => s.replace(/_/g, ' ');
const money = (c: Claim, minor: number | null) => (minor === null ? '—' : formatMinorUnits(minor, c.currency));

/** The claims list of `mode`, filtered by `status` when given. */
export function claimsPage(
  frame: Frame,
  data: { mode: KeyMode; status: ClaimStatusFilter | null; claims: Claim[]; total: number },
): string {
  return page(
    frame,
    html`<form method="get" action="/portal/claims" class="filters">
        <input type="hidden" name="mode" value=${data.mode} />
        <label for="claims-status">Status</label>
        <select id="claims-status" name="status">
          <option value="">any</option>
          ${CLAIM_STATUSES.map((s) => html`<option value=${s} selected=${data.status === s}>${words(s)}</option>`)}
        </select>
        <button type="submit" class="secondary">Show</button>
      </form>
      ${
        data.claims.length === 0
          ? html`<p>No claims${data.status ? ` ${words(data.status)}` : ''} in this mode.</p>`
          : dataTable({
              label: 'Claims',
              caption: `The ${data.claims.length} newest of ${data.total} claims${data.status ? `, ${words(data.status)}` : ''}`,
              columns: [
                {
                  header: 'Claim',
                  rowHeader: true,
                  cell: (c: Claim) => html`<a href=${`/portal/claims/${c.id}?mode=${data.mode}`}>#${c.id}</a>`,
                },
                { header: 'Status', cell: (c) => words(c.status) },
                { header: 'Type', cell: (c) => words(c.claim_type) },
                { header: 'Incident day', cell: (c) => c.incident_day },
                { header: 'Claimed', cell: (c) => money(c, c.amount_claimed) },
                { header: 'Approved', cell: (c) => money(c, c.approved_amount) },
                { header: 'Purchase', cell: (c) => `#${c.purchase_id}` },
                { header: 'Filed', cell: (c) => when(c.created_at) },
              ],
              rows: data.claims,
            })
      }`,
  );
}

/** A form of one decision: its button, and the fields `fields` (with their values and errors when it came back). */
function decisionForm(
  frame: Frame,
  claim: Claim,
  mode: KeyMode,
  action: ClaimDecision,
  label: string,
  form: DecisionForm | undefined,
  fields: Array<{
    id: string;
    name: 'amount' | 'reason' | 'reason_code';
    label: string;
    hint?: string;
    maxlength?: number;
    inputmode?: string;
  }>,
) {
  const mine = form?.action === action ? form : undefined;
  const ids = Object.fromEntries(fields.map((f) => [f.name, f.id]));
  return html`<form method="post" action=${`/portal/claims/${claim.id}/actions?mode=${mode}`} novalidate>
    ${csrfField(frame.csrf)}
    <input type="hidden" name="action" value=${action} />
    ${mine ? errorSummary(mistakesOf(mine.errors, ids, mine.formError)) : null}
    ${fields.map((f) => field({ ...f, required: true, value: mine?.values[f.name] ?? '', error: mine?.errors[f.name] }))}
    <button type="submit">${label}</button>
  </form>`;
}

/** The decisions open to an adjuster on a claim in its status: the forms, or null when none is. */
function decisions(frame: Frame, claim: Claim, mode: KeyMode, form: DecisionForm | undefined) {
  const currency = claim.currency.toUpperCase();
  switch (claim.status) {
    case 'submitted':
      return decisionForm(frame, claim, mode, 'acknowledge', 'Acknowledge the claim', form, []);
    case 'acknowledged':
    case 'reopened':
      return decisionForm(frame, claim, mode, 'start_review', 'Start the review', form, []);
    case 'under_review':
      return html`<h2>Approve</h2>
        ${decisionForm(frame, claim, mode, 'approve', 'Approve the claim', form, [
          {
            id: 'approve-amount',
            name: 'amount',
            label: `Amount approved (${currency})`,
            hint: `At most the ${money(claim, claim.amount_claimed)} claimed, e.g. 900.00.`,
            inputmode: 'decimal',
            maxlength: 20,
          },
          { id: 'approve-reason', name: 'reason', label: 'Reason', maxlength: 2000 },
        ])}
        <h2>Deny</h2>
        ${decisionForm(frame, claim, mode, 'deny', 'Deny the claim', form, [
          {
            id: 'deny-code',
            name: 'reason_code',
            label: 'Reason code',
            hint: 'Lower-case words joined by underscores, e.g. excluded_peril.',
            maxlength: 64,
          },
          { id: 'deny-reason', name: 'reason', label: 'Reason given to the claimant', maxlength: 2000 },
        ])}`;
    default:
      return null;
  }
}

/**
 * One claim: its facts, its history (who did what, comments included) and, for an adjuster
 * (`canDecide`), the forms of its next decision; `form` is a decision that came back with mistakes.
 */
export function claimPage(frame: Frame, data: { claim: Claim; mode: KeyMode; canDecide: boolean; form?: DecisionForm }): string {
  const c = data.claim;
  const open = data.canDecide ? decisions(frame, c, data.mode, data.form) : null;
  return page(
    frame,
    html`${descriptionList([
      ['Status', words(c.status), 'claim-status'],
      ['Purchase', `#${c.purchase_id}`],
      ['Covered unit', c.covered_unit_label],
      ['Incident', `${when(c.incident_at)} (local day ${c.incident_day})`],
      ['Type', words(c.claim_type)],
      ['Description', c.description],
      ['Claimant', `${c.claimant.name} <${c.claimant.email}>`],
      ['Amount claimed', money(c, c.amount_claimed)],
      ['Amount approved', money(c, c.approved_amount), 'claim-approved'],
      ['Decision', c.denial_code ? `${words(c.denial_code)}: ${c.decision_reason ?? ''}` : (c.decision_reason ?? '—')],
      ['Paid', `${money(c, c.paid_amount)}${c.payment_reference ? ` (${c.payment_reference})` : ''}`],
      ['Acknowledge by', `${when(c.acknowledgement_due_at)}${c.acknowledgement_overdue ? ' (overdue)' : ''}`],
    ])}
      ${open ? html`<section aria-labelledby="decide-title"><h2 id="decide-title">Decide</h2>${open}</section>` : null}
      ${dataTable({
        label: 'History',
        caption: 'Who did what, oldest first',
        columns: [
          { header: 'When', cell: (e: NonNullable<Claim['history']>[number]) => when(e.created_at) },
          { header: 'What', rowHeader: true, cell: (e) => words(e.kind) },
          { header: 'Who', cell: (e) => (e.actor.id ? `${words(e.actor.type)} ${e.actor.id}` : words(e.actor.type)) },
          { header: 'Note', cell: (e) => e.note ?? '' },
          { header: 'Amount', cell: (e) => (typeof e.data.amount === 'number' ? money(c, e.data.amount) : '') },
        ],
        rows: c.history ?? [],
      })}
      <p><a href=${`/portal/claims?mode=${data.mode}`}>All claims</a></p>`,
  );
}
