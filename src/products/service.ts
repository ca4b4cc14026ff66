/**
 * Product lines: create, read, list and update (spec §2.1, §2.2, §4.2), backed by a product
 * and price at the payment processor.
 *
 * Tenancy (ARCHITECTURE §4): a key sees only its root account's product lines; a test key sees
 * only test-mode ones. Anything else reads as 404 NOT_FOUND. Errors thrown: AppError
 * NOT_FOUND, VALIDATION_ERROR, and the processor codes of spec §7.1 (see payproc/errors.ts).
 * Money: `defaultPrice`/`deductible` are major units on the wire, minor units inside.
 */
import type { Knex } from 'knex';
import { AppError, notFound } from '../shared/errors';
import type { Principal } from '../api-keys/service';
import type { CatalogGateway } from '../payproc/catalog';
import type { AccountsRepository } from '../accounts/repository';
import type { PartiesRepository } from '../parties/repository';
import type { QuestionSetsRepository } from '../question-sets/repository';
import { isTripExcess } from '../question-sets/definition';
import type { CoverageUnit } from '../question-sets/schemas';
import { toMajorUnits, toMinorUnits } from '../shared/money';
import type {
  ProductLine,
  ProductLineWrite,
  ProductScope,
  ProductsRepository,
  StoredCancellationTerms,
  StoredEndorsementTerms,
} from './repository';
import type {
  CancellationTermsRead,
  CreateProductBody,
  EndorsementTermsRead,
  ListProductsQuery,
  ProductCreated,
  ProductRead,
  UpdateCancellationTermsBody,
  UpdateEndorsementTermsBody,
  UpdateProductBody,
} from './schemas';

const DEFAULT_CURRENCY = 'usd';

export function scopeOf(p: Principal): ProductScope {
  return { rootAccountId: p.rootAccountId, testModeOnly: p.mode === 'test' };
}

/** Maps a product line to the spec §2.1 read shape (the one place that does). */
export function toProductRead(p: ProductLine, coverageUnit: CoverageUnit | null): ProductRead {
  return {
    id: p.id,
    ins_product_line_product_name_customer: p.customerName,
    ins_product_line_product_name_internal: p.internalName,
    ins_product_line_product_description: p.description,
    ins_product_line_product_default_price: toMajorUnits(p.defaultPriceMinor),
    ins_product_line_product_insurer_name: p.insurerName,
    ins_product_line_claims_phone_number: p.claimsPhoneNumber,
    ins_product_line_agency_product_video_url: p.videoUrl,
    ins_product_line_agency_root_accnt_id: p.rootAccountId,
    ins_product_line_master_policy_number: p.masterPolicyNumber,
    ins_product_line_policy_number_two: p.policyNumberTwo,
    ins_product_line_deductible_dollar_amount: toMajorUnits(p.deductibleMinor),
    ins_product_line_is_recurring: p.isRecurring ? 1 : 0,
    ins_product_line_is_bundle: 0,
    ins_product_line_payproc_product_is_test_mode: p.isTestMode ? 1 : 0,
    ins_product_line_payproc_product_uuid: p.payprocProductId ?? '',
    ins_product_line_question_set_id: p.questionSetId,
    ins_product_line_mga_root_accnt_id: p.mgaRootAccountId,
    ins_product_line_insurer_root_accnt_id: p.insurerRootAccountId,
    ins_product_line_is_active: p.isActive ? 1 : 0,
    ins_product_line_creation_datetime: p.createdAt.toISOString(),
    ins_product_line_last_updated_datetime: p.updatedAt.toISOString(),
    ins_product_line_coverage_unit: coverageUnit,
  };
}

/** Maps a freshly created product line to the spec §2.2 create-response shape. */
export function toProductCreated(p: ProductLine, coverageUnit: CoverageUnit | null): ProductCreated {
  return {
    id: p.id,
    payprocProductId: p.payprocProductId ?? '',
    payprocPriceId: p.payprocPriceId ?? '',
    customerName: p.customerName,
    internalName: p.internalName,
    description: p.description,
    defaultPrice: toMajorUnits(p.defaultPriceMinor),
    insurerName: p.insurerName,
    claimsPhoneNumber: p.claimsPhoneNumber,
    agencyRootAccountID: p.rootAccountId,
    masterPolicyNumber: p.masterPolicyNumber,
    questionSetId: p.questionSetId,
    isTestMode: p.isTestMode,
    coverageUnit,
    createdAt: p.createdAt.toISOString(),
  };
}

/** Maps stored cancellation terms to their wire shape (minor units stay minor units). */
export function toEndorsementTermsRead(productId: number, t: StoredEndorsementTerms): EndorsementTermsRead {
  return {
    product_id: productId,
    allows_additional_insured: t.allowsAdditionalInsured,
    allows_waiver_of_subrogation: t.allowsWaiverOfSubrogation,
    additional_insured_premium: t.additionalInsuredPremiumMinor,
    waiver_of_subrogation_premium: t.waiverOfSubrogationPremiumMinor,
    is_default: t.isDefault,
    updated_at: t.updatedAt?.toISOString() ?? null,
  };
}

export function toCancellationTermsRead(productId: number, stored: StoredCancellationTerms): CancellationTermsRead {
  const t = stored.terms;
  return {
    product_id: productId,
    free_look_days: t.freeLookDays,
    refund_method: t.refundMethod,
    insurer_refund_method: t.insurerRefundMethod,
    short_rate_penalty_bps: t.shortRatePenaltyBps,
    platform_fee_refundable: t.platformFeeRefundable,
    minimum_earned_premium: t.minimumEarnedPremiumMinor,
    buyer_withdrawal: t.buyerWithdrawal,
    is_default: stored.isDefault,
    updated_at: stored.updatedAt ? stored.updatedAt.toISOString() : null,
  };
}

export function createProductService(deps: {
  products: ProductsRepository;
  catalog: CatalogGateway;
  questionSets: QuestionSetsRepository;
  /** Root accounts, for the kind of the insurer and MGA a product names. */
  accounts: Pick<AccountsRepository, 'findById'>;
  /** Which insurers and MGAs appointed which agency: a product names only a party that appointed its agency. */
  appointments: Pick<PartiesRepository, 'hasAppointed'>;
}) {
  const { products, catalog } = deps;

  /** What each product sells (`day` or `trip`), from its question set; null without one. */
  async function coverageUnits(lines: ProductLine[]): Promise<Map<number, CoverageUnit>> {
    const sets = await deps.questionSets.findMany([
      ...new Set(lines.map((l) => l.questionSetId).filter((id): id is number => id !== null)),
    ]);
    return new Map([...sets].map(([id, set]) => [id, isTripExcess(set.definition) ? 'trip' : 'day']));
  }
  const unitOf = (units: Map<number, CoverageUnit>, p: ProductLine) =>
    p.questionSetId === null ? null : (units.get(p.questionSetId) ?? null);
  const read = async (p: ProductLine) => toProductRead(p, unitOf(await coverageUnits([p]), p));

  /** Product line `id` in the caller's scope (its row locked when `trx` is given); 404 NOT_FOUND otherwise. */
  async function scopedProduct(principal: Principal, id: number, trx?: Knex.Transaction): Promise<ProductLine> {
    const p = await products.find(id, scopeOf(principal), trx);
    if (!p) throw notFound('product', id);
    return p;
  }

  /**
   * Runs `change` in one transaction once the caller's product `id` is locked in it (404 NOT_FOUND
   * outside the scope), so two changes of the product apply one after the other; answers what
   * `change` answers.
   */
  function withLockedProduct<T>(principal: Principal, id: number, change: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return products.transaction(async (trx) => {
      await scopedProduct(principal, id, trx);
      return change(trx);
    });
  }

  /** A question set must be shared or owned by the caller's account (400 VALIDATION_ERROR). */
  async function assertQuestionSetUsable(principal: Principal, id: number | null | undefined): Promise<void> {
    if (id === null || id === undefined) return;
    if (!(await deps.questionSets.findUsable(id, principal.rootAccountId))) {
      throw new AppError('VALIDATION_ERROR', `questionSetId: no question set ${id} is available to this account`, {
        details: [{ path: 'questionSetId', message: `no question set ${id} is available to this account` }],
      });
    }
  }

  /**
   * The insurer and MGA a product names must be root accounts of that kind (a missing one reads
   * the same) that appointed the product's agency (issue 49): 400 VALIDATION_ERROR naming each field.
   */
  async function assertParties(
    agencyId: number,
    body: { insurerRootAccountID?: number | null; mgaRootAccountID?: number | null },
  ): Promise<void> {
    const wanted = [
      ['insurerRootAccountID', body.insurerRootAccountID, 'insurer'],
      ['mgaRootAccountID', body.mgaRootAccountID, 'mga'],
    ] as const;
    const problems = await Promise.all(
      wanted.map(async ([, id, kind]) => {
        if (typeof id !== 'number') return null;
        if ((await deps.accounts.findById(id))?.kind !== kind) return `no ${kind} root account with id ${id}`;
        if (!(await deps.appointments.hasAppointed(id, agencyId)))
          return `${kind === 'mga' ? 'MGA' : 'insurer'} ${id} has not appointed this account (GET /api/v1/parties lists those that have)`;
        return null;
      }),
    );
    const details = wanted.flatMap(([path], i) => (problems[i] ? [{ path, message: problems[i] }] : []));
    if (details.length) throw new AppError('VALIDATION_ERROR', details.map((d) => `${d.path}: ${d.message}`).join('; '), { details });
  }

  function assertTestModeAllowed(principal: Principal, isTestMode: boolean): void {
    if (principal.mode === 'test' && !isTestMode) {
      throw new AppError('VALIDATION_ERROR', 'isTestMode: a test API key can only manage test-mode products', {
        details: [{ path: 'isTestMode', message: 'must be true for a test API key' }],
      });
    }
  }

  return {
    /**
     * Creates the product line, approves it for quoting by its owner, and, in the same unit of
     * work, creates its processor product and price
     * in the product's mode. If the processor fails the transaction rolls back, so no product
     * line is left behind.
     */
    async create(principal: Principal, body: CreateProductBody): Promise<ProductCreated> {
      if (body.agencyRootAccountID !== undefined && body.agencyRootAccountID !== principal.rootAccountId) {
        throw new AppError('VALIDATION_ERROR', `agencyRootAccountID: ${body.agencyRootAccountID} is outside this API key's account`, {
          details: [{ path: 'agencyRootAccountID', message: "must be the API key's own root account" }],
        });
      }
      const isTestMode = body.isTestMode ?? principal.mode === 'test';
      assertTestModeAllowed(principal, isTestMode);
      await assertQuestionSetUsable(principal, body.questionSetId);
      await assertParties(principal.rootAccountId, body);
      const created = await products.transaction(async (trx) => {
        const row = await products.insert(trx, {
          rootAccountId: principal.rootAccountId,
          customerName: body.customerName,
          internalName: body.internalName ?? body.customerName,
          description: body.description ?? '',
          defaultPriceMinor: toMinorUnits(body.defaultPrice),
          currency: DEFAULT_CURRENCY,
          insurerName: body.insurerName ?? '',
          claimsPhoneNumber: body.claimsPhoneNumber ?? '',
          masterPolicyNumber: body.masterPolicyNumber ?? '',
          deductibleMinor: toMinorUnits(body.deductible ?? 0),
          isRecurring: body.isRecurring ?? false,
          isTestMode,
          questionSetId: body.questionSetId ?? null,
          insurerRootAccountId: body.insurerRootAccountID ?? null,
          mgaRootAccountId: body.mgaRootAccountID ?? null,
        });
        await products.approveForOwner(trx, row.id, row.rootAccountId);
        const ids = await catalog.createProductWithPrice({
          mode: isTestMode ? 'test' : 'live',
          productLineId: row.id,
          rootAccountId: row.rootAccountId,
          name: row.customerName,
          description: row.description,
          price: { unitAmountMinor: row.defaultPriceMinor, currency: row.currency, recurring: row.isRecurring },
        });
        return products.update(trx, row.id, { payprocProductId: ids.productId, payprocPriceId: ids.priceId });
      });
      return toProductCreated(created, unitOf(await coverageUnits([created]), created));
    },

    /** One product line in the read shape; 404 when outside the caller's scope. */
    async get(principal: Principal, id: number): Promise<ProductRead> {
      return read(await scopedProduct(principal, id));
    },

    /** The product's cancellation terms (the defaults until set); 404 when outside the caller's scope. */
    async getCancellationTerms(principal: Principal, id: number): Promise<CancellationTermsRead> {
      await scopedProduct(principal, id);
      return toCancellationTermsRead(id, (await products.cancellationTerms([id])).get(id)!);
    },

    /**
     * Changes the sent cancellation terms; the others keep their value. The product row is locked
     * for the change, so two changes at once apply one after the other. 404 outside the scope.
     * Purchases made from then on carry the new terms; those already sold keep theirs.
     */
    async updateCancellationTerms(principal: Principal, id: number, body: UpdateCancellationTermsBody): Promise<CancellationTermsRead> {
      const saved = await withLockedProduct(principal, id, async (trx) => {
        const current = (await products.cancellationTerms([id], trx)).get(id)!.terms;
        return products.saveCancellationTerms(trx, id, {
          freeLookDays: body.free_look_days ?? current.freeLookDays,
          refundMethod: body.refund_method ?? current.refundMethod,
          insurerRefundMethod: body.insurer_refund_method ?? current.insurerRefundMethod,
          shortRatePenaltyBps: body.short_rate_penalty_bps ?? current.shortRatePenaltyBps,
          platformFeeRefundable: body.platform_fee_refundable ?? current.platformFeeRefundable,
          minimumEarnedPremiumMinor: body.minimum_earned_premium ?? current.minimumEarnedPremiumMinor,
          buyerWithdrawal: body.buyer_withdrawal ?? current.buyerWithdrawal,
        });
      });
      return toCancellationTermsRead(id, saved);
    },

    /** The product's endorsement terms (both allowed until set); 404 when outside the caller's scope. */
    async getEndorsementTerms(principal: Principal, id: number): Promise<EndorsementTermsRead> {
      await scopedProduct(principal, id);
      return toEndorsementTermsRead(id, (await products.endorsementTerms([id])).get(id)!);
    },

    /** Changes the sent endorsement terms (the product row locked, so two changes apply one after the other); they apply to holders added from then on. 404 outside the scope. */
    async updateEndorsementTerms(principal: Principal, id: number, body: UpdateEndorsementTermsBody): Promise<EndorsementTermsRead> {
      const saved = await withLockedProduct(principal, id, async (trx) => {
        const current = (await products.endorsementTerms([id], trx)).get(id)!;
        return products.saveEndorsementTerms(trx, id, {
          allowsAdditionalInsured: body.allows_additional_insured ?? current.allowsAdditionalInsured,
          allowsWaiverOfSubrogation: body.allows_waiver_of_subrogation ?? current.allowsWaiverOfSubrogation,
          additionalInsuredPremiumMinor: body.additional_insured_premium ?? current.additionalInsuredPremiumMinor,
          waiverOfSubrogationPremiumMinor: body.waiver_of_subrogation_premium ?? current.waiverOfSubrogationPremiumMinor,
        });
      });
      return toEndorsementTermsRead(id, saved);
    },

    /** A page of the caller's product lines, newest first, with the total. */
    async list(principal: Principal, q: ListProductsQuery): Promise<{ items: ProductRead[]; total: number }> {
      // Another account's id simply matches nothing: lists never reveal other accounts.
      if (q.agencyRootAccountID !== undefined && q.agencyRootAccountID !== principal.rootAccountId) {
        return { items: [], total: 0 };
      }
      const page = await products.list(scopeOf(principal), {
        isActive: q.isActive,
        isTestMode: q.isTestMode,
        limit: q.pageSize,
        offset: q.pageIndex * q.pageSize,
      });
      const units = await coverageUnits(page.items);
      return { items: page.items.map((p) => toProductRead(p, unitOf(units, p))), total: page.total };
    },

    /**
     * Archives a test-mode product: it stops selling (inactive, also at the processor) and is gone
     * from the products API (list, read, change, bundle links) and the catalog; purchases and
     * certificates that name it are untouched. Archiving it again answers the same instant.
     * Errors: NOT_FOUND (404) outside the key's scope; ARCHIVE_NOT_ALLOWED (409) for a live
     * product (stop selling it with `isActive: false`; live records stay).
     */
    async archive(principal: Principal, id: number): Promise<{ id: number; archivedAt: string }> {
      const archivedAt = await products.transaction(async (trx) => {
        const found = await products.findForArchive(trx, id, scopeOf(principal));
        if (!found) throw notFound('product', id);
        const { product, archivedAt: already } = found;
        if (!product.isTestMode) {
          throw new AppError(
            'ARCHIVE_NOT_ALLOWED',
            'Only a test-mode product can be archived; stop selling a live product with isActive: false',
          );
        }
        if (already) return already;
        const version = product.version + 1;
        if (product.payprocProductId && product.isActive) {
          await catalog.updateProduct({ mode: 'test', productLineId: id, version, productId: product.payprocProductId, active: false });
        }
        return products.markArchived(trx, id, version);
      });
      return { id, archivedAt: archivedAt.toISOString() };
    },

    /**
     * Changes only the sent fields. `agencyRootAccountID` and `isTestMode` cannot change.
     * A new price (amount or recurrence) creates a processor price and retires the old one;
     * name, description and active changes are mirrored to the processor product. The row is
     * locked for the whole unit of work; a processor failure rolls the row back.
     */
    async update(principal: Principal, id: number, body: UpdateProductBody): Promise<ProductRead> {
      await assertQuestionSetUsable(principal, body.questionSetId);
      await assertParties(principal.rootAccountId, body);
      const updated = await products.transaction(async (trx) => {
        const current = await scopedProduct(principal, id, trx);
        if (body.agencyRootAccountID !== undefined && body.agencyRootAccountID !== current.rootAccountId) {
          throw new AppError('VALIDATION_ERROR', 'agencyRootAccountID cannot be changed', {
            details: [{ path: 'agencyRootAccountID', message: 'cannot be changed by update' }],
          });
        }
        if (body.isTestMode !== undefined && body.isTestMode !== current.isTestMode) {
          throw new AppError('VALIDATION_ERROR', 'isTestMode cannot be changed', {
            details: [{ path: 'isTestMode', message: 'cannot be changed by update' }],
          });
        }
        const write: ProductLineWrite = {
          customerName: body.customerName,
          internalName: body.internalName,
          description: body.description,
          defaultPriceMinor: body.defaultPrice === undefined ? undefined : toMinorUnits(body.defaultPrice),
          insurerName: body.insurerName,
          claimsPhoneNumber: body.claimsPhoneNumber,
          masterPolicyNumber: body.masterPolicyNumber,
          questionSetId: body.questionSetId,
          deductibleMinor: body.deductible === undefined ? undefined : toMinorUnits(body.deductible),
          isRecurring: body.isRecurring,
          isActive: body.isActive,
          insurerRootAccountId: body.insurerRootAccountID,
          mgaRootAccountId: body.mgaRootAccountID,
        };
        const version = current.version + 1;
        const mode = current.isTestMode ? 'test' : 'live';
        const priceChanged =
          (write.defaultPriceMinor !== undefined && write.defaultPriceMinor !== current.defaultPriceMinor) ||
          (write.isRecurring !== undefined && write.isRecurring !== current.isRecurring);
        const productChanged =
          (write.customerName !== undefined && write.customerName !== current.customerName) ||
          (write.description !== undefined && write.description !== current.description) ||
          (write.isActive !== undefined && write.isActive !== current.isActive);

        if (current.payprocProductId && productChanged) {
          await catalog.updateProduct({
            mode,
            productLineId: id,
            version,
            productId: current.payprocProductId,
            name: write.customerName,
            description: write.description,
            active: write.isActive,
          });
        }
        if (current.payprocProductId && priceChanged) {
          const { priceId } = await catalog.replacePrice({
            mode,
            productLineId: id,
            version,
            productId: current.payprocProductId,
            oldPriceId: current.payprocPriceId,
            price: {
              unitAmountMinor: write.defaultPriceMinor ?? current.defaultPriceMinor,
              currency: current.currency,
              recurring: write.isRecurring ?? current.isRecurring,
            },
          });
          write.payprocPriceId = priceId;
        }
        return products.update(trx, id, { ...write, version });
      });
      return read(updated);
    },
  };
}

export type ProductService = ReturnType<typeof createProductService>;
