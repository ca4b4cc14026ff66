/**
 * Activities of subscription renewals (issue 5 "Subscription products"): each paid
 * `invoice.paid` of a billing cycle becomes a purchase of its own, made from the original
 * subscription purchase, whose certificates cover the next period.
 *
 * The next period's covered units are the original's shifted by `period` months in each unit's
 * own time zone (a day stays a local calendar day, a trip keeps its local start and end times),
 * so month 2 of a monthly event subscription covers the same days of the next month.
 * Idempotent: the renewal is keyed by the invoice (`purchases.payproc_invoice_id` is unique), so a
 * retried activity or a redelivered event returns the same purchase. The purchase is written by
 * its owner (`src/purchases/sale-repository.ts`), through the same insert as a quote.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { DateTime } from 'luxon';
import type { EventEmitter } from '../src/events/emitter';
import type { Db } from '../src/db/knex';
import { createSubscriptionRepository } from '../src/purchases/subscription-repository';
import { insertHoldersFromAnswers } from '../src/certificate-holders/repository';
import type { RenewalInput } from '../workflows/contracts';

function shifted(startsAt: Date, endsAt: Date, zone: string, kind: string, months: number) {
  const start = DateTime.fromJSDate(startsAt, { zone }).plus({ months });
  const end = DateTime.fromJSDate(endsAt, { zone }).plus({ months });
  const label = kind === 'day' ? start.toISODate()! : `${start.toFormat("yyyy-MM-dd'T'HH:mm")}/${end.toFormat("yyyy-MM-dd'T'HH:mm")}`;
  return { startsAt: start.toUTC().toJSDate(), endsAt: end.toUTC().toJSDate(), localLabel: label };
}

export function createRenewalActivities(deps: { db: Db; events: Pick<EventEmitter, 'renewed'> }) {
  const subscriptions = createSubscriptionRepository(deps.db);
  return {
    /**
     * Creates (or finds) the renewal purchase paid by `input.invoiceId`, through the purchases
     * owner's quote path: the original purchase's buyer, teammate, items and amounts, status
     * `paid`, with covered units shifted by its period number in months. Returns its id and period.
     * Errors: non-retryable PurchaseNotFound / NotASubscription.
     */
    async createRenewalPurchase(input: RenewalInput): Promise<{ purchaseId: number; period: number }> {
      const result = await subscriptions.createRenewal(
        input.purchaseId,
        { invoiceId: input.invoiceId, subscriptionId: input.subscriptionId, paymentIntentId: input.paymentIntentId },
        (unit, period) => ({ ...unit, ...shifted(unit.startsAt, unit.endsAt, unit.timeZone, unit.kind, period) }),
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
