/**
 * Activities of payment disputes (chargebacks): the dispute workflow records the processor's
 * dispute against its purchase (`src/disputes/repository.ts`, the table's one writer) and tells
 * the agency when it opens and when it closes (`dispute.opened`, `dispute.closed`; each once per
 * dispute, however often the step is retried). Amounts in integer minor units.
 */
import type { EventEmitter } from '../src/events/emitter';
import type { Db } from '../src/db/knex';
import { createDisputesRepository } from '../src/disputes/repository';
import type { DisputeInput } from '../workflows/contracts';

export function createDisputeActivities(deps: { db: Db; events: Pick<EventEmitter, 'disputeOpened' | 'disputeClosed'> }) {
  const disputes = createDisputesRepository(deps.db);
  return {
    /** Records the event's dispute; publishes `dispute.opened` / `dispute.closed` when it opened or closed (the events' ids make a retry publish nothing new). */
    async recordDispute(input: DisputeInput): Promise<{ status: string; opened: boolean; closed: boolean }> {
      const d = input.dispute;
      const result = await disputes.record(input.purchaseId, { ...d, openedAt: new Date(d.openedAt) }, new Date(input.eventCreatedAt));
      // Published from the stored row whatever this call changed: a retry after a lost answer publishes the same event ids again.
      await deps.events.disputeOpened(input.purchaseId, result.dispute);
      if (result.dispute.closedAt) await deps.events.disputeClosed(input.purchaseId, result.dispute);
      return { status: result.dispute.status, opened: result.opened, closed: result.closed };
    },
  };
}

export type DisputeActivities = ReturnType<typeof createDisputeActivities>;
