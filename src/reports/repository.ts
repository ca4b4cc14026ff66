/**
 * Persistence of the premium bordereaux: the `bordereaux` rows (their one writer, the loss
 * bordereau written beside them included) and the reads
 * behind a file: the ledger of one agency, party, month and mode (paid purchases and renewals by
 * `paid_at`, completed cancellations by `completed_at`, each per purchase item whose product names
 * the party as insurer or MGA), read through a server-side cursor in batches so a month of
 * 100 000 rows keeps memory flat. Amounts are integer minor units, signed (returned premium is
 * negative). Also the money a month moved at the processor as the ledger records it (each charge's
 * and refund's processor id and amount, for the reconciliation) and the `reconciliations` rows
 * (their one writer).
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { pageWithTotal } from '../db/paging';
import { rowCommission, shareOf, type BordereauTotals, type LedgerEntry } from './bordereau';
import type { LossTotals } from './loss-bordereau';

export type BordereauStatus = 'generating' | 'ready';

/** The formats a bordereau is written in. */
export const BORDEREAU_FORMATS = ['csv', 'xlsx'] as const;
export type BordereauFormat = (typeof BORDEREAU_FORMATS)[number];

/** One stored file of a bordereau. */
export interface BordereauFile {
  storageKey: string;
  sizeBytes: number;
  sha256: string;
}

export interface BordereauRecord {
  id: number;
  rootAccountId: number;
  partyRootAccountId: number;
  /** YYYY-MM */
  month: string;
  mode: 'live' | 'test';
  status: BordereauStatus;
  /** A month-to-date bordereau (test mode): one of many of its month, never the final one. */
  provisional: boolean;
  /** A provisional bordereau's end (exclusive): when it was asked for; null for a final one (the whole month). */
  coversUntil: Date | null;
  /** Per format, once ready. */
  files: Partial<Record<BordereauFormat, BordereauFile>> | null;
  rowCount: number | null;
  totals: BordereauTotals | null;
  /** Its loss bordereau (the month's claims), once ready; null before, and for bordereaux made before loss bordereaux. */
  loss: LossBordereauRecord | null;
  createdAt: Date;
  generatedAt: Date | null;
}

/** A loss bordereau's stored files, claim rows and totals per currency (./loss-bordereau.ts). */
export interface LossBordereauRecord {
  files: Record<BordereauFormat, BordereauFile>;
  rows: number;
  totals: LossTotals;
}

/** Which bordereaux one request is about. */
export interface BordereauKey {
  rootAccountId: number;
  partyRootAccountId: number;
  /** YYYY-MM */
  month: string;
  mode: 'live' | 'test';
}

const toRecord = (r: Record<string, unknown>): BordereauRecord => ({
  id: r.id as number,
  rootAccountId: r.root_account_id as number,
  partyRootAccountId: r.party_root_account_id as number,
  month: r.month as string,
  mode: r.mode as 'live' | 'test',
  status: r.status as BordereauStatus,
  provisional: r.provisional === true,
  coversUntil: (r.covers_until as Date | null) ?? null,
  files: (r.files as BordereauRecord['files']) ?? null,
  rowCount: (r.row_count as number | null) ?? null,
  totals: (r.totals as BordereauTotals | null) ?? null,
  loss: (r.loss as LossBordereauRecord | null) ?? null,
  createdAt: r.created_at as Date,
  generatedAt: (r.generated_at as Date | null) ?? null,
});

// `month` is a date column: read it back as YYYY-MM text, never through a time zone.
const COLUMNS = [
  'id',
  'root_account_id',
  'party_root_account_id',
  'mode',
  'status',
  'provisional',
  'covers_until',
  'files',
  'row_count',
  'totals',
  'loss',
  'created_at',
  'generated_at',
];
const select = (q: Knex.QueryBuilder, db: Db) => q.select([...COLUMNS, db.raw(`to_char(month, 'YYYY-MM') as month`)]);

/**
 * The rows of the completed `policy_transactions` of kind `type` in the month, one per item its
 * `breakdown` names (`itemFilter`, over its entries `u`), reporting `units` of the item (their
 * first start, last end, and count). Static SQL only: nothing here comes from a request.
 */
const transactionRows = (
  type: 'cancellation' | 'endorsement' | 'refund',
  units: { inception: string; expiry: string; count: string },
  itemFilter = "(u->>'itemId')::int = i.id",
) => `
    select '${type}', p.id, i.position, t.id,
           t.completed_at, t.effective_at,
           pl.master_policy_number, pl.customer_name, i.named_insured,
           ${units.inception},
           ${units.expiry},
           ${units.count},
           t.currency, 0::bigint, t.platform_fee_minor, t.tax_minor,
           null::bigint[], t.breakdown, i.id, 0, i.commission_bps, null::bigint
      from policy_transactions t
      join purchases p on p.id = t.purchase_id
      join purchase_items i on i.purchase_id = p.id
      join product_lines pl on pl.id = i.product_line_id
     where t.kind = '${type}' and t.status = 'completed' and t.completed_at >= :from and t.completed_at < :to
       and p.root_account_id = :agency and p.mode = :mode
       and (pl.insurer_root_account_id = :party or pl.mga_root_account_id = :party)
       and exists (select 1 from jsonb_array_elements(t.breakdown) u where ${itemFilter})
`;

/** Every covered unit of the item, as it is now. */
const ITEM_UNITS = {
  inception: '(select min(cu.starts_at) from covered_units cu where cu.purchase_item_id = i.id)',
  expiry: '(select max(cu.ends_at) from covered_units cu where cu.purchase_item_id = i.id)',
};

/** The units of the item an endorsement priced (added, or given a holder's endorsement premium). */
const priced = (aggregate: string) =>
  `(select ${aggregate} from covered_units cu join jsonb_array_elements(t.breakdown) u on (u->>'unitId')::int = cu.id
             where cu.purchase_item_id = i.id)`;

/** The ledger of one file, in file order (recorded time, then type, then reference). */
export const LEDGER_SQL = `
  select * from (
    select case when p.renewal_of_purchase_id is null then 'new_business' else 'renewal' end as type,
           p.id as purchase_id, i.position as item_position, null::int as transaction_id,
           p.paid_at as recorded_at, p.paid_at as effective_at,
           pl.master_policy_number, pl.customer_name as product_name, i.named_insured,
           (select min(cu.starts_at) from covered_units cu where cu.purchase_item_id = i.id and cu.added_by_transaction_id is null) as risk_inception,
           (select max(cu.ends_at) from covered_units cu where cu.purchase_item_id = i.id and cu.added_by_transaction_id is null) as risk_expiry,
           (select count(*)::int from covered_units cu where cu.purchase_item_id = i.id and cu.added_by_transaction_id is null) as covered_units,
           p.currency, i.amount_minor as premium_minor, p.platform_fee_minor as spread_fee_minor, i.tax_minor as spread_tax_minor,
           array(select x.amount_minor from purchase_items x where x.purchase_id = p.id order by x.position) as weights,
           null::jsonb as breakdown, i.id as item_id, i.position as weight_index,
           i.commission_bps, i.commission_minor
      from purchases p
      join purchase_items i on i.purchase_id = p.id
      join product_lines pl on pl.id = i.product_line_id
     where p.root_account_id = :agency and p.mode = :mode and p.paid_at >= :from and p.paid_at < :to
       and (pl.insurer_root_account_id = :party or pl.mga_root_account_id = :party)
    union all${transactionRows('cancellation', {
      ...ITEM_UNITS,
      count: "(select count(*)::int from jsonb_array_elements(t.breakdown) u where (u->>'itemId')::int = i.id)",
    })}
    union all${transactionRows('endorsement', {
      inception: priced('min(cu.starts_at)'),
      expiry: priced('max(cu.ends_at)'),
      count: "(select count(distinct (u->>'unitId')::int)::int from jsonb_array_elements(t.breakdown) u where (u->>'itemId')::int = i.id)",
    })}
    union all${transactionRows('refund', { ...ITEM_UNITS, count: '0' }, "(u->>'itemId')::int = i.id and (u->>'refundableMinor')::bigint > 0")}
  ) ledger
  order by recorded_at, type, purchase_id, transaction_id nulls first, item_position`;

/** A ledger row as the cursor returns it. */
interface LedgerRow {
  type: LedgerEntry['type'];
  purchase_id: number;
  item_position: number;
  transaction_id: number | null;
  recorded_at: Date;
  effective_at: Date;
  master_policy_number: string;
  product_name: string;
  named_insured: LedgerEntry['namedInsured'];
  risk_inception: Date | null;
  risk_expiry: Date | null;
  covered_units: number;
  currency: string;
  premium_minor: string;
  spread_fee_minor: string;
  spread_tax_minor: string;
  weights: string[] | null;
  /** A cancellation's per-unit refund, an endorsement's per-unit premium collected (negative: given back), or a dashboard refund's share per item. */
  breakdown: { itemId: number; refundableMinor?: number; premiumMinor?: number }[] | null;
  item_id: number;
  weight_index: number;
  /** The item's commission rate kept at the sale (null: none), and the sale's commission (sale rows only). */
  commission_bps: number | null;
  commission_minor: string | null;
}

/**
 * A ledger row as an entry: a sale's item carries its premium and its share of the purchase's
 * platform fee; a cancellation's item the premium it returned (negative) and its share of the
 * cancellation's tax and platform fee, spread by the returned premiums; an endorsement's item the
 * premium it collected (or gave back); a dashboard refund's item its share of the money returned.
 * Each carries the agency's commission on its premium (the sale's as stored, the others' at the
 * item's rate; none without one).
 */
function toEntry(r: LedgerRow): LedgerEntry {
  let premium = Number(r.premium_minor);
  let fee: number;
  let tax = 0;
  if (r.type === 'cancellation' || r.type === 'endorsement' || r.type === 'refund') {
    // A cancellation returns (negative), an endorsement collects (positive) or gives back (negative), each spread over its items by premium.
    const returned = r.type === 'cancellation' || r.type === 'refund';
    const byItem = new Map<number, number>();
    for (const u of r.breakdown ?? [])
      byItem.set(u.itemId, (byItem.get(u.itemId) ?? 0) + ((returned ? u.refundableMinor : u.premiumMinor) ?? 0));
    const items = [...byItem.keys()].sort((a, b) => a - b);
    const weights = items.map((id) => byItem.get(id)!);
    const index = items.indexOf(r.item_id);
    // `0 - x`, not `-x`: a returned amount of nothing is 0, never -0.
    const sign = (x: number) => (returned ? 0 - x : x);
    premium = sign(byItem.get(r.item_id) ?? 0);
    fee = sign(shareOf(Number(r.spread_fee_minor), weights, index));
    tax = sign(shareOf(Number(r.spread_tax_minor), weights, index));
  } else {
    fee = shareOf(Number(r.spread_fee_minor), (r.weights ?? []).map(Number), r.weight_index);
    // A sale's or renewal's item carries the premium tax it was charged (its own, not spread).
    tax = Number(r.spread_tax_minor);
  }
  return {
    type: r.type,
    purchaseId: r.purchase_id,
    itemPosition: r.item_position,
    transactionId: r.transaction_id,
    recordedAt: r.recorded_at,
    effectiveAt: r.effective_at,
    masterPolicyNumber: r.master_policy_number,
    productName: r.product_name,
    namedInsured: r.named_insured,
    riskInception: r.risk_inception,
    riskExpiry: r.risk_expiry,
    coveredUnits: r.covered_units,
    currency: r.currency,
    premiumMinor: premium,
    platformFeeMinor: fee,
    taxMinor: tax,
    commissionMinor: rowCommission(premium, r.commission_bps, r.commission_minor === null ? null : Number(r.commission_minor)),
  };
}

/** One movement of money the ledger expects at the processor (minor units, positive). */
export interface ExpectedMovement {
  kind: 'charge' | 'refund';
  /** The payment intent (charge) or refund id at the processor. */
  processorId: string;
  purchaseId: number;
  rootAccountId: number;
  currency: string;
  amountMinor: number;
  /**
   * What it is in the ledger: the sale or renewal, an endorsement, a cancellation, or `dashboard`:
   * the money refunded in the processor's dashboard on one payment intent in the month (the
   * `refund` rows of that payment intent added up; `processorId` is the payment intent).
   */
  source: 'sale' | 'renewal' | 'endorsement' | 'cancellation' | 'dashboard';
  /** The payment intent whose money it is: the charge's own, or the one a refund (part) goes back to. */
  paymentIntentId: string | null;
  /** `dashboard` only: the ids of the purchase's own refunds (cancellations', endorsements'), which the processor's list of that payment intent's refunds also holds. */
  ownRefundIds?: string[];
  /** A sale or endorsement paid through a checkout session with premium tax: the tax it charged (minor units) and the session whose tax lines hold it. */
  tax?: { minor: number; checkoutSessionId: string };
}

/** A stored reconciliation run (amounts in minor units). */
export interface StoredReconciliation {
  id: number;
  month: string;
  mode: 'live' | 'test';
  chargesChecked: number;
  refundsChecked: number;
  differenceCount: number;
  totals: Record<string, { ledger: number; processor: number }>;
  differences: unknown[];
  createdAt: Date;
}

export function createReportsRepository(db: Db) {
  return {
    /**
     * The money month [`from`, `to`) moved in `mode`, every agency, as the ledger records it:
     * charges of sales and renewals (by `paid_at`) and of endorsements (by completion), refunds of
     * cancellations (by completion; each part of one split over several payments), of
     * endorsements that gave premium back (each part once created at the processor), and the
     * dashboard refunds (`refund` rows, by the month their event arrived) added up per payment
     * intent, with the purchase's own refund ids; a sale or an endorsement paid through a checkout
     * session with premium tax carries its tax and session (`tax`). Oldest first.
     */
    async expectedMovements(range: { from: Date; to: Date; mode: 'live' | 'test' }): Promise<ExpectedMovement[]> {
      const { rows } = await db.raw(
        `select m.*, own.own_refund_ids from (
           select 'charge' as kind, p.payment_intent_id as processor_id, p.id as purchase_id, p.root_account_id, p.currency,
                  p.total_minor as amount_minor, case when p.renewal_of_purchase_id is null then 'sale' else 'renewal' end as source,
                  p.paid_at as at, p.payment_intent_id, p.tax_minor, p.checkout_session_id
             from purchases p
            where p.mode = :mode and p.paid_at >= :from and p.paid_at < :to and p.payment_intent_id is not null and p.total_minor > 0
           union all
           select 'charge', t.payment_intent_id, p.id, p.root_account_id, t.currency, t.total_minor, 'endorsement', t.completed_at,
                  t.payment_intent_id, t.tax_minor,
                  (select e.checkout_session_id from endorsements e where e.policy_transaction_id = t.id)
             from policy_transactions t join purchases p on p.id = t.purchase_id
            where t.kind = 'endorsement' and t.status = 'completed' and p.mode = :mode
              and t.completed_at >= :from and t.completed_at < :to and t.payment_intent_id is not null
           union all
           select 'refund', coalesce(r.value->>'refundId', t.refund_id), p.id, p.root_account_id, t.currency,
                  coalesce((r.value->>'amountMinor')::bigint, t.total_minor), 'cancellation', t.completed_at,
                  coalesce(r.value->>'paymentIntentId', p.payment_intent_id), null, null
             from policy_transactions t join purchases p on p.id = t.purchase_id
             left join lateral jsonb_array_elements(t.refunds) r on true
            where t.kind = 'cancellation' and t.status = 'completed' and p.mode = :mode
              and t.completed_at >= :from and t.completed_at < :to and t.total_minor > 0
           union all
           select 'refund', r.value->>'refundId', p.id, p.root_account_id, t.currency, (r.value->>'amountMinor')::bigint, 'endorsement',
                  t.completed_at, coalesce(r.value->>'paymentIntentId', t.payment_intent_id), null, null
             from policy_transactions t join purchases p on p.id = t.purchase_id
             join lateral jsonb_array_elements(t.refunds) r on true
            where t.kind = 'endorsement' and t.status = 'completed' and p.mode = :mode and t.total_minor < 0
              and t.completed_at >= :from and t.completed_at < :to and r.value->>'refundId' is not null
           union all
           -- A refund row of before they named their payment intent was the sale's.
           select 'refund', coalesce(t.payment_intent_id, p.payment_intent_id), p.id, p.root_account_id, t.currency, sum(t.total_minor),
                  'dashboard', max(t.completed_at), coalesce(t.payment_intent_id, p.payment_intent_id), null, null
             from policy_transactions t join purchases p on p.id = t.purchase_id
            where t.kind = 'refund' and t.status = 'completed' and p.mode = :mode
              and t.completed_at >= :from and t.completed_at < :to
            group by 2, p.id, p.root_account_id, t.currency
         ) m
         left join lateral (
           select array_agg(distinct o.id) as own_refund_ids
             from (select r.value->>'refundId' as id
                     from policy_transactions t cross join lateral jsonb_array_elements(coalesce(t.refunds, '[]'::jsonb)) r
                    where t.purchase_id = m.purchase_id
                   union all
                   select t.refund_id from policy_transactions t where t.purchase_id = m.purchase_id) o
            where o.id is not null and m.source = 'dashboard'
         ) own on m.source = 'dashboard'
         order by at, purchase_id, kind, processor_id`,
        { ...range },
      );
      return (rows as Array<Record<string, unknown>>).map((r) => ({
        kind: r.kind as ExpectedMovement['kind'],
        processorId: r.processor_id as string,
        purchaseId: r.purchase_id as number,
        rootAccountId: r.root_account_id as number,
        currency: r.currency as string,
        amountMinor: Number(r.amount_minor),
        source: r.source as ExpectedMovement['source'],
        paymentIntentId: (r.payment_intent_id as string | null) ?? null,
        ...(r.source === 'dashboard' ? { ownRefundIds: (r.own_refund_ids as string[] | null) ?? [] } : {}),
        ...(Number(r.tax_minor ?? 0) > 0 && r.checkout_session_id
          ? { tax: { minor: Number(r.tax_minor), checkoutSessionId: r.checkout_session_id as string } }
          : {}),
      }));
    },

    /** Keeps one reconciliation run. */
    async saveReconciliation(r: Omit<StoredReconciliation, 'id' | 'createdAt'>): Promise<StoredReconciliation> {
      const [row] = await db('reconciliations')
        .insert({
          month: `${r.month}-01`,
          mode: r.mode,
          charges_checked: r.chargesChecked,
          refunds_checked: r.refundsChecked,
          difference_count: r.differenceCount,
          totals: JSON.stringify(r.totals),
          differences: JSON.stringify(r.differences),
        })
        .returning(['id', 'created_at']);
      return { ...r, id: row.id, createdAt: row.created_at };
    },

    /** The differences the newest reconciliation of each mode found (0 for a mode never reconciled). */
    async latestDifferenceCounts(): Promise<Record<'live' | 'test', number>> {
      const rows: Array<{ mode: 'live' | 'test'; difference_count: number }> = await db('reconciliations')
        .distinctOn('mode')
        .orderBy([{ column: 'mode' }, { column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
        .select('mode', 'difference_count');
      const out = { live: 0, test: 0 };
      for (const r of rows) out[r.mode] = r.difference_count;
      return out;
    },

    /** Whether any of `rootAccountId`'s products names `partyId` as its insurer or MGA. */
    async sellsFor(rootAccountId: number, partyId: number): Promise<boolean> {
      const row = await db('product_lines')
        .where('root_account_id', rootAccountId)
        .andWhere((q) => q.where('insurer_root_account_id', partyId).orWhere('mga_root_account_id', partyId))
        .first('id');
      return Boolean(row);
    },

    /**
     * Every agency, party (insurer or MGA of a product) and mode with at least one transaction
     * recorded in `range` (a sale, a renewal or a completed cancellation), ordered: what the
     * monthly schedule generates bordereaux for.
     */
    async activeParties(range: {
      from: Date;
      to: Date;
    }): Promise<Array<{ rootAccountId: number; partyRootAccountId: number; mode: 'live' | 'test' }>> {
      const { rows } = await db.raw(
        `select distinct p.root_account_id, x.party, p.mode
           from purchases p
           join purchase_items i on i.purchase_id = p.id
           join product_lines pl on pl.id = i.product_line_id
           cross join lateral (values (pl.insurer_root_account_id), (pl.mga_root_account_id)) x(party)
          where x.party is not null
            and ((p.paid_at >= :from and p.paid_at < :to)
                 or exists (select 1 from policy_transactions t
                             where t.purchase_id = p.id and t.kind in ('cancellation', 'endorsement', 'refund') and t.status = 'completed'
                               and t.completed_at >= :from and t.completed_at < :to))
          order by 1, 2, 3`,
        { from: range.from, to: range.to },
      );
      return (rows as { root_account_id: number; party: number; mode: 'live' | 'test' }[]).map((r) => ({
        rootAccountId: r.root_account_id,
        partyRootAccountId: r.party,
        mode: r.mode,
      }));
    },

    /** The final bordereau of `key`, created as `generating` when there is none; `created` says which. */
    async findOrCreate(key: BordereauKey): Promise<{ record: BordereauRecord; created: boolean }> {
      const values = {
        root_account_id: key.rootAccountId,
        party_root_account_id: key.partyRootAccountId,
        month: `${key.month}-01`,
        mode: key.mode,
      };
      const inserted = await db('bordereaux')
        .insert({ ...values, status: 'generating' })
        .onConflict(db.raw('(root_account_id, party_root_account_id, month, mode) where not provisional'))
        .ignore()
        .returning('id');
      const row = await select(db('bordereaux').where({ ...values, provisional: false }), db).first();
      return { record: toRecord(row), created: inserted.length > 0 };
    },

    /**
     * A new provisional bordereau of `key`'s month (test mode only) covering it up to `coversUntil`
     * (exclusive), `generating`: each call its own row, never the month's final one.
     */
    async createProvisional(key: BordereauKey & { mode: 'test' }, coversUntil: Date): Promise<BordereauRecord> {
      const [{ id }] = await db('bordereaux')
        .insert({
          root_account_id: key.rootAccountId,
          party_root_account_id: key.partyRootAccountId,
          month: `${key.month}-01`,
          mode: key.mode,
          status: 'generating',
          provisional: true,
          covers_until: coversUntil,
        })
        .returning('id');
      return toRecord(await select(db('bordereaux').where({ id }), db).first());
    },

    async find(id: number): Promise<BordereauRecord | null> {
      const row = await select(db('bordereaux').where({ id }), db).first();
      return row ? toRecord(row) : null;
    },

    /** The account's bordereaux, newest month first, filtered by party, month and mode when given. */
    async list(
      rootAccountId: number,
      f: { partyRootAccountId?: number; month?: string; mode?: 'live' | 'test'; limit: number; offset: number },
    ): Promise<{ items: BordereauRecord[]; total: number }> {
      const base = db('bordereaux').where('root_account_id', rootAccountId);
      if (f.partyRootAccountId !== undefined) base.where('party_root_account_id', f.partyRootAccountId);
      if (f.month !== undefined) base.where('month', `${f.month}-01`);
      if (f.mode !== undefined) base.where('mode', f.mode);
      const page = await pageWithTotal<Record<string, unknown>>(base, {
        select: (q) => select(q, db),
        orderBy: [
          { column: 'bordereaux.month', order: 'desc' },
          { column: 'id', order: 'desc' },
        ],
        limit: f.limit,
        offset: f.offset,
      });
      return { items: page.rows.map(toRecord), total: page.total };
    },

    /** Records the stored files (first writer wins: a ready bordereau is never changed). */
    async markReady(
      id: number,
      ready: { files: Record<BordereauFormat, BordereauFile>; rowCount: number; totals: BordereauTotals; loss: LossBordereauRecord },
    ): Promise<void> {
      await db('bordereaux')
        .where({ id, status: 'generating' })
        .update({
          status: 'ready',
          files: JSON.stringify(ready.files),
          row_count: ready.rowCount,
          totals: JSON.stringify(ready.totals),
          loss: JSON.stringify(ready.loss),
          generated_at: db.fn.now(),
        });
    },

    /**
     * The ledger of `key`'s month in file order, `batchSize` entries at a time, read through a
     * cursor inside one read-only transaction (a consistent snapshot of the month); the next batch
     * is fetched while the caller handles the current one. Small batches keep memory flat however
     * long the month: a batch is garbage before the collector would promote it (1 000 rows a batch
     * let a 100 000-row month's peak RSS grow 1.5x over a 10 000-row month's; 250 rows, 1.1x).
     */
    async *ledger(key: BordereauKey, range: { from: Date; to: Date }, batchSize = 250): AsyncGenerator<LedgerEntry[]> {
      const trx = await db.transaction({ isolationLevel: 'repeatable read', readOnly: true });
      // The next batch is asked for while the caller handles this one (one query in flight at a time).
      let next: Promise<LedgerRow[]> | null = null;
      const fetch = async () => (await trx.raw(`fetch forward ${batchSize} from bordereau_ledger`)).rows as LedgerRow[];
      try {
        // Every row is read: plan for the whole result, as a plain query would, not for its first tenth.
        await trx.raw('set local cursor_tuple_fraction = 1');
        // No JIT: the ledger's per-row subqueries put its estimated cost past PostgreSQL's JIT
        // thresholds, and compiling it took 1.5 s of CPU before the first row, for a query that
        // then ran in 0.9 s (100 000 rows; 2.3 s with JIT, EXPLAIN ANALYZE).
        await trx.raw('set local jit = off');
        await trx.raw(`declare bordereau_ledger no scroll cursor for ${LEDGER_SQL}`, {
          agency: key.rootAccountId,
          party: key.partyRootAccountId,
          mode: key.mode,
          from: range.from,
          to: range.to,
        });
        next = fetch();
        for (;;) {
          const rows = await next;
          next = null;
          if (!rows.length) break;
          next = fetch();
          yield rows.map(toEntry);
        }
        await trx.commit();
      } catch (err) {
        await next?.catch(() => undefined);
        await trx.rollback();
        throw err;
      } finally {
        await next?.catch(() => undefined);
        if (!trx.isCompleted()) await trx.rollback();
      }
    },
  };
}

export type ReportsRepository = ReturnType<typeof createReportsRepository>;
