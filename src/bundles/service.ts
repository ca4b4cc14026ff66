/**
 * Bundle use cases (spec §2.3, §4.1; ARCHITECTURE §4): tenancy, test mode, the bundle rules
 * and the checks that need the database. Takes bodies already parsed by `schemas.ts`, returns
 * plain records (prices in minor units, dates as `Date`); the routes shape them for the wire.
 *
 * Errors (AppError): NOT_FOUND for a bundle that does not exist, belongs to another account or
 * is live-mode while the key is a test key; VALIDATION_ERROR naming the field for rule 2, a root
 * id outside the key's reach, a product id the key cannot link, a question set that is neither
 * shared nor the key's account's (as for products), or a test-mode mismatch.
 */
import type { Principal } from '../api-keys/service';
import { AppError, notFound, type FieldIssue } from '../shared/errors';
import { BUNDLE_SORT_COLUMNS, type CreateBundleBody, type ListBundlesQuery, type UpdateBundleBody } from './schemas';
import type { BundleFields, BundleRecord, BundleWithLinks, BundlesRepository, Scope } from './repository';
import type { QuestionSetsRepository } from '../question-sets/repository';

type Conn = Parameters<Parameters<BundlesRepository['transaction']>[0]>[0];
type RootIds = Pick<BundleFields, 'rootInsurerDbId' | 'rootMgaDbId' | 'rootSellerDbId'>;

export interface BundlePage {
  rows: BundleRecord[];
  total: number;
  page: number;
  limit: number;
}

/** The bundles a key may see: its own account's; only test-mode ones for a test key. */
function scopeOf(p: Principal): Scope {
  return { rootAccountId: p.rootAccountId, testModeOnly: p.mode === 'test' };
}

/** One VALIDATION_ERROR listing every issue, worded like `parseBody`'s. */
function invalid(issues: FieldIssue[]): AppError {
  const first = issues[0]!;
  return new AppError('VALIDATION_ERROR', `Invalid request body: ${first.path}: ${first.message}`, { details: issues });
}

const modeName = (isTest: boolean) => (isTest ? 'test-mode' : 'live-mode');

/** Maps only the body fields that were sent, so an update writes nothing else. */
function sentFields(body: UpdateBundleBody): Partial<BundleFields> {
  const out: Partial<BundleFields> = {};
  if (body.bundle_name !== undefined) out.bundleName = body.bundle_name;
  if (body.customer_facing_name !== undefined) out.customerFacingName = body.customer_facing_name;
  if (body.internally_facing_name !== undefined) out.internallyFacingName = body.internally_facing_name;
  if (body.bundle_description !== undefined) out.bundleDescription = body.bundle_description;
  if (body.is_recurring !== undefined) out.isRecurring = body.is_recurring;
  if (body.is_test_mode !== undefined) out.isTestMode = body.is_test_mode;
  if (body.root_insurer_db_id !== undefined) out.rootInsurerDbId = body.root_insurer_db_id;
  if (body.root_mga_db_id !== undefined) out.rootMgaDbId = body.root_mga_db_id;
  if (body.root_seller_db_id !== undefined) out.rootSellerDbId = body.root_seller_db_id;
  if (body.question_set_id !== undefined) out.questionSetId = body.question_set_id;
  return out;
}

export function createBundleService(deps: { bundles: BundlesRepository; questionSets: Pick<QuestionSetsRepository, 'findUsable'> }) {
  const repo = deps.bundles;

  /**
   * A question set being written must be shared or the key's account's (the products rule):
   * another account's set and a missing one get the same message, so ids leak nothing.
   */
  async function questionSetIssues(conn: Conn, p: Principal, id: number | null | undefined): Promise<FieldIssue[]> {
    if (id == null || (await deps.questionSets.findUsable(id, p.rootAccountId, conn))) return [];
    return [{ path: 'question_set_id', message: `no question set ${id} is available to this account` }];
  }

  /** A test key manages test-mode bundles only (decision shared with products). */
  function modeIssues(p: Principal, isTestMode: boolean | undefined): FieldIssue[] {
    if (p.mode === 'test' && isTestMode === false) {
      return [{ path: 'is_test_mode', message: 'a test-mode API key can only create or change test-mode bundles' }];
    }
    return [];
  }

  /** Spec §2.3 rule 2, on the state the bundle will have after the write. */
  function rootRequiredIssues(productCount: number, roots: RootIds): FieldIssue[] {
    if (productCount > 0 && roots.rootInsurerDbId == null && roots.rootMgaDbId == null && roots.rootSellerDbId == null) {
      return [
        {
          path: 'product_ids',
          message: 'one of root_insurer_db_id, root_mga_db_id or root_seller_db_id is required when the bundle has products',
        },
      ];
    }
    return [];
  }

  /**
   * Reach of the root ids that are being written (null clears and needs no check): the seller
   * is the key's own account; insurer and MGA must be root accounts of that kind. A missing
   * account and one of the wrong kind get the same message.
   */
  async function reachIssues(conn: Conn, p: Principal, roots: Partial<RootIds>): Promise<FieldIssue[]> {
    const issues: FieldIssue[] = [];
    if (roots.rootSellerDbId != null && roots.rootSellerDbId !== p.rootAccountId) {
      issues.push({ path: 'root_seller_db_id', message: `root account ${roots.rootSellerDbId} is not this API key's root account` });
    }
    const wanted = [
      ['root_insurer_db_id', roots.rootInsurerDbId, 'insurer'],
      ['root_mga_db_id', roots.rootMgaDbId, 'mga'],
    ] as const;
    const ids = wanted.flatMap(([, id]) => (id == null ? [] : [id]));
    const kinds = await repo.rootAccountKinds(conn, ids);
    for (const [path, id, kind] of wanted) {
      if (id != null && kinds.get(id) !== kind) issues.push({ path, message: `no ${kind} root account with id ${id}` });
    }
    return issues;
  }

  /**
   * Every id must be a product line of the key's account that the key's mode can see
   * (otherwise "not found", whatever the reason, so other accounts' ids leak nothing), and
   * share the bundle's test mode.
   */
  async function productIssues(conn: Conn, p: Principal, ids: number[], bundleIsTestMode: boolean): Promise<FieldIssue[]> {
    const found = new Map((await repo.findProductLines(conn, ids)).map((r) => [r.id, r]));
    const issues: FieldIssue[] = [];
    ids.forEach((id, i) => {
      const product = found.get(id);
      const visible = product && product.rootAccountId === p.rootAccountId && (p.mode === 'live' || product.isTestMode);
      if (!visible) {
        issues.push({ path: `product_ids.${i}`, message: `product ${id} not found` });
      } else if (product.isTestMode !== bundleIsTestMode) {
        issues.push({
          path: `product_ids.${i}`,
          message: `product ${id} is ${modeName(product.isTestMode)} but the bundle is ${modeName(bundleIsTestMode)}`,
        });
      }
    });
    return issues;
  }

  /** Re-reads inside the transaction, so the response is exactly what was committed. */
  async function reload(conn: Conn, p: Principal, id: number): Promise<BundleWithLinks> {
    const bundle = await repo.findById(scopeOf(p), id, conn);
    if (!bundle) throw notFound('bundle', id);
    return bundle;
  }

  return {
    /**
     * `POST /bundles`: creates a bundle owned by the key's account with its links (first of
     * `product_ids` primary) and a matching `product_line_count`, in one transaction.
     * Defaults: both display names = `bundle_name`, description '', not recurring, test mode =
     * the key's mode. Throws VALIDATION_ERROR (see module doc).
     */
    async create(p: Principal, body: CreateBundleBody): Promise<BundleWithLinks> {
      const fields: BundleFields = {
        bundleName: body.bundle_name,
        customerFacingName: body.customer_facing_name ?? body.bundle_name,
        internallyFacingName: body.internally_facing_name ?? body.bundle_name,
        bundleDescription: body.bundle_description ?? '',
        isRecurring: body.is_recurring ?? false,
        isTestMode: body.is_test_mode ?? p.mode === 'test',
        rootInsurerDbId: body.root_insurer_db_id ?? null,
        rootMgaDbId: body.root_mga_db_id ?? null,
        rootSellerDbId: body.root_seller_db_id ?? null,
        questionSetId: body.question_set_id ?? null,
      };
      const productIds = body.product_ids ?? [];
      return repo.transaction(async (trx) => {
        const issues = [
          ...modeIssues(p, body.is_test_mode),
          ...rootRequiredIssues(productIds.length, fields),
          ...(await reachIssues(trx, p, fields)),
          ...(await questionSetIssues(trx, p, fields.questionSetId)),
          ...(await productIssues(trx, p, productIds, fields.isTestMode)),
        ];
        if (issues.length) throw invalid(issues);
        const id = await repo.insert(trx, p.rootAccountId, fields);
        if (productIds.length) await repo.replaceLinks(trx, id, productIds);
        return reload(trx, p, id);
      });
    },

    /** `GET /bundles/{id}`: the bundle with its links; NOT_FOUND outside the key's scope. */
    async get(p: Principal, id: number): Promise<BundleWithLinks> {
      const bundle = await repo.findById(scopeOf(p), id);
      if (!bundle) throw notFound('bundle', id);
      return bundle;
    },

    /**
     * `PATCH /bundles/{id}`: changes only the sent fields and bumps `updated_at`; `product_ids`
     * replaces the links (spec §2.3 rule 4). The bundle row is locked for the transaction and
     * every rule is checked on the resulting state. Throws NOT_FOUND or VALIDATION_ERROR.
     */
    async update(p: Principal, id: number, body: UpdateBundleBody): Promise<BundleWithLinks> {
      const changes = sentFields(body);
      return repo.transaction(async (trx) => {
        const current = await repo.lockById(trx, scopeOf(p), id);
        if (!current) throw notFound('bundle', id);
        const isTestMode = changes.isTestMode ?? current.isTestMode;
        const roots: RootIds = {
          rootInsurerDbId: changes.rootInsurerDbId !== undefined ? changes.rootInsurerDbId : current.rootInsurerDbId,
          rootMgaDbId: changes.rootMgaDbId !== undefined ? changes.rootMgaDbId : current.rootMgaDbId,
          rootSellerDbId: changes.rootSellerDbId !== undefined ? changes.rootSellerDbId : current.rootSellerDbId,
        };
        // When the links stay, a change of mode must still suit the products already linked.
        const productIds = body.product_ids ?? current.links.map((l) => l.productLineId);
        const modeChanged = isTestMode !== current.isTestMode;
        const issues = [
          ...modeIssues(p, body.is_test_mode),
          ...rootRequiredIssues(productIds.length, roots),
          ...(await reachIssues(trx, p, changes)),
          ...(await questionSetIssues(trx, p, changes.questionSetId)),
          ...(body.product_ids !== undefined || modeChanged ? await productIssues(trx, p, productIds, isTestMode) : []),
        ];
        if (issues.length) {
          throw invalid(
            body.product_ids === undefined
              ? issues.map((i) => (i.path.startsWith('product_ids.') ? { path: 'is_test_mode', message: `linked ${i.message}` } : i))
              : issues,
          );
        }
        await repo.update(trx, id, changes);
        if (body.product_ids !== undefined) await repo.replaceLinks(trx, id, body.product_ids);
        return reload(trx, p, id);
      });
    },

    /** `DELETE /bundles/{id}`: removes the bundle and its links, never the products; NOT_FOUND outside scope. */
    async remove(p: Principal, id: number): Promise<void> {
      if (!(await repo.delete(scopeOf(p), id))) throw notFound('bundle', id);
    },

    /**
     * `GET /bundles`: one page (one-based `page`) of the key's bundles, filtered and sorted per
     * spec §4.1, ties broken by id in the same direction, and the total that match.
     */
    async list(p: Principal, q: ListBundlesQuery): Promise<BundlePage> {
      const { rows, total } = await repo.list(scopeOf(p), {
        filter: {
          isTestMode: q.test_mode,
          isRecurring: q.is_recurring,
          rootInsurerDbId: q.root_insurer_db_id,
          rootMgaDbId: q.root_mga_db_id,
          rootSellerDbId: q.root_seller_db_id,
          search: q.search || undefined,
        },
        sort: BUNDLE_SORT_COLUMNS[q.sort],
        order: q.order,
        limit: q.limit,
        offset: (q.page - 1) * q.limit,
      });
      return { rows, total, page: q.page, limit: q.limit };
    },
  };
}

export type BundleService = ReturnType<typeof createBundleService>;
