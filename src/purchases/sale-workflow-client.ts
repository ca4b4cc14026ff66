/**
 * The sale's workflow client: starts `purchase-<id>` with update-with-start (conflict policy
 * USE_EXISTING, so a repeated call attaches to the running workflow instead of buying twice) and
 * returns the checkout session the `createCheckout` update produced; a purchase whose workflow has
 * closed (paid, expired) is never started again for a new checkout (reuse policy REJECT_DUPLICATE):
 * 400 INVALID_REQUEST. `signalPayment` relays a processor event (`false` when no run is open);
 * `resumePurchase` starts the run that recovers a purchase whose run closed; `chargeSavedCard`
 * charges a saved card through the open run (an operator's reissue goes to the owner: ./owner-workflow-client.ts).
 * Errors: the processor's failures as their AppError; a workflow that does not answer within
 * `timeoutMs` (default 30 000 ms) → 503 CONNECTION_ERROR.
 */
import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { purchaseWorkflow } from '../../workflows/purchase';
import { mapProcessorError } from '../payproc/errors';
import { AppError } from '../shared/errors';
import {
  CHARGE_SAVED_CARD_UPDATE,
  CREATE_CHECKOUT_UPDATE,
  PAYMENT_EVENT_SIGNAL,
  purchaseWorkflowId,
  type CheckoutSession,
  type PaymentEvent,
  type PurchaseWorkflowInput,
  type SavedCardChargeResult,
} from '../../workflows/contracts';
import { clientSettings, processorType, withDeadline, type PurchaseStartFacts, type WorkflowClientDeps } from './workflow-starts';

export function createSaleWorkflowClient(deps: WorkflowClientDeps) {
  const { timeoutMs, startAttributes } = clientSettings(deps);
  async function signalPayment(purchaseId: number, event: PaymentEvent): Promise<boolean> {
    try {
      await deps.client.workflow.getHandle(purchaseWorkflowId(purchaseId)).signal(PAYMENT_EVENT_SIGNAL, event);
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  return {
    async startCheckout(purchase: PurchaseStartFacts): Promise<CheckoutSession> {
      const input = { purchaseId: purchase.id };
      const args: PurchaseWorkflowInput = {
        purchaseId: purchase.id,
        sessionTtlSeconds: deps.sessionTtlSeconds,
        pollIntervalSeconds: deps.pollIntervalSeconds,
        ...(deps.retryMaxIntervalSeconds ? { retryMaxIntervalSeconds: deps.retryMaxIntervalSeconds } : {}),
      };
      const start = new WithStartWorkflowOperation(purchaseWorkflow, {
        workflowId: purchaseWorkflowId(input.purchaseId),
        taskQueue: deps.taskQueue,
        args: [args],
        ...startAttributes(purchase),
        workflowIdConflictPolicy: 'USE_EXISTING',
        // A closed purchase-<id> must not come back as a new run waiting for a second payment.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
      try {
        return await withDeadline(
          deps.client.workflow.executeUpdateWithStart<typeof purchaseWorkflow, CheckoutSession, []>(CREATE_CHECKOUT_UPDATE, {
            startWorkflowOperation: start,
          }),
          timeoutMs,
          'The purchase workflow did not answer in time; retry with backoff',
        );
      } catch (err) {
        if (err instanceof AppError) throw err;
        if (err instanceof WorkflowExecutionAlreadyStartedError) {
          throw new AppError('INVALID_REQUEST', `Purchase ${input.purchaseId} is no longer awaiting payment`, { cause: err });
        }
        const type = processorType(err);
        if (type) throw mapProcessorError(Object.assign(new Error('checkout session could not be created'), { type }));
        // The workflow's validator refused: the purchase was paid or expired meanwhile.
        if (err instanceof WorkflowUpdateFailedError) {
          throw new AppError('INVALID_REQUEST', `Purchase ${input.purchaseId} is no longer awaiting payment`, { cause: err });
        }
        throw err;
      }
    },

    /**
     * Sends the `chargeSavedCard` update to the running purchase workflow, which charges the
     * purchase to the saved payment method at most once and returns what happened; a repeat
     * attaches to the charge in flight. Errors: INVALID_REQUEST (400) when the purchase is no
     * longer awaiting payment (paid, expired, failed, closed); CONNECTION_ERROR (503) when the
     * workflow does not answer within `timeoutMs` (the charge goes on; call again to learn it).
     */
    async chargeSavedCard(purchaseId: number, paymentMethodId: string): Promise<SavedCardChargeResult> {
      try {
        const handle = deps.client.workflow.getHandle(purchaseWorkflowId(purchaseId));
        return await withDeadline(
          handle.executeUpdate<SavedCardChargeResult, [{ paymentMethodId: string }]>(CHARGE_SAVED_CARD_UPDATE, {
            args: [{ paymentMethodId }],
          }),
          timeoutMs,
          'The charge did not finish in time; call again with the same payment method to learn its outcome (it never charges twice)',
        );
      } catch (err) {
        if (err instanceof AppError) throw err;
        if (err instanceof WorkflowNotFoundError)
          throw new AppError('INVALID_REQUEST', `Purchase ${purchaseId} is no longer awaiting payment`, { cause: err });
        if (err instanceof WorkflowUpdateFailedError) {
          const reason = (err.cause as Error | undefined)?.message ?? 'it is no longer awaiting payment';
          throw new AppError('INVALID_REQUEST', `Purchase ${purchaseId} cannot be charged: ${reason.replace(/^purchase \d+ /, '')}`, {
            cause: err,
          });
        }
        throw err;
      }
    },

    /**
     * Starts a new run of `purchase-<id>` that resumes a purchase whose earlier run closed
     * (failed, terminated, or ended before a late payment): it takes the stored checkout session
     * and, with `event`, records that payment and issues the certificates (every step
     * idempotent); without one it asks the processor. While a run is open, `event` is signalled
     * to it instead and nothing new starts. Returns `started` or `running`.
     */
    async resumePurchase(input: { purchase: PurchaseStartFacts; event?: PaymentEvent }): Promise<'started' | 'running'> {
      const purchaseId = input.purchase.id;
      const options = {
        workflowId: purchaseWorkflowId(purchaseId),
        taskQueue: deps.taskQueue,
        ...startAttributes(input.purchase),
        args: [
          {
            purchaseId,
            sessionTtlSeconds: deps.sessionTtlSeconds,
            pollIntervalSeconds: deps.pollIntervalSeconds,
            ...(deps.retryMaxIntervalSeconds ? { retryMaxIntervalSeconds: deps.retryMaxIntervalSeconds } : {}),
            resume: true,
          } satisfies PurchaseWorkflowInput,
        ] as [PurchaseWorkflowInput],
        workflowIdReusePolicy: 'ALLOW_DUPLICATE' as const,
      };
      if (input.event) {
        // Signals the open run if there is one, else starts the resuming run with the signal.
        const running = await signalPayment(purchaseId, input.event);
        if (running) return 'running';
        await deps.client.workflow.signalWithStart(purchaseWorkflow, {
          ...options,
          signal: PAYMENT_EVENT_SIGNAL,
          signalArgs: [input.event],
        });
        return 'started';
      }
      try {
        await deps.client.workflow.start(purchaseWorkflow, options);
        return 'started';
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) return 'running';
        throw err;
      }
    },

    signalPayment,
  };
}
