/**
 * Names shared by the API, the worker and the claim workflow (issue 51, item 2): the claim's
 * statuses and the moves between them, the workflow's id, input, updates and what they answer.
 * No runtime imports, so any side may import it (STYLE practice 1); the rules here are pure data
 * and functions that the workflow's validators and the API's fast path both use.
 */

/**
 * A claim's statuses: `submitted` (filed), `acknowledged` (the insurer has it, within the product's
 * deadline), `under_review`, `approved` (an amount, at most the one claimed, with a reason) or
 * `denied` (a reason code and text), `paid`, `closed`; `reopened` (from closed, with a reason) goes
 * back to review.
 */
export type ClaimStatus = 'submitted' | 'acknowledged' | 'under_review' | 'approved' | 'denied' | 'paid' | 'closed' | 'reopened';

/** The actions that move a claim, each an update of its workflow, and the status each leads to. */
export type ClaimAction = 'acknowledge' | 'start_review' | 'approve' | 'deny' | 'record_payment' | 'close' | 'reopen';

/** Where each action leads, and from which statuses it may be taken (the claim's state table). */
export const CLAIM_ACTIONS: Readonly<Record<ClaimAction, { from: readonly ClaimStatus[]; to: ClaimStatus }>> = {
  acknowledge: { from: ['submitted'], to: 'acknowledged' },
  start_review: { from: ['acknowledged', 'reopened'], to: 'under_review' },
  approve: { from: ['under_review'], to: 'approved' },
  deny: { from: ['under_review'], to: 'denied' },
  record_payment: { from: ['approved'], to: 'paid' },
  close: { from: ['paid', 'denied'], to: 'closed' },
  reopen: { from: ['closed'], to: 'reopened' },
};

/** Every action, in the order of the state table. */
export const CLAIM_ACTION_NAMES = Object.keys(CLAIM_ACTIONS) as ClaimAction[];

/** Whether `action` may be taken on a claim in `status`. */
export function claimActionAllowed(action: ClaimAction, status: ClaimStatus): boolean {
  return CLAIM_ACTIONS[action].from.includes(status);
}

/** An open claim is any claim not closed: at most one per covered unit and incident day. */
export function isOpenClaim(status: ClaimStatus): boolean {
  return status !== 'closed';
}

/**
 * Who made a change: an agency's API key, an adjuster (an API key of the insurer or MGA the
 * claim's product names), the test-mode helper (a test key), the buyer (a claim filed on their own
 * claim page), or the service itself (a deadline).
 */
export interface ClaimActor {
  type: 'api_key' | 'adjuster' | 'test_helper' | 'buyer' | 'system';
  /** The API key's id for `api_key`, `adjuster` and `test_helper`; null for `buyer` and `system`. */
  id: string | null;
}

/** What an action carries beside its name; which fields it needs is checked by the validator. */
export interface ClaimActionInput {
  action: ClaimAction;
  actor: ClaimActor;
  /** `approve`: the amount approved, in minor units, at most the amount claimed. */
  amountMinor?: number;
  /** `approve`, `close`, `reopen` (required), `deny` (the text): why. */
  reason?: string;
  /** `deny`: the reason code (lower snake case). */
  reasonCode?: string;
  /** `record_payment`: the payment's reference (the processor's id, or the test helper's). */
  reference?: string;
}

/** A comment on the claim (an agency's or the test helper's), recorded in its history. */
export interface ClaimCommentInput {
  actor: ClaimActor;
  text: string;
}

/** What the updates answer: the claim's status and change number after the change. */
export interface ClaimChange {
  claimId: number;
  status: ClaimStatus;
  seq: number;
}

/**
 * Input of `claimWorkflow` (id `claim-<claimId>`): the claim as stored when the run starts (a new
 * run after an earlier one completed starts from the stored status). Durations are inputs so
 * tests can make them short.
 */
export interface ClaimWorkflowInput {
  claimId: number;
  status: ClaimStatus;
  /** The last change number recorded (0 for a new claim). */
  seq: number;
  amountClaimedMinor: number;
  /** ISO 8601: the product's acknowledgement deadline of this claim. */
  acknowledgementDueAt: string;
  /** Whether the deadline's breach is already recorded. */
  acknowledgementOverdueRecorded: boolean;
  /**
   * Whether an approval is paid by the workflow itself: a transfer to the claimant's connected
   * account at the processor (the claim names one). False or absent: the payment is recorded by hand.
   */
  payout?: boolean;
  /** How long a closed claim's run stays open for a reopen before completing, in seconds (default 86 400; a reopen after starts a new run). */
  idleSeconds?: number;
  /** Longest wait between two tries of a database step, in seconds (default 300; no attempt limit). */
  retryMaxIntervalSeconds?: number;
}

/** `claim-<id>`: the business id of a claim's owner. */
export function claimWorkflowId(claimId: number): string {
  return `claim-${claimId}`;
}

/** Update names of the claim workflow. */
export const CLAIM_ACTION_UPDATE = 'claimAction';
export const CLAIM_COMMENT_UPDATE = 'claimComment';
export const CLAIM_STATUS_QUERY = 'claimStatus';

/** Limits the validators and the API share. */
export const CLAIM_LIMITS = {
  reason: 1000,
  comment: 4000,
  reasonCode: 64,
  reference: 255,
} as const;
