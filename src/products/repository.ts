/**
 * Persistence of product lines (table `product_lines`). Returns plain `ProductLine` objects with
 * money in integer minor units. Tenancy filters are arguments here and decided by the service.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { NEWEST_FIRST, pageWithTotal } from '../db/paging';
import { cancellationTermsFromRow, DEFAULT_CANCELLATION_TERMS, type CancellationTerms } from './cancellation-terms';

export interface ProductLine {
  id: number;
  rootAccountId: number;
  customerName: string;
  internalName: string;
  description: string;
  defaultPriceMinor: number;
  currency: string;
  insurerName: string;
  claimsPhoneNumber: string;
  videoUrl: string;
  masterPolicyNumber: string;
  policyNumberTwo: string;
  deductibleMinor: number;
  isRecurring: boolean;
  isTestMode: boolean;
  isActive: boolean;
  questionSetId: number | null;
  mgaRootAccountId: number | null;
  insurerRootAccountId: number | null;
  payprocProductId: string | null;
  payprocPriceId: string | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** Columns a create or update may set. */
export type ProductLineWrite = Partial<Omit<ProductLine, 'id' | 'createdAt' | 'updatedAt'>>;

const COLUMNS: Record<keyof ProductLine, string> = {
  id: 'id',
  rootAccountId: 'root_account_id',
  customerName: 'customer_name',
  internalName: 'internal_name',
  description: 'description',
  defaultPriceMinor: 'default_price_minor',
  currency: 'currency',
  insurerName: 'insurer_name',
  claimsPhoneNumber: 'claims_phone_number',
  videoUrl: 'video_url',
  masterPolicyNumber: 'master_policy_number',
  policyNumberTwo: 'policy_number_two',
  deductibleMinor: 'deductible_minor',
  isRecurring: 'is_recurring',
  isTestMode: 'is_test_mode',
  isActive: 'is_active',
  questionSetId: 'question_set_id',
  mgaRootAccountId: 'mga_root_account_id',
  insurerRootAccountId: 'insurer_root_account_id',
  payprocProductId: 'payproc_product_id',
  payprocPriceId: 'payproc_price_id',
  version: 'version',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
};

function fromRow(row: Record<string, unknown>): ProductLine {
  const out = {} as Record<string, unknown>;
  for (const [prop, col] of Object.entries(COLUMNS)) out[prop] = row[col];
  out.defaultPriceMinor = Number(row.default_price_minor);
  out.deductibleMinor = Number(row.deductible_minor);
  return out as unknown as ProductLine;
}

function toRow(write: ProductLineWrite): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const [prop, value] of Object.entries(write)) {
    if (value !== undefined) row[COLUMNS[prop as keyof ProductLine]] = value;
  }
  return row;
}

/** Which product lines a caller may see. */
export interface ProductScope {
  rootAccountId: number;
  /** When true, only test-mode product lines are visible (a test key). */
  testModeOnly: boolean;
}

export interface ProductListFilter {
  isActive?: boolean;
  isTestMode?: boolean;
  limit: number;
  offset: number;
}

/** A product's cancellation terms and whether they are its own (false: the defaults). */
/** A product's endorsement terms as stored (the defaults, both allowed at no premium, without a row). */
export interface StoredEndorsementTerms {
  allowsAdditionalInsured: boolean;
  allowsWaiverOfSubrogation: boolean;
  /** Premium of naming a holder additional insured, minor units per covered unit the holder's certificates cover (0: free). */
  additionalInsuredPremiumMinor: number;
  /** Premium of waiving subrogation against a holder, minor units per covered unit (0: free). */
  waiverOfSubrogationPremiumMinor: number;
  isDefault: boolean;
  updatedAt: Date | null;
}

export interface StoredCancellationTerms {
  terms: CancellationTerms;
  isDefault: boolean;
  updatedAt: Date | null;
}

/**
 * Each of `ids` with what `read` makes of its row among `rows` (a per-product-line table's rows,
 * keyed by `product_line_id`), or of `undefined` for a product line without a row (its defaults).
 */
function byProductLine<Row extends { product_line_id: unknown }, T>(
  ids: number[],
  rows: Row[],
  read: (row: Row | undefined) => T,
): Map<number, T> {
  const byId = new Map(rows.map((r) => [Number(r.product_line_id), r]));
  return new Map(ids.map((id) => [id, read(byId.get(id))]));
}

export function createProductsRepository(db: Db) {
  // An archived (test-mode) product is gone from the products API: scoped reads never see it.
  const scoped = (q: Knex.QueryBuilder, scope: ProductScope) => {
    q.where('root_account_id', scope.rootAccountId).whereNull('archived_at');
    if (scope.testModeOnly) q.where('is_test_mode', true);
    return q;
  };

  return {
    transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
      return db.transaction(fn);
    },

    async insert(trx: Knex.Transaction, write: ProductLineWrite): Promise<ProductLine> {
      const [row] = await trx('product_lines').insert(toRow(write)).returning('*');
      return fromRow(row);
    },

    /** The owner may quote its own product line (product_approvals; issue 4). */
    async approveForOwner(trx: Knex.Transaction, productLineId: number, rootAccountId: number): Promise<void> {
      await trx('product_approvals')
        .insert({ root_account_id: rootAccountId, product_line_id: productLineId, approved_by_root_account_id: rootAccountId })
        .onConflict(['root_account_id', 'product_line_id'])
        .ignore();
    },

    async update(trx: Knex.Transaction, id: number, write: ProductLineWrite): Promise<ProductLine> {
      const [row] = await trx('product_lines')
        .where({ id })
        .update({ ...toRow(write), updated_at: trx.fn.now() })
        .returning('*');
      return fromRow(row);
    },

    /**
     * The product line within `scope` even when archived, locked inside `trx`, with when it was
     * archived (null: it is not).
     */
    async findForArchive(
      trx: Knex.Transaction,
      id: number,
      scope: ProductScope,
    ): Promise<{ product: ProductLine; archivedAt: Date | null } | null> {
      const q = trx('product_lines').where({ id, root_account_id: scope.rootAccountId });
      if (scope.testModeOnly) q.where('is_test_mode', true);
      const row = await q.forUpdate().first();
      return row ? { product: fromRow(row), archivedAt: (row.archived_at as Date | null) ?? null } : null;
    },

    /** Archives a product line (the service checks it is test mode): inactive, and gone from every scoped read. */
    async markArchived(trx: Knex.Transaction, id: number, version: number): Promise<Date> {
      const [row] = await trx('product_lines')
        .where({ id })
        .update({ archived_at: trx.fn.now(), is_active: false, version, updated_at: trx.fn.now() })
        .returning('archived_at');
      return row.archived_at as Date;
    },

    /** The product line if it is within `scope`; `forUpdate` locks it inside `trx`. */
    async find(id: number, scope: ProductScope, trx?: Knex.Transaction): Promise<ProductLine | null> {
      const q = scoped((trx ?? db)('product_lines').where('id', id), scope);
      if (trx) q.forUpdate();
      const row = await q.first();
      return row ? fromRow(row) : null;
    },

    /**
     * Cancellation terms of each product line in `ids` (the defaults for one without a row of
     * its own). Callers check the products' scope first.
     */
    async cancellationTerms(ids: number[], trx?: Knex.Transaction): Promise<Map<number, StoredCancellationTerms>> {
      const rows = ids.length ? await (trx ?? db)('product_cancellation_terms').whereIn('product_line_id', ids).select('*') : [];
      return byProductLine(ids, rows, (row) =>
        row
          ? { terms: cancellationTermsFromRow(row), isDefault: false, updatedAt: row.updated_at as Date }
          : { terms: { ...DEFAULT_CANCELLATION_TERMS }, isDefault: true, updatedAt: null },
      );
    },

    /**
     * Endorsement terms of each product line in `ids`: whether a certificate holder may be named
     * additional insured, and a waiver of subrogation granted (both allowed without a row).
     */
    async endorsementTerms(ids: number[], trx?: Knex.Transaction): Promise<Map<number, StoredEndorsementTerms>> {
      const rows = ids.length ? await (trx ?? db)('product_endorsement_terms').whereIn('product_line_id', ids).select('*') : [];
      return byProductLine(ids, rows, (row) =>
        row
          ? {
              allowsAdditionalInsured: row.allows_additional_insured,
              allowsWaiverOfSubrogation: row.allows_waiver_of_subrogation,
              additionalInsuredPremiumMinor: Number(row.additional_insured_premium_minor),
              waiverOfSubrogationPremiumMinor: Number(row.waiver_of_subrogation_premium_minor),
              isDefault: false,
              updatedAt: row.updated_at as Date,
            }
          : {
              allowsAdditionalInsured: true,
              allowsWaiverOfSubrogation: true,
              additionalInsuredPremiumMinor: 0,
              waiverOfSubrogationPremiumMinor: 0,
              isDefault: true,
              updatedAt: null,
            },
      );
    },

    /** Sets a product line's endorsement terms, inside the caller's transaction. */
    async saveEndorsementTerms(
      trx: Knex.Transaction,
      productLineId: number,
      terms: Omit<StoredEndorsementTerms, 'isDefault' | 'updatedAt'>,
    ): Promise<StoredEndorsementTerms> {
      const [saved] = await trx('product_endorsement_terms')
        .insert({
          product_line_id: productLineId,
          allows_additional_insured: terms.allowsAdditionalInsured,
          allows_waiver_of_subrogation: terms.allowsWaiverOfSubrogation,
          additional_insured_premium_minor: terms.additionalInsuredPremiumMinor,
          waiver_of_subrogation_premium_minor: terms.waiverOfSubrogationPremiumMinor,
          updated_at: trx.fn.now(),
        })
        .onConflict('product_line_id')
        .merge()
        .returning('*');
      return {
        allowsAdditionalInsured: saved.allows_additional_insured,
        allowsWaiverOfSubrogation: saved.allows_waiver_of_subrogation,
        additionalInsuredPremiumMinor: Number(saved.additional_insured_premium_minor),
        waiverOfSubrogationPremiumMinor: Number(saved.waiver_of_subrogation_premium_minor),
        isDefault: false,
        updatedAt: saved.updated_at as Date,
      };
    },

    /** Sets a product line's cancellation terms (all of them), inside the caller's transaction. */
    async saveCancellationTerms(trx: Knex.Transaction, productLineId: number, terms: CancellationTerms): Promise<StoredCancellationTerms> {
      const row = {
        product_line_id: productLineId,
        free_look_days: terms.freeLookDays,
        refund_method: terms.refundMethod,
        insurer_refund_method: terms.insurerRefundMethod,
        short_rate_penalty_bps: terms.shortRatePenaltyBps,
        platform_fee_refundable: terms.platformFeeRefundable,
        minimum_earned_premium_minor: terms.minimumEarnedPremiumMinor,
        buyer_withdrawal: terms.buyerWithdrawal,
        updated_at: trx.fn.now(),
      };
      const [saved] = await trx('product_cancellation_terms').insert(row).onConflict('product_line_id').merge().returning('*');
      return { terms: cancellationTermsFromRow(saved), isDefault: false, updatedAt: saved.updated_at as Date };
    },

    /** One page, newest first, and the total matching the filter. */
    async list(scope: ProductScope, f: ProductListFilter): Promise<{ items: ProductLine[]; total: number }> {
      const base = scoped(db('product_lines'), scope);
      if (f.isActive !== undefined) base.where('is_active', f.isActive);
      if (f.isTestMode !== undefined) base.where('is_test_mode', f.isTestMode);
      const page = await pageWithTotal<Record<string, unknown>>(base, { orderBy: NEWEST_FIRST, limit: f.limit, offset: f.offset });
      return { items: page.rows.map(fromRow), total: page.total };
    },
  };
}

export type ProductsRepository = ReturnType<typeof createProductsRepository>;
