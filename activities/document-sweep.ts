/**
 * The document sweep's activity (issue 52, item 2): `sweepStoredDocuments` checks and repairs one
 * page of stored certificates and zips (src/certificates/document-sweep.ts), heartbeating the count
 * checked, and returns the page's report with the next cursor. Repairs run the purchase's
 * certificate issuance again through its policy workflow and wait for it, so a page may take
 * minutes when it found something; a retried page checks its documents again (already repaired
 * ones then match).
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { attemptStarted, heartbeat, withHeartbeat } from './heartbeat';
import type { Db } from '../src/db/knex';
import type { ObjectStore } from '../src/storage/object-store';
import { createPurchaseWorkflows, type PurchaseWorkflows } from '../src/purchases/workflow-client';
import type { Config } from '../src/config';
import { createServiceDocumentSweep, type SweepCursor, type SweepOptions, type SweepPage } from '../src/certificates/document-sweep';

export function createDocumentSweepActivities(deps: {
  db: Db;
  store: ObjectStore;
  client: Client;
  workflows: Pick<PurchaseWorkflows, 'resumePurchase' | 'reissueCertificates' | 'retryFailedCancellations'>;
}) {
  return {
    /** One page of the sweep after `cursor` (see `DocumentSweep.sweepPage`). */
    async sweepStoredDocuments(input: { cursor: SweepCursor } & SweepOptions): Promise<SweepPage> {
      const ctx = Context.current();
      attemptStarted(ctx);
      const sweep = createServiceDocumentSweep({ ...deps, progress: (done) => heartbeat(ctx, { done }) });
      const { cursor, ...options } = input;
      // Heartbeats also while a repair's issuance run is awaited (no count moves then).
      return withHeartbeat(() => sweep.sweepPage(cursor, options));
    },
  };
}

/**
 * The sweep's activities over a worker's own clients (its database, store and Temporal client), its
 * repairs handed to issuance on `taskQueue` (default TEMPORAL_TASK_QUEUE). The worker and the test
 * worker add them beside `createActivities(deps)`.
 */
export function documentSweepActivitiesFor(
  config: Config,
  deps: { db: Db; store: ObjectStore; temporal: { client: Client } },
  taskQueue = config.TEMPORAL_TASK_QUEUE,
) {
  return createDocumentSweepActivities({
    db: deps.db,
    store: deps.store,
    client: deps.temporal.client,
    workflows: createPurchaseWorkflows({
      client: deps.temporal.client,
      taskQueue,
      sessionTtlSeconds: config.CHECKOUT_SESSION_TTL_SECONDS,
      pollIntervalSeconds: config.CHECKOUT_POLL_INTERVAL_SECONDS,
      retryMaxIntervalSeconds: config.PURCHASE_RETRY_MAX_INTERVAL_SECONDS,
      buyerEmailHashKey: config.BUYER_EMAIL_HASH_KEY,
    }),
  });
}

export type DocumentSweepActivities = ReturnType<typeof createDocumentSweepActivities>;
