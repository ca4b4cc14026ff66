/**
 * The `claim.*` events (issue 51): one per status a claim reaches, built from the claim as stored
 * and the history entry of the change (`ClaimEventRecord`). The event id is derived from the type,
 * the claim and the change number, so the workflow activity that publishes it after a retry
 * publishes the same event, once. The object leaves out the claimant's contact data and the
 * description (events leave the service): read the claim with `GET /api/v1/claims/{id}` for them.
 * Amounts are integer minor units of `currency`; instants ISO 8601 UTC.
 */
import type { ClaimEventRecord, ClaimRecord } from '../claims/repository';
import { claimFacts } from '../claims/claim-object';
import type { StoredEvent } from './repository';
import { agencyEventId } from './payloads';
import { CLAIM_EVENT_TYPES, type AgencyEvent, type ClaimEventType } from './types';

/** The event type announcing that a claim reached `status`, or null when no event says so. */
export function claimEventTypeOf(status: string | null): ClaimEventType | null {
  const type = `claim.${status}`;
  return (CLAIM_EVENT_TYPES as readonly string[]).includes(type) ? (type as ClaimEventType) : null;
}

/** The `claim` object of the events: claim `c` as it stands after `change`, and that change. */
export function eventClaimObject(c: ClaimRecord, change: ClaimEventRecord) {
  return {
    ...claimFacts(c),
    change: {
      seq: change.seq,
      from_status: change.fromStatus,
      to_status: change.toStatus,
      actor: { type: change.actor.type, id: change.actor.id },
      note: change.note,
      created_at: change.createdAt.toISOString(),
    },
    created_at: c.createdAt.toISOString(),
  };
}

/**
 * The event of `change` (a status the claim reached) of claim `c`, or null for a change that has
 * none (a comment, a missed deadline, a refused payout). `c` is read after the change, so its
 * status is the change's or a later one; the object carries the claim as read and the change.
 */
export function claimChangeEvent(c: ClaimRecord, change: ClaimEventRecord): StoredEvent | null {
  const type = claimEventTypeOf(change.toStatus);
  if (!type) return null;
  const event: AgencyEvent = {
    id: agencyEventId(type, c.id, `change-${change.seq}`),
    object: 'event',
    type,
    created: Math.floor(change.createdAt.getTime() / 1000),
    livemode: c.mode === 'live',
    api_version: 'v1',
    data: { object: eventClaimObject(c, change) },
  };
  return { event, rootAccountId: c.rootAccountId, mode: c.mode, purchaseId: c.purchaseId };
}
