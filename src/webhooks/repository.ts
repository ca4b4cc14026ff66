/**
 * The one writer of `payproc_events`: every signed processor event the webhook accepted, stored
 * once by its id (the processor's `evt_…`) with the raw body and the purchase it belongs to, so a
 * redelivery is recognised and an operator can re-read what arrived.
 */
import type { Db } from '../db/knex';

export function createPayprocEventsRepository(db: Db) {
  return {
    /** Stores event `e` unless an event with its id is stored; true when this call stored it. */
    async recordOnce(e: { id: string; type: string; livemode: boolean; purchaseId: number | null; rawBody: string }): Promise<boolean> {
      const inserted = await db('payproc_events')
        .insert({ id: e.id, type: e.type, livemode: e.livemode, purchase_id: e.purchaseId, payload: e.rawBody })
        .onConflict('id')
        .ignore()
        .returning('id');
      return inserted.length > 0;
    },
  };
}

export type PayprocEventsRepository = ReturnType<typeof createPayprocEventsRepository>;
