/**
 * purchaseWorkflow (ARCHITECTURE §3 steps 3–7): one per purchase, id `purchase-<id>`.
 *
 * 1. The `createCheckout` update (sent with update-with-start by the quote route) creates the
 *    processor checkout session in an activity and returns it (spec §4.4 step 2).
 * 2. It waits for payment: `paymentEvent` signals from the webhook route, its own check of the
 *    session every `pollIntervalSeconds` (a lost webhook delays, never loses, a payment), and
 *    the deadline `sessionTtlSeconds` after which the session is expired at the processor.
 * 3. On payment it records the payment and runs the certificate child workflow; otherwise the
 *    purchase ends `expired`. Duplicate or out-of-order events change nothing: only the first
 *    decisive outcome counts, and `paid` always wins over a later `expired`.
 * Search attributes PurchaseId, PurchaseStatus, PaymentIntentId and BuyerEmail stay current;
 * the `status` query answers `PurchaseStatusView`. Deterministic code only.
 */
import {
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  executeChild,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { PurchaseActivities, SessionState } from '../activities/purchase';
import {
  CREATE_CHECKOUT_UPDATE,
  PAYMENT_EVENT_SIGNAL,
  STATUS_QUERY,
  certificatesWorkflowId,
  type CheckoutSession,
  type PaymentEvent,
  type PurchaseStatus,
  type PurchaseStatusView,
  type PurchaseWorkflowInput,
} from './contracts';
import { certificatesWorkflow } from './certificates';

export const createCheckoutUpdate = defineUpdate<CheckoutSession>(CREATE_CHECKOUT_UPDATE);
export const paymentEventSignal = defineSignal<[PaymentEvent]>(PAYMENT_EVENT_SIGNAL);
export const statusQuery = defineQuery<PurchaseStatusView>(STATUS_QUERY);

const processor = proxyActivities<PurchaseActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});
const local = proxyActivities<PurchaseActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '30 seconds' },
});

export async function purchaseWorkflow(input: PurchaseWorkflowInput): Promise<PurchaseStatusView> {
  let status: PurchaseStatus = 'quoted';
  let session: CheckoutSession | null = null;
  let sessionPromise: Promise<CheckoutSession> | null = null;
  type Outcome = { kind: 'paid'; paymentIntentId: string | null } | { kind: 'expired' };
  // Typed through `as` so the handlers' assignments are not narrowed away by control flow.
  let outcome = null as Outcome | null;

  const view = (): PurchaseStatusView => ({
    purchaseId: input.purchaseId,
    status,
    checkoutSessionId: session?.id ?? null,
    paymentIntentId: outcome?.kind === 'paid' ? outcome.paymentIntentId : (session?.payment_intent ?? null),
  });
  const publish = async (next: PurchaseStatus) => {
    status = next;
    const attrs: Record<string, string[]> = { PurchaseStatus: [next] };
    const pi = view().paymentIntentId;
    if (pi) attrs.PaymentIntentId = [pi];
    upsertSearchAttributes(attrs);
    await local.setPurchaseStatus({ purchaseId: input.purchaseId, status: next });
  };
  const decide = (s: SessionState | PaymentEvent) => {
    const kind = 'state' in s ? s.state : s.outcome;
    if (kind === 'paid') {
      const pi = 'state' in s ? (s.state === 'paid' ? s.paymentIntentId : null) : s.paymentIntentId;
      if (outcome?.kind !== 'paid') outcome = { kind: 'paid', paymentIntentId: pi ?? session?.payment_intent ?? null };
    } else if (kind === 'expired' && !outcome) {
      outcome = { kind: 'expired' };
    }
    // 'failed' (an async payment method failed) leaves the session open until it expires.
  };

  upsertSearchAttributes({ PurchaseId: [String(input.purchaseId)], BuyerEmail: [input.buyerEmail], PurchaseStatus: [status] });

  setHandler(
    createCheckoutUpdate,
    async () => {
      sessionPromise ??= processor.createCheckoutSession({ purchaseId: input.purchaseId, sessionTtlSeconds: input.sessionTtlSeconds });
      session = await sessionPromise;
      return session;
    },
    {
      // A paid or expired purchase hands out no session, even while its workflow is finishing.
      // Rejected updates leave no history, so this is safe for running and saved workflows.
      validator: () => {
        if (outcome) throw new Error(`purchase ${input.purchaseId} is no longer awaiting payment`);
      },
    },
  );
  setHandler(paymentEventSignal, (e) => decide(e));
  setHandler(statusQuery, view);

  // The update arrives with the start; a purchase nobody checks out ends after the TTL.
  if (!(await condition(() => session !== null, `${input.sessionTtlSeconds} seconds`))) {
    await publish('expired');
    return view();
  }
  await publish('awaiting_payment');

  const deadline = workflowInfo().startTime.getTime() + input.sessionTtlSeconds * 1000;
  while (!outcome) {
    const left = deadline - Date.now();
    if (left <= 0) {
      decide(await processor.expireCheckoutSession({ purchaseId: input.purchaseId }));
      break;
    }
    const waitMs = Math.min(left, input.pollIntervalSeconds * 1000);
    if (!(await condition(() => outcome !== null, waitMs))) {
      decide(await processor.getCheckoutState({ purchaseId: input.purchaseId }));
    }
  }

  const final = outcome;
  if (!final || final.kind === 'expired') {
    await publish('expired');
    return view();
  }
  await local.recordPayment({ purchaseId: input.purchaseId, paymentIntentId: final.paymentIntentId });
  await publish('paid');
  const issued = await executeChild(certificatesWorkflow, {
    workflowId: certificatesWorkflowId(input.purchaseId),
    args: [{ purchaseId: input.purchaseId }],
  });
  // The child's outcome (`issued`; `awaiting_certificates` for children that ran the old placeholder).
  status = issued.status;
  // Added after the first histories were recorded: keep the parent's search attribute current
  // too, so `PurchaseStatus='awaiting_certificates'` finds the purchase, not only its child.
  if (patched('purchase-status-after-certificates')) {
    upsertSearchAttributes({ PurchaseStatus: [status] });
  }
  return view();
}
