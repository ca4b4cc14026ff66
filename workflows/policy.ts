/**
 * policyWorkflow: the one ordered path for changes to a purchase after its sale (id
 * `policy-<purchaseId>`; today: cancellations). The API starts it with update-with-start and the
 * `cancel` update; updates are handled one at a time, so two changes of one purchase never
 * interleave. Each:
 * 1. `acceptCancellation` checks the quote against the purchase now and takes its units; the
 *    caller gets the accepted cancellation (or the refusal) at once. While the purchase's
 *    certificates are still being issued the update waits for them (every 5 s).
 * 2. Then, after the update has answered: the refund is created at the processor (idempotency key
 *    of the cancellation's own; an outage retries without an attempt limit), its outcome awaited
 *    (asked every `refundPollSeconds`), and only then are the units cancelled and their
 *    certificates voided (`completeCancellation`). A refund the processor refuses for good leaves
 *    the cancellation `refund_failed`.
 * An operator's `retryFailedCancellations` update (`npm run ops -- retry-cancellation`) queues the
 * refused and stalled ones again (every step is idempotent, so one in progress is not harmed). The workflow completes after `idleSeconds` with nothing to do; the next
 * change starts a new run.
 */
import { ApplicationFailure, condition, defineQuery, defineUpdate, proxyActivities, setHandler, sleep, upsertSearchAttributes, allHandlersFinished } from '@temporalio/workflow';
import type { PolicyActivities } from '../activities/policy';
import { CANCEL_UPDATE, RETRY_CANCELLATIONS_UPDATE, STATUS_QUERY, type CancellationAccepted, type PolicyWorkflowInput } from './contracts';

export const cancelUpdate = defineUpdate<CancellationAccepted, [{ quoteId: string }]>(CANCEL_UPDATE);
/** An operator's retry of the cancellations not completed (refund refused, or stalled): answers the ids queued again. */
export const retryFailedCancellationsUpdate = defineUpdate<number[], []>(RETRY_CANCELLATIONS_UPDATE);

/** What the `status` query answers: the cancellations this run handled and the one in progress. */
export interface PolicyStatusView {
  purchaseId: number;
  cancellations: Array<{ cancellationId: number; phase: 'accepted' | 'refunding' | 'completed' | 'refund_failed' }>;
}
export const policyStatusQuery = defineQuery<PolicyStatusView>(STATUS_QUERY);

export async function policyWorkflow(input: PolicyWorkflowInput): Promise<PolicyStatusView> {
  const retry = { maximumInterval: `${input.retryMaxIntervalSeconds ?? 300} seconds` };
  const db = proxyActivities<PolicyActivities>({ startToCloseTimeout: '30 seconds', retry });
  const processor = proxyActivities<PolicyActivities>({ startToCloseTimeout: '60 seconds', retry });
  const view: PolicyStatusView = { purchaseId: input.purchaseId, cancellations: [] };
  const pending: number[] = [];
  let chain: Promise<unknown> = Promise.resolve();
  upsertSearchAttributes({ PurchaseId: [String(input.purchaseId)] });
  setHandler(policyStatusQuery, () => ({ purchaseId: view.purchaseId, cancellations: view.cancellations.map((c) => ({ ...c })) }));

  setHandler(
    cancelUpdate,
    (u) => {
      // One change at a time: each update runs after the previous one has answered.
      const run = chain.then(async () => {
        for (;;) {
          const r = await db.acceptCancellation({ purchaseId: input.purchaseId, quoteId: u.quoteId });
          if (r.kind === 'accepted') {
            const known = view.cancellations.some((c) => c.cancellationId === r.cancellation.cancellationId);
            if (!known && r.cancellation.status !== 'completed' && r.cancellation.status !== 'refund_failed') {
              view.cancellations.push({ cancellationId: r.cancellation.cancellationId, phase: 'accepted' });
              pending.push(r.cancellation.cancellationId);
            }
            return r.cancellation;
          }
          await sleep('5 seconds'); // certificates still being issued: a cancel waits for them
        }
      });
      chain = run.catch(() => undefined);
      return run;
    },
    {
      validator: (u) => {
        if (typeof u?.quoteId !== 'string' || !/^cq_[0-9a-f]{24}$/.test(u.quoteId)) throw ApplicationFailure.nonRetryable('quote_id must be a cancellation quote id (cq_…)', 'VALIDATION_ERROR');
      },
    },
  );

  setHandler(retryFailedCancellationsUpdate, () => {
    const run = chain.then(async () => {
      const ids = await db.reopenUnfinishedCancellations({ purchaseId: input.purchaseId });
      for (const id of ids) {
        const entry = view.cancellations.find((c) => c.cancellationId === id);
        if (entry) entry.phase = 'accepted';
        else view.cancellations.push({ cancellationId: id, phase: 'accepted' });
        if (!pending.includes(id)) pending.push(id);
      }
      return ids;
    });
    chain = run.catch(() => undefined);
    return run;
  });

  for (;;) {
    const busy = await condition(() => pending.length > 0, `${input.idleSeconds ?? 600} seconds`);
    if (!busy) {
      // Idle: finish once no update is still being handled (one waiting for issuance may yet accept a cancellation).
      await condition(allHandlersFinished);
      if (pending.length === 0) break;
      continue;
    }
    const cancellationId = pending.shift()!;
    const entry = view.cancellations.find((c) => c.cancellationId === cancellationId)!;
    entry.phase = 'refunding';
    try {
      await processor.createCancellationRefund({ cancellationId });
      for (;;) {
        const state = await processor.cancellationRefundStatus({ cancellationId });
        if (state === 'succeeded') break;
        if (state === 'failed') throw ApplicationFailure.nonRetryable('the processor reports the refund failed', 'REFUND_FAILED');
        await sleep(`${input.refundPollSeconds ?? 30} seconds`);
      }
    } catch (err) {
      const reason = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      await db.failCancellation({ cancellationId, reason });
      entry.phase = 'refund_failed';
      continue;
    }
    await db.completeCancellation({ cancellationId });
    entry.phase = 'completed';
  }
  return view;
}
