/**
 * Activities of subscription renewals (issue 5 "Subscription products"): each paid
 * `invoice.paid` of a billing cycle becomes a purchase of its own, made from the original
 * subscription purchase, whose certificates cover the next period.
 *
 * The next period's covered units come from the first period's (src/purchases/renewal-period.ts
 * `renewedUnits`): period n is the subscription's n-th month from its first covered day in the
 * units' time zone; a month covered every day renews every day of the next month, contiguous from
 * local midnight to local midnight; chosen days renew the same days of the month; a trip keeps its
 * local start and end times.
 * Idempotent: the renewal is keyed by the invoice (`purchases.payproc_invoice_id` is unique), so a
 * retried activity or a redelivered event returns the same purchase. The purchase is written by
 * its owner (`src/purchases/sale-repository.ts`), through the same insert as a quote.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { EventEmitter } from '../src/events/emitter';
import type { Db } from '../src/db/knex';
import { createSubscriptionRepository } from '../src/purchases/subscription-repository';
import { renewedUnits } from '../src/purchases/renewal-period';
import { insertHoldersFromAnswers } from '../src/certificate-holders/repository';
import type { RenewalInput } from '../workflows/contracts';

export function createRenewalActivities(deps: { db: Db; events: Pick<EventEmitter, 'renewed'> }) {
  const subscriptions = createSubscriptionRepository(deps.db);
  return {
    /**
     * Creates (or finds) the renewal purchase paid by `input.invoiceId`, through the purchases
     * owner's quote path: the original purchase's buyer, teammate, items and amounts, status
     * `paid`, with the covered units of its period (`renewedUnits`). Returns its id and period.
     * Errors: non-retryable PurchaseNotFound / NotASubscription.
     */
    async createRenewalPurchase(input: RenewalInput): Promise<{ purchaseId: number; period: number }> {
      const result = await subscriptions.createRenewal(
        input.purchaseId,
        { invoiceId: input.invoiceId, subscriptionId: input.subscriptionId, paymentIntentId: input.paymentIntentId },
        renewedUnits,
        insertHoldersFromAnswers,
      );
      if ('refused' in result) {
        if (result.refused === 'not_found')
          throw ApplicationFailure.nonRetryable(`purchase ${input.purchaseId} does not exist`, 'PurchaseNotFound');
        throw ApplicationFailure.nonRetryable(`purchase ${input.purchaseId} is not a subscription`, 'NotASubscription');
      }
      await deps.events.renewed(result.purchaseId);
      return result;
    },
  };
}

export type RenewalActivities = ReturnType<typeof createRenewalActivities>;
