/**
 * The purchase rules, each decided once here and used wherever the service, the portal or an
 * activity asks the same question. Pure: no I/O, no clock (the instant is an input).
 *
 * A refusal is a value, `{ reason, code, message }`, or null when the purchase may go ahead: each
 * caller throws it as it always did (an AppError with `code` and `message` in the API; a
 * non-retryable activity failure with the same in the worker) or acts on `reason` (an activity
 * waits while certificates are being issued instead of refusing). The messages are the ones the
 * API has always answered.
 *
 * - **Payable** (`paymentRefusal`): a purchase can be paid while it has not been paid
 *   (no `paidAt`, not paid, awaiting certificates, issued or refunded), has not expired (not
 *   `expired`, and its checkout deadline is more than `marginMs` away), and is quoted or awaiting
 *   payment. Refusals, checked in that order, all INVALID_REQUEST: `already_paid`, `expired`,
 *   `not_awaiting_payment`.
 * - **In force** (`isInForce`, `IN_FORCE_STATUSES`): paid, not refunded in full and not every
 *   unit cancelled: `paid`, `awaiting_certificates`, `issued`, `partly_cancelled`. Only such a purchase can be cancelled, withdrawn from or changed.
 * - **Changeable** (`changeRefusal`): a purchase can be endorsed, or have its certificate holders
 *   changed, while it is in force (a purchase refunded in full is not) and its first certificates
 *   are issued (`certificatesIssuedAt`). Refusals, both PURCHASE_NOT_CHANGEABLE: `not_in_force`
 *   (its message names the change), `certificates_issuing` (the API refuses an endorsement quote
 *   then; a holder change, and the policy workflow's activities, wait for the issuance instead).
 * - **Cancellable units** (`cancellableUnits`): a covered unit may be cancelled while no
 *   cancellation holds it (scheduled, under way or completed; a rescinded one lets go of it) and
 *   its coverage has not started by the clock asked at (`hasStarted`: a unit that started is
 *   earned in full). Whether the purchase itself is in force is the caller's question.
 *
 * The purchase and policy workflows (workflows/) decide payability and changeability again in
 * their update validators: deterministic workflow code that cannot import this module.
 */
import type { PurchaseStatus } from '../../workflows/contracts';

/** A refused request: why (`reason`, for callers that act on it), and the API's code and message. */
export interface Refusal<Reason extends string, Code extends string> {
  reason: Reason;
  code: Code;
  message: string;
}

/**
 * Statuses in which the buyer has paid and the policy is in force (not refunded in full, not
 * every unit cancelled): the only ones a cancellation, a bulk cancellation, a withdrawal or a
 * change can act on.
 */
export const IN_FORCE_STATUSES: readonly PurchaseStatus[] = ['paid', 'awaiting_certificates', 'issued', 'partly_cancelled'];

/** Statuses in which nothing is left to cancel: refunded in full at the processor, or every unit cancelled. */
export const ENDED_STATUSES: readonly PurchaseStatus[] = ['refunded', 'cancelled'];

/** Whether purchase status `status` is one of IN_FORCE_STATUSES. */
export const isInForce = (status: PurchaseStatus): boolean => IN_FORCE_STATUSES.includes(status);

/** Statuses a purchase reaches only once paid: in force, or refunded in full afterwards. */
const PAID_STATUSES: readonly string[] = [...IN_FORCE_STATUSES, ...ENDED_STATUSES];

/** What the payable rule reads of a purchase (`status` as stored: a string). */
export interface PayableFacts {
  id: number;
  status: string;
  paidAt: Date | null;
  /** When its purchase workflow stops accepting payment (the checkout session's deadline); null: none yet. */
  checkoutExpiresAt: Date | null;
}

export type PaymentRefusal = Refusal<'already_paid' | 'expired' | 'not_awaiting_payment', 'INVALID_REQUEST'>;

/**
 * Whether purchase `p` can still be paid at `now` with `marginMs` to spare before its checkout
 * deadline (a new saved-card charge needs a minute; a checkout link none).
 * @returns null when it can; else the refusal, INVALID_REQUEST: `already_paid` ("Purchase <id> is
 *   already paid"), `expired` ("… has expired and can no longer be paid; quote again with
 *   adminValidateBuyerResponses"), or `not_awaiting_payment` ("… is not awaiting payment (status <s>)").
 */
export function paymentRefusal(p: PayableFacts, now: Date, marginMs = 0): PaymentRefusal | null {
  if (p.paidAt || PAID_STATUSES.includes(p.status))
    return { reason: 'already_paid', code: 'INVALID_REQUEST', message: `Purchase ${p.id} is already paid` };
  if (p.status === 'expired' || (p.checkoutExpiresAt && p.checkoutExpiresAt.getTime() - marginMs <= now.getTime()))
    return {
      reason: 'expired',
      code: 'INVALID_REQUEST',
      message: `Purchase ${p.id} has expired and can no longer be paid; quote again with adminValidateBuyerResponses`,
    };
  if (p.status !== 'quoted' && p.status !== 'awaiting_payment')
    return {
      reason: 'not_awaiting_payment',
      code: 'INVALID_REQUEST',
      message: `Purchase ${p.id} is not awaiting payment (status ${p.status})`,
    };
  return null;
}

/** The changes the changeable rule answers for (their refusal messages differ). */
export type PurchaseChange = 'endorsement' | 'certificate_holders';

/** What the changeable rule reads of a purchase. */
export interface ChangeableFacts {
  id: number;
  status: PurchaseStatus;
  /** When its first certificates were all stored; null while they are being issued. */
  certificatesIssuedAt: Date | null;
}

export type ChangeRefusal = Refusal<'not_in_force' | 'certificates_issuing', 'PURCHASE_NOT_CHANGEABLE'>;

const NOT_IN_FORCE: Record<PurchaseChange, string> = {
  endorsement: 'only a paid purchase in force can be endorsed',
  certificate_holders: 'only a paid purchase in force can change its certificate holders',
};

/**
 * Whether purchase `p` can take `change` now.
 * @returns null when it can; else the refusal, PURCHASE_NOT_CHANGEABLE: `not_in_force` ("Purchase
 *   <id> is <status>: only a paid purchase in force can be endorsed" / "… can change its
 *   certificate holders"), or, in force but its first certificates not all stored yet,
 *   `certificates_issuing` ("Purchase <id>'s certificates are still being issued: ask again in a
 *   few seconds"). A caller that can wait for the issuance (the policy workflow's activities, a
 *   holder change the workflow holds until then) acts on `not_in_force` only.
 */
export function changeRefusal(p: ChangeableFacts, change: PurchaseChange): ChangeRefusal | null {
  if (!isInForce(p.status))
    return { reason: 'not_in_force', code: 'PURCHASE_NOT_CHANGEABLE', message: `Purchase ${p.id} is ${p.status}: ${NOT_IN_FORCE[change]}` };
  if (!p.certificatesIssuedAt)
    return {
      reason: 'certificates_issuing',
      code: 'PURCHASE_NOT_CHANGEABLE',
      message: `Purchase ${p.id}'s certificates are still being issued: ask again in a few seconds`,
    };
  return null;
}

/** Whether a covered unit starting at `startsAt` has started by `clock` (then it is earned in full). */
export const hasStarted = (startsAt: Date, clock: Date): boolean => startsAt.getTime() <= clock.getTime();

/** A covered unit as the cancellable rule sees it. */
export interface UnitStanding {
  /**
   * A cancellation holds it (scheduled, under way or completed). A caller whose view folds more
   * into "not active" (the API's unit `state`: also unpaid, or the purchase refunded in full) says so here.
   */
  cancelled: boolean;
  /** Its coverage has started by the clock the question is asked at (`hasStarted`). */
  started: boolean;
}

/** A stored covered unit's standing at `clock`: held by a cancellation (`cancellationId`), started by `hasStarted`. */
export const standingOf = (u: { cancellationId: number | null; startsAt: Date }, clock: Date): UnitStanding => ({
  cancelled: u.cancellationId !== null,
  started: hasStarted(u.startsAt, clock),
});

/** Whether a unit of standing `s` may be cancelled: not held by a cancellation, not started. */
export const isCancellableUnit = (s: UnitStanding): boolean => !s.cancelled && !s.started;

/**
 * The units of `units` that may be cancelled (`isCancellableUnit` of `standing(u)`), in their order.
 * E.g. the default of a cancellation that names no units, at its effective time
 * (`standing: (u) => standingOf(u, effectiveAt)`), or what the portal offers to cancel.
 */
export function cancellableUnits<U>(units: readonly U[], standing: (u: U) => UnitStanding): U[] {
  return units.filter((u) => isCancellableUnit(standing(u)));
}
