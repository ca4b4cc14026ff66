/**
 * A subscription's repository: its renewals (one purchase per paid invoice, each a copy of the
 * first purchase with its units shifted into the period) and the reads of its periods. A
 * subscription lives on its first purchase's row and its renewals' rows: every write of those rows
 * is the sale's (./sale-repository), including the renewal's insert (`insertPurchase`, ./sale-insert-repository, which
 * `createRenewal` calls in its own transaction), its end (`recordSubscriptionEnd`) and the
 * processor subscription it is billed by (`recordSubscription`). Amounts are minor units.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { pageWithTotal } from '../db/paging';
import { insertPurchase } from './sale-insert-repository';
import {
  toPurchaseRecord,
  type NewCoveredUnit,
  type PurchaseRecord,
  type PurchaseScope,
  type RenewalFields,
  type WriteAnsweredHolders,
} from './purchase-record';

/** An item of a purchase with its covered units (what a renewal copies). */
interface StoredItem {
  id: number;
  productLineId: number;
  inBundle: boolean;
  isTripExcess: boolean;
  unitPriceMinor: number;
  priceFactor: number;
  amountMinor: number;
  answers: Record<string, unknown>;
  namedInsured: unknown;
  certificateHolder: unknown;
  units: NewCoveredUnit[];
}

/** The purchase's items in position order, each with its covered units in unit order (what a renewal copies). */
async function items(trx: Knex.Transaction | Db, purchaseId: number): Promise<StoredItem[]> {
  const rows = await trx('purchase_items').where({ purchase_id: purchaseId }).orderBy('position');
  const units = await trx('covered_units').where({ purchase_id: purchaseId }).orderBy(['purchase_item_id', 'unit_index']);
  const unitsOf = Map.groupBy(units, (u) => u.purchase_item_id as number);
  return rows.map((i) => ({
    id: i.id,
    productLineId: i.product_line_id,
    inBundle: i.in_bundle,
    isTripExcess: i.is_trip_excess,
    unitPriceMinor: Number(i.unit_price_minor),
    priceFactor: Number(i.price_factor),
    amountMinor: Number(i.amount_minor),
    answers: i.answers,
    namedInsured: i.named_insured,
    certificateHolder: i.certificate_holder,
    units: (unitsOf.get(i.id) ?? []).map((u) => ({
      index: u.unit_index,
      kind: u.kind,
      startsAt: u.starts_at,
      endsAt: u.ends_at,
      timeZone: u.time_zone,
      localLabel: u.local_label,
    })),
  }));
}

/** A subscription's repository over `db`: `createRenewal` and the reads of subscriptions and their periods. */
export function createSubscriptionRepository(db: Db | Knex.Transaction) {
  return {
    /**
     * Creates (or finds) the renewal purchase paid by `renewal.invoiceId`: the original's buyer,
     * teammate, items and amounts through the same insert as a quote, status `paid`, its period
     * the next after the latest renewal, and each item's covered units from `renew(units, period)`
     * (the item's first-period units; ./renewal-period's `renewedUnits`). Keyed by
     * the invoice (`purchases.payproc_invoice_id` is unique), so a retry returns the same row.
     * Returns `{ refused }` when the original does not exist or is not a subscription. The rows
     * are written by the sale's `insertPurchase` (./sale-insert-repository) in this transaction, the
     * original's row locked meanwhile; the items' certificate holders through `writeHolders` (the
     * holders' repository's insert); this module writes no table itself.
     */
    async createRenewal(
      originalId: number,
      renewal: Omit<RenewalFields, 'renewalOfPurchaseId' | 'period'>,
      renew: (firstPeriodUnits: NewCoveredUnit[], period: number) => NewCoveredUnit[],
      writeHolders: WriteAnsweredHolders,
    ): Promise<{ purchaseId: number; period: number } | { refused: 'not_found' | 'not_a_subscription' }> {
      return db.transaction(async (trx) => {
        const existing = await trx('purchases').where({ payproc_invoice_id: renewal.invoiceId }).first('id', 'renewal_period');
        if (existing) return { purchaseId: existing.id as number, period: existing.renewal_period as number };
        const row = await trx('purchases').where({ id: originalId }).forUpdate().first();
        if (!row) return { refused: 'not_found' as const };
        const original = toPurchaseRecord(row);
        if (original.billing !== 'subscription') return { refused: 'not_a_subscription' as const };
        const latest = await trx('purchases').where({ renewal_of_purchase_id: original.id }).max({ last: 'renewal_period' }).first();
        const period = Number(latest?.last ?? 0) + 1;
        const copied = await items(trx, original.id);
        const purchaseId = await insertPurchase(
          trx,
          {
            rootAccountId: original.rootAccountId,
            apiKeyId: original.apiKeyId,
            agentId: original.agentId,
            buyerId: original.buyerId,
            buyerEmail: original.buyerEmail ?? '',
            savePaymentMethod: false,
            billing: 'subscription',
            mode: original.mode,
            currency: original.currency,
            subtotalMinor: original.subtotalMinor,
            platformFeeBps: row.platform_fee_bps,
            platformFeeMinor: original.platformFeeMinor,
            totalMinor: original.totalMinor,
            bundle: original.bundle,
            metadata: original.metadata,
            items: copied.map((i) => ({ ...i, units: renew(i.units, period) })),
          },
          'paid',
          {
            ...renewal,
            subscriptionId: original.payprocSubscriptionId ?? renewal.subscriptionId,
            renewalOfPurchaseId: original.id,
            period,
          },
          writeHolders,
        );
        return { purchaseId, period };
      });
    },

    /** One page of the subscriptions `scope` may read (their first purchases), newest first, and how many there are. */
    async listSubscriptions(
      scope: PurchaseScope,
      f: { status?: 'incomplete' | 'active' | 'cancelled'; limit: number; offset: number },
    ): Promise<{ items: PurchaseRecord[]; total: number }> {
      const base = db('purchases')
        .where({ root_account_id: scope.rootAccountId, mode: scope.mode, billing: 'subscription' })
        .whereNull('renewal_of_purchase_id');
      if (scope.agentId !== null) base.where('agent_id', scope.agentId);
      if (f.status === 'cancelled') base.whereNotNull('subscription_ended_at');
      if (f.status === 'active') base.whereNull('subscription_ended_at').whereNotNull('paid_at');
      if (f.status === 'incomplete') base.whereNull('subscription_ended_at').whereNull('paid_at');
      const { rows, total } = await pageWithTotal<Record<string, unknown>>(base, {
        orderBy: [{ column: 'id', order: 'desc' }],
        limit: f.limit,
        offset: f.offset,
      });
      return { items: rows.map(toPurchaseRecord), total };
    },

    /** A subscription's periods: its first purchase, then each renewal, in period order. */
    async subscriptionPeriods(firstPurchaseId: number): Promise<PurchaseRecord[]> {
      const rows = await db('purchases')
        .where({ id: firstPurchaseId })
        .orWhere({ renewal_of_purchase_id: firstPurchaseId })
        .orderByRaw('coalesce(renewal_period, 1), id');
      return rows.map(toPurchaseRecord);
    },

    /** The covered units of a subscription's first purchase, all items' (what its periods are counted from). */
    async firstPeriodUnits(firstPurchaseId: number): Promise<NewCoveredUnit[]> {
      return (await items(db, firstPurchaseId)).flatMap((i) => i.units);
    },

    /** The original purchase of a subscription (not a renewal), or undefined. */
    async findBySubscription(subscriptionId: string): Promise<PurchaseRecord | undefined> {
      const r = await db('purchases')
        .where({ payproc_subscription_id: subscriptionId })
        .whereNull('renewal_of_purchase_id')
        .orderBy('id')
        .first();
      return r ? toPurchaseRecord(r) : undefined;
    },
  };
}

/** A subscription's repository (see `createSubscriptionRepository`). */
export type SubscriptionRepository = ReturnType<typeof createSubscriptionRepository>;
