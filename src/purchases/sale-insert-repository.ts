/**
 * The sale's one insert (part of the sale's repository, ./sale-repository, the only writer of
 * `purchases`, `purchase_items` and `covered_units`): a new purchase with its items, their
 * cancellation terms as the products have them now, their answered certificate holders and their
 * covered units, in the caller's transaction. A quote's `create` and a subscription's renewal
 * (./subscription-repository) both go through it. Amounts are integer minor units.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Address } from '../certificates/repository';
import { cancellationTermsFromRow, DEFAULT_CANCELLATION_TERMS, type CancellationTerms } from '../products/cancellation-terms';
import type { NewPurchase, RenewalFields, WriteAnsweredHolders } from './purchase-record';
import type { PurchaseStatus } from '../../workflows/contracts';
import { commissionOf } from './commission';

/** A new page token: 32 random bytes, base64url (43 characters). */
export const newReturnToken = (): string => randomBytes(32).toString('base64url');

/** The cancellation terms each product line has now (read from the products domain's table; defaults without a row). */
async function cancellationTermsOf(trx: Knex.Transaction, productLineIds: number[]): Promise<Map<number, CancellationTerms>> {
  const rows = productLineIds.length ? await trx('product_cancellation_terms').whereIn('product_line_id', productLineIds) : [];
  return new Map(rows.map((r) => [Number(r.product_line_id), cancellationTermsFromRow(r)]));
}

/** An item's commission columns from its product's rate (all null without one). */
const commissionColumns = (rate: { partyRootAccountId: number; rateBps: number } | undefined, amountMinor: number) => ({
  commission_party_root_account_id: rate?.partyRootAccountId ?? null,
  commission_bps: rate?.rateBps ?? null,
  commission_minor: rate ? commissionOf(amountMinor, rate.rateBps) : null,
});

/**
 * The commission rate each product line has now (read from the products domain's
 * `product_commission_rates`): the newest rate already started of its MGA when it names one and
 * it has a rate, else of its insurer; absent when neither has one. Basis points.
 */
async function commissionRatesOf(
  trx: Knex.Transaction,
  productLineIds: number[],
): Promise<Map<number, { partyRootAccountId: number; rateBps: number }>> {
  if (!productLineIds.length) return new Map();
  const { rows } = await trx.raw(
    `select distinct on (r.product_line_id) r.product_line_id, r.party_root_account_id, r.rate_bps
       from product_commission_rates r join product_lines pl on pl.id = r.product_line_id
      where r.product_line_id = any(?) and r.effective_from <= now()
        and r.party_root_account_id in (pl.mga_root_account_id, pl.insurer_root_account_id)
      order by r.product_line_id, (r.party_root_account_id = pl.mga_root_account_id) desc nulls last, r.effective_from desc, r.id desc`,
    [productLineIds],
  );
  return new Map(
    (rows as Array<Record<string, unknown>>).map((r) => [
      Number(r.product_line_id),
      { partyRootAccountId: Number(r.party_root_account_id), rateBps: Number(r.rate_bps) },
    ]),
  );
}

/**
 * Inserts a purchase in `status` with its items, their certificate holders (from the items'
 * answers, written by `writeHolders`: the holders' own repository, handed in by the caller) and
 * covered units, in the caller's transaction `trx`, and returns its id. Each item
 * keeps the cancellation terms its product has now (the defaults without a row); a bundle's items
 * all take its primary product's (the first item of the bundle). A new page token
 * (`return_token`) is drawn. `renewal` (null for a quote) makes it a renewal paid now by that
 * invoice. The one insert of the sale's tables: `create` and a subscription's `createRenewal`
 * (./subscription-repository) both go through it. Each item also keeps the commission rate its
 * product has now and the commission it earns (./commission.ts; none without a rate). Amounts are
 * minor units as given.
 */
export async function insertPurchase(
  trx: Knex.Transaction,
  p: NewPurchase,
  status: PurchaseStatus,
  renewal: RenewalFields | null,
  writeHolders: WriteAnsweredHolders,
): Promise<number> {
  const [purchase] = await trx('purchases')
    .insert({
      root_account_id: p.rootAccountId,
      api_key_id: p.apiKeyId,
      agent_id: p.agentId,
      buyer_id: p.buyerId,
      buyer_email: p.buyerEmail,
      save_payment_method: p.savePaymentMethod,
      billing: p.billing ?? 'one_time',
      mode: p.mode,
      status,
      currency: p.currency,
      subtotal_minor: p.subtotalMinor,
      platform_fee_bps: p.platformFeeBps,
      platform_fee_minor: p.platformFeeMinor,
      tax_minor: p.taxMinor ?? 0,
      total_minor: p.totalMinor,
      bundle_id: p.bundle?.id ?? null,
      bundle_name: p.bundle?.name ?? null,
      metadata: JSON.stringify(p.metadata ?? {}),
      return_token: newReturnToken(),
      ...(renewal
        ? {
            paid_at: trx.fn.now(),
            payment_intent_id: renewal.paymentIntentId,
            payproc_invoice_id: renewal.invoiceId,
            payproc_subscription_id: renewal.subscriptionId,
            renewal_of_purchase_id: renewal.renewalOfPurchaseId,
            renewal_period: renewal.period,
          }
        : {}),
    })
    .returning('id');
  // The cancellation terms in force now stay with each item (a later change never reprices it). A
  // bundle's products all take its primary product's terms (the first item of the bundle): one
  // policy sold together is cancelled on one set of terms.
  const terms = await cancellationTermsOf(trx, [...new Set(p.items.map((i) => i.productLineId))]);
  const bundlePrimary = p.items.find((i) => i.inBundle)?.productLineId;
  const termsOf = (item: NewPurchase['items'][number]) =>
    terms.get(item.inBundle && bundlePrimary !== undefined ? bundlePrimary : item.productLineId) ?? DEFAULT_CANCELLATION_TERMS;
  // The commission rate in force now stays with each item too: a later rate never reprices it.
  const rates = await commissionRatesOf(trx, [...new Set(p.items.map((i) => i.productLineId))]);
  for (const [position, item] of p.items.entries()) {
    const [row] = await trx('purchase_items')
      .insert({
        purchase_id: purchase.id,
        product_line_id: item.productLineId,
        in_bundle: item.inBundle ?? false,
        position,
        is_trip_excess: item.isTripExcess,
        unit_price_minor: item.unitPriceMinor,
        units: item.units.length,
        price_factor: item.priceFactor,
        amount_minor: item.amountMinor,
        answers: JSON.stringify(item.answers),
        named_insured: item.namedInsured === null ? null : JSON.stringify(item.namedInsured),
        certificate_holder: item.certificateHolder === null ? null : JSON.stringify(item.certificateHolder),
        cancellation_terms: JSON.stringify(termsOf(item)),
        ...commissionColumns(rates.get(item.productLineId), item.amountMinor),
        tax_minor: item.taxMinor ?? 0,
        tax_lines: item.taxLines ? JSON.stringify(item.taxLines) : null,
      })
      .returning('id');
    await writeHolders(trx, purchase.id, [
      { purchaseItemId: row.id, holder: (item.certificateHolder ?? null) as { name: string; address: Address } | null },
    ]);
    if (item.units.length > 0) {
      await trx('covered_units').insert(
        item.units.map((u) => ({
          purchase_id: purchase.id,
          purchase_item_id: row.id,
          unit_index: u.index,
          kind: u.kind,
          starts_at: u.startsAt,
          ends_at: u.endsAt,
          time_zone: u.timeZone,
          local_label: u.localLabel,
        })),
      );
    }
  }
  return purchase.id as number;
}
