/**
 * Activities of subscription renewals (issue 5 "Subscription products"): each paid
 * `invoice.paid` of a billing cycle becomes a purchase of its own, made from the original
 * subscription purchase, whose certificates cover the next period.
 *
 * The next period's covered units are the original's shifted by `period` months in each unit's
 * own time zone (a day stays a local calendar day, a trip keeps its local start and end times),
 * so month 2 of a monthly event subscription covers the same days of the next month.
 * Idempotent: the renewal is keyed by the invoice (`purchases.payproc_invoice_id` is unique), so a
 * retried activity or a redelivered event returns the same purchase.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { DateTime } from 'luxon';
import type { Db } from '../src/db/knex';
import type { RenewalInput } from '../workflows/contracts';

function shifted(startsAt: Date, endsAt: Date, zone: string, kind: string, months: number) {
  const start = DateTime.fromJSDate(startsAt, { zone }).plus({ months });
  const end = DateTime.fromJSDate(endsAt, { zone }).plus({ months });
  const label = kind === 'day' ? start.toISODate()! : `${start.toFormat("yyyy-MM-dd'T'HH:mm")}/${end.toFormat("yyyy-MM-dd'T'HH:mm")}`;
  return { starts_at: start.toUTC().toJSDate(), ends_at: end.toUTC().toJSDate(), local_label: label };
}

export function createRenewalActivities(deps: { db: Db }) {
  const { db } = deps;
  return {
    /**
     * Creates (or finds) the renewal purchase paid by `input.invoiceId`: a copy of the original
     * purchase's buyer, teammate, items and amounts, status `paid`, with covered units shifted by
     * its period number in months. Returns its id and period.
     */
    async createRenewalPurchase(input: RenewalInput): Promise<{ purchaseId: number; period: number }> {
      return db.transaction(async (trx) => {
        const existing = await trx('purchases').where({ payproc_invoice_id: input.invoiceId }).first('id', 'renewal_period');
        if (existing) return { purchaseId: existing.id, period: existing.renewal_period };
        const original = await trx('purchases').where({ id: input.purchaseId }).forUpdate().first();
        if (!original) throw ApplicationFailure.nonRetryable(`purchase ${input.purchaseId} does not exist`, 'PurchaseNotFound');
        if (original.billing !== 'subscription') throw ApplicationFailure.nonRetryable(`purchase ${input.purchaseId} is not a subscription`, 'NotASubscription');
        const latest = await trx('purchases').where({ renewal_of_purchase_id: original.id }).max({ last: 'renewal_period' }).first();
        const period = Number(latest?.last ?? 0) + 1;
        const [renewal] = await trx('purchases')
          .insert({
            root_account_id: original.root_account_id,
            api_key_id: original.api_key_id,
            agent_id: original.agent_id,
            buyer_id: original.buyer_id,
            buyer_email: original.buyer_email,
            mode: original.mode,
            billing: 'subscription',
            status: 'paid',
            currency: original.currency,
            subtotal_minor: original.subtotal_minor,
            platform_fee_bps: original.platform_fee_bps,
            platform_fee_minor: original.platform_fee_minor,
            total_minor: original.total_minor,
            save_payment_method: false,
            paid_at: trx.fn.now(),
            payment_intent_id: input.paymentIntentId,
            payproc_invoice_id: input.invoiceId,
            payproc_subscription_id: original.payproc_subscription_id ?? input.subscriptionId,
            renewal_of_purchase_id: original.id,
            renewal_period: period,
          })
          .returning('id');
        const items = await trx('purchase_items').where({ purchase_id: original.id }).orderBy('position');
        for (const item of items) {
          const [copy] = await trx('purchase_items')
            .insert({
              purchase_id: renewal.id,
              product_line_id: item.product_line_id,
              position: item.position,
              is_trip_excess: item.is_trip_excess,
              unit_price_minor: item.unit_price_minor,
              units: item.units,
              price_factor: item.price_factor,
              amount_minor: item.amount_minor,
              answers: JSON.stringify(item.answers),
              named_insured: item.named_insured === null ? null : JSON.stringify(item.named_insured),
              certificate_holder: item.certificate_holder === null ? null : JSON.stringify(item.certificate_holder),
            })
            .returning('id');
          const units = await trx('covered_units').where({ purchase_item_id: item.id }).orderBy('unit_index');
          if (units.length > 0) {
            await trx('covered_units').insert(
              units.map((u) => ({
                purchase_id: renewal.id,
                purchase_item_id: copy.id,
                unit_index: u.unit_index,
                kind: u.kind,
                time_zone: u.time_zone,
                ...shifted(u.starts_at, u.ends_at, u.time_zone, u.kind, period),
              })),
            );
          }
        }
        return { purchaseId: renewal.id as number, period };
      });
    },
  };
}

export type RenewalActivities = ReturnType<typeof createRenewalActivities>;
