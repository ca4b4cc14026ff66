/**
 * Purchase search, `searchTeammatePurchasedProducts` (spec §4.5; issue 7): free text over the
 * PAID purchases of one scope — the calling teammate's sales on `/platform-agency-certs`, every
 * sale of the root account on `/platform-agency-root-certs` — in the API key's mode only.
 *
 * The search text is normalised (whitespace and control characters collapsed to one space,
 * trimmed) and matched as one case-insensitive phrase inside the buyer's name ("first last"),
 * the buyer's email, a product's customer-facing name or a certificate number; `%`, `_`, `\` and
 * quotes are plain text. Empty text lists everything. Order: newest payment first; a purchase
 * holding a certificate whose number IS the text (exact, case-insensitive) comes first on page 0.
 *
 * How a page is found (measured by `npm run bench -- search`; docs/decisions.md): the matches
 * are counted up to SEARCH_COUNT_CAP + 1 through the trigram / product indexes, in the same
 * statement that sorts them and cuts the page when that is all of them. When there are more,
 * they are dense somewhere, and the page comes from walking the newest rows of the scope in
 * order (bounded; older matches again through the indexes). A phrase the table sample shows so
 * common that the cap is reached within a short walk is counted by that walk instead; one it
 * shows to have more matches than the cap in the scope, but sparser, finds its page first (when
 * that page comes from the older matches, gathering them counts them too). Walks read the scope
 * index alone once the phrase's few text matches are gathered (product lines are in the index).
 * An empty search walks the index.
 *
 * Errors (bare body, spec §7.2): 404 TEAMMATE_NOT_FOUND / SELLER_NOT_FOUND from the account
 * scope (src/accounts/scope.ts); validation is the route's (400 VALIDATION_ERROR).
 */
import type { Principal } from '../api-keys/service';
import type { AccountScope, AccountScopes } from '../accounts/scope';
import type { Edge, PurchaseSearchRepository, PurchaseSearchRow, SearchMatch, SearchScope } from './repository';
import { choosePhraseLookup, estimatedMatches, estimatedScopeRows, INDEX_ENTRY_US, tableSample, type TableSample } from './probe';
import {
  LISTED_CERTIFICATE_NUMBERS,
  SEARCH_COUNT_CAP,
  SEARCH_RESULT_WINDOW,
  type PurchaseSearchHit,
  type PurchaseSearchResponse,
  type SearchRootPurchasesRequest,
  type SearchTeammatePurchasesRequest,
} from './schemas';

/** Longest string that can be a certificate number (certificates.certificate_number is varchar(64)). */
const MAX_CERTIFICATE_NUMBER = 64;

/** The search text as it is matched: runs of whitespace and control characters → one space, trimmed. */
export function normalizeSearchText(text: string): string {
  return text.replace(/[\s\p{Cc}]+/gu, ' ').trim();
}

type Paging = { search_text: string; page_size: number; page_index: number };
type Slice = { offset: number; limit: number; excludePurchaseId: number | null };

function toHit(r: PurchaseSearchRow): PurchaseSearchHit {
  return {
    purchase_id: r.purchaseId,
    payment_intent: r.paymentIntentId,
    paid_at: r.paidAt.toISOString(),
    status: r.status,
    teammate: r.teammate ? { idp_teammate_uuid: r.teammate.idpTeammateUuid, name: r.teammate.name } : null,
    buyer: { idp_accnt_uuid: r.buyer.idpAccntUuid, name: r.buyer.name, email: r.buyer.email },
    products: r.products.map((p) => ({ product_line_id: p.productLineId, product_name: p.productName })),
    bundle: r.bundle,
    certificate_count: r.certificateCount,
    certificate_numbers: r.certificateNumbers,
    matched_certificate_number: r.matchedCertificateNumber,
  };
}

/**
 * Newest rows of a scope a search walks before it judges how dense the matches are (rows; 1.5 ms
 * at 1 000 000 purchases when none match, as for an old certificate number's prefix).
 */
const WALK_WINDOW = 5_000;
/** Longest walk a search makes (rows), for a deep page of a phrase the newest rows show to be common. */
const MAX_WALK = 200_000;
/** How long the end of a scope's newest-rows window is reused, ms (see edgeOf). */
const EDGE_TTL_MS = 60_000;
/** Window ends kept (scopes × window sizes); the oldest go first. */
const MAX_EDGES = 1_000;
/** How long a sample of the search table (for choosing probes) is reused, ms. */
const SAMPLE_TTL_MS = 10 * 60_000;
/**
 * Most text matches gathered before a walk (see pageOfMany); with more, the walk tests each
 * row's document. At most this many ids are hashed per statement (a few hundred µs).
 */
const TEXT_MATCH_CAP = 2_000;
/**
 * What testing a walked row's document costs beyond testing ids in the index, µs: the table
 * row's fetch and the LIKE (8 ms against 4.5 ms over 21 000 rows at 1 000 000 purchases).
 */
const DOCUMENT_TEST_US = 0.15;
/**
 * Longest walk that counts a common phrase's matches up to the count cap (rows, expected from
 * the sample's share of matches): about 5 ms from the index alone. Past it, or when the walk
 * comes up short, they are counted through the trigram and product indexes.
 */
const COUNT_WALK_ROWS = 25_000;

/**
 * `limits` exist for tests, to reach the many-matches paths with a handful of rows: `countCap`
 * (default SEARCH_COUNT_CAP), `walkWindow` (default WALK_WINDOW), `maxWalk` (default MAX_WALK),
 * `textMatchCap` (default TEXT_MATCH_CAP; 0: walks always test the documents), `alwaysGatherText`
 * (gather the text matches before every walk, whatever the estimate says; default false),
 * `alwaysCountByWalk` (count by walking COUNT_WALK_ROWS newest rows first, however rare the
 * sample says the phrase is; default false), `alwaysPageFirst` (find the page before counting,
 * as for a phrase the sample shows to have more matches than the cap, unless counted by a walk;
 * default false).
 */
export function createPurchaseSearchService(deps: {
  repo: PurchaseSearchRepository;
  scopes: AccountScopes;
  now?: () => number;
  limits?: {
    countCap?: number;
    walkWindow?: number;
    maxWalk?: number;
    textMatchCap?: number;
    alwaysGatherText?: boolean;
    alwaysCountByWalk?: boolean;
    alwaysPageFirst?: boolean;
  };
}) {
  const { repo } = deps;
  const now = deps.now ?? Date.now;
  const countCap = deps.limits?.countCap ?? SEARCH_COUNT_CAP;
  const walkWindow = deps.limits?.walkWindow ?? WALK_WINDOW;
  const maxWalk = deps.limits?.maxWalk ?? MAX_WALK;
  const textMatchCap = deps.limits?.textMatchCap ?? TEXT_MATCH_CAP;
  const alwaysGatherText = deps.limits?.alwaysGatherText ?? false;
  const alwaysCountByWalk = deps.limits?.alwaysCountByWalk ?? false;
  const alwaysPageFirst = deps.limits?.alwaysPageFirst ?? false;
  let sample: { rows: TableSample | null; at: number } | null = null;
  /** Window ends by scope and window size, oldest first (see edgeOf). */
  const edges = new Map<string, { edge: Edge | null; at: number }>();
  let loading: Promise<TableSample | null> | null = null;

  /** The cached table sample; refreshed in the background once stale (a failed refresh keeps the old one). */
  async function rowSample(): Promise<TableSample | null> {
    const fresh = sample && now() - sample.at < SAMPLE_TTL_MS;
    if (!fresh && !loading) {
      loading = repo
        .tableSample()
        .then((taken) => {
          const rows = taken ? tableSample(taken.keys, taken.productLineIds, taken.scopes, taken.tableRows) : null;
          sample = { rows, at: now() };
          return rows;
        })
        .catch(() => sample?.rows ?? null)
        .finally(() => {
          loading = null;
        });
    }
    // Only the very first search waits for the sample; later ones use the previous one meanwhile.
    return sample ? sample.rows : loading;
  }

  /**
   * Where the walk of the newest `window` rows of a scope ends (null: the scope has fewer), as
   * found at most EDGE_TTL_MS ago. Reusing it is exact, not approximate: a walk bounded by a row
   * looks at every row down to it, newer rows included, and its continuation starts after it.
   */
  async function edgeOf(scope: SearchScope, window: number): Promise<Edge | null> {
    const key = `${scope.rootAccountId}/${scope.agentId ?? ''}/${scope.mode}/${window}`;
    const cached = edges.get(key);
    if (cached && now() - cached.at < EDGE_TTL_MS) return cached.edge;
    const edge = await repo.edgeAt(scope, window);
    edges.delete(key);
    edges.set(key, { edge, at: now() });
    if (edges.size > MAX_EDGES) edges.delete(edges.keys().next().value!);
    return edge;
  }

  /**
   * `match` with its text matches gathered (`textIds`) when a walk of `rows` rows is coming and
   * looking them up (`lookupUs`, estimated) costs less than testing that many rows' documents,
   * or always with `alwaysGatherText`; unchanged when there are more than `textMatchCap` of them,
   * no probe, or they are gathered already.
   */
  async function withTextMatches(scope: SearchScope, match: SearchMatch, rows: number, lookupUs: number | null): Promise<SearchMatch> {
    if (match.textIds || match.probe === null || textMatchCap <= 0) return match;
    if (!alwaysGatherText && !(lookupUs !== null && lookupUs < DOCUMENT_TEST_US * rows)) return match;
    const textIds = await repo.textMatches(scope, match, textMatchCap);
    return textIds ? { ...match, textIds } : match;
  }

  /**
   * Whether the newest `rows` rows of the scope hold at least `cap` matches (the walk stops at
   * the cap; `full`), and `match` with its text matches gathered (withTextMatches) for the walks
   * that follow. Not walked (`full` false) when the text matches could not be gathered (unless
   * `alwaysCountByWalk`): testing each row's document through the index costs about what the
   * indexes' own count costs.
   */
  async function capWithin(
    scope: SearchScope,
    found: SearchMatch,
    cap: number,
    rows: number,
    lookupUs: number | null,
  ): Promise<{ match: SearchMatch; full: boolean }> {
    const match = await withTextMatches(scope, found, rows, lookupUs);
    if (!match.textIds && !alwaysCountByWalk) return { match, full: false };
    return { match, full: (await repo.countNewest(scope, match, cap, rows)) >= cap };
  }

  /**
   * A slice of a phrase's matches when there are more than the count cap: from a walk over the
   * newest `walkWindow` rows of the scope (more for a deep page) when they hold it (matches
   * spread over time). Else, when those rows show the matches dense enough, the walk goes on
   * past them for as many rows as that density needs (at most `maxWalk` rows in all); else the
   * slice is completed from the older matches through the indexes (matches that lie further
   * back, such as an old certificate number's prefix). No search walks the whole scope.
   *
   * A walk covers at least `offset + limit` rows: the phrase's text matches are gathered first
   * when that pays (withTextMatches), and the walk then reads only the scope index (see the
   * repository's matchTest). Exact either way.
   *
   * `total`: how many matches there are in all, leaving out `slice.excludePurchaseId`, when the
   * slice's search found out (it looked at every row of the scope, or gathered the older
   * matches); null otherwise.
   */
  async function pageOfMany(
    scope: SearchScope,
    found: SearchMatch,
    slice: Slice,
    lookupUs: number | null,
  ): Promise<{ ids: number[]; total: number | null }> {
    // A deep page needs at least offset + limit rows anyway; four times that fills it at a density of 1 in 4.
    const window = Math.min(maxWalk, Math.max(walkWindow, 4 * (slice.offset + slice.limit)));
    const [edge, match] = await Promise.all([edgeOf(scope, window), withTextMatches(scope, found, slice.offset + slice.limit, lookupUs)]);
    const recent = await repo.walk(scope, match, slice, { from: edge });
    if (recent.length === slice.limit) return { ids: recent, total: null };
    // The walk came up short, so it looked at the whole window. When it returned rows (or started
    // at the top) it also counted the window's matches.
    const windowHits = recent.length > 0 || slice.offset === 0 ? slice.offset + recent.length : null;
    if (!edge) return { ids: recent, total: windowHits }; // the window was the whole scope
    // Else the window's matches are counted.
    const hits = windowHits ?? (await repo.countFrom(scope, match, edge, slice.excludePurchaseId));
    // What is left beyond the window: matches to pass over, then the rest of the slice.
    const rest: Slice = {
      offset: Math.max(0, slice.offset - hits),
      limit: slice.limit - recent.length,
      excludePurchaseId: slice.excludePurchaseId,
    };
    // Rows a walk needs for them at the window's density, with half again as margin.
    const rows = hits > 0 ? Math.ceil(((rest.offset + rest.limit) * window * 1.5) / hits) : Infinity;
    if (window + rows <= maxWalk) {
      const further = await repo.walk(scope, match, rest, { after: edge, rows });
      if (further.length === rest.limit) return { ids: [...recent, ...further], total: null };
    }
    const older = await repo.olderMatches(scope, match, edge, rest);
    return { ids: [...recent, ...older.ids], total: hits + older.count };
  }

  /** One page of the scope's matches; see the module comment for matching and order. */
  async function search(account: AccountScope, mode: Principal['mode'], req: Paging): Promise<PurchaseSearchResponse> {
    const scope: SearchScope = { rootAccountId: account.rootAccountId, agentId: account.agentId, mode };
    const phrase = normalizeSearchText(req.search_text);
    const size = req.page_size;
    const start = req.page_index * size;
    const cap = countCap + 1; // one past the cap says whether the total is exact

    let counted: number;
    let ids: number[];
    if (phrase === '') {
      const [n, page] = await Promise.all([
        repo.countAll(scope, cap),
        repo.walk(scope, null, { offset: start, limit: size + 1, excludePurchaseId: null }),
      ]);
      counted = n;
      ids = page;
    } else {
      const mayBeCertificate = phrase.length <= MAX_CERTIFICATE_NUMBER && !phrase.includes(' ');
      const [{ hit, productLineIds }, rows] = await Promise.all([repo.lookups(scope, phrase, mayBeCertificate), rowSample()]);
      const lookup = choosePhraseLookup(phrase, rows?.trigrams ?? null);
      const match: SearchMatch = { phrase, probe: lookup?.probe ?? null, productLineIds };
      // What the probe's lookup costs, µs (null without a sample to estimate it from).
      const lookupUs = lookup?.cost != null && rows ? lookup.cost * rows.tableRows * INDEX_ENTRY_US : null;
      // Result order: the exact certificate hit (if any), then every other match newest first.
      // One row more than the page tells whether another page exists.
      const slice = !hit
        ? { offset: start, limit: size + 1, excludePurchaseId: null }
        : start === 0
          ? { offset: 0, limit: size, excludePurchaseId: hit.purchaseId }
          : { offset: start - 1, limit: size + 1, excludePurchaseId: hit.purchaseId };
      const estimate = rows ? estimatedMatches(rows, phrase, productLineIds) : 0;
      // Rows of the scope holding `cap` matches, at the share of the table's rows the sample shows matching.
      const capRows = rows && estimate > 0 ? Math.ceil((cap * rows.tableRows) / estimate) : Infinity;
      // A phrase so common that `cap` matches lie within COUNT_WALK_ROWS newest rows is counted
      // there (twice the expected rows, as the scope may be sparser than the table); null: it is
      // counted through the indexes.
      const walkRows = estimate >= 2 * cap && capRows <= COUNT_WALK_ROWS ? 2 * capRows : alwaysCountByWalk ? COUNT_WALK_ROWS : null;
      // The matches in all, once a page's search found out (pageOfMany's total; the exact hit is one more).
      const totalOf = (paged: { total: number | null }) => (paged.total === null ? null : paged.total + (hit ? 1 : 0));
      let rest: number[];
      if (slice.offset + slice.limit > cap && estimate >= 2 * (slice.offset + slice.limit)) {
        // A page past the count cap of a phrase the sample shows to be common: the page itself
        // most likely shows more than the cap (rows returned follow exactly `offset` matches), so
        // it comes first and the count only when it does not.
        const paged = await pageOfMany(scope, match, slice, lookupUs);
        rest = paged.ids;
        counted =
          rest.length > 0 && slice.offset + rest.length >= cap
            ? cap
            : (totalOf(paged) ?? (await repo.countAndCollect(scope, match, cap, slice)).count);
      } else if (
        walkRows === null &&
        (alwaysPageFirst || (rows !== null && (estimate * estimatedScopeRows(rows, scope)) / rows.tableRows >= 2 * cap))
      ) {
        // More matches in the scope than the cap, by the sample (the table's share of matches
        // times the scope's rows), though too sparse to count by a short walk.
        // The page comes first: when the newest rows hold too few of them (an old certificate
        // number's prefix: COI-50 matches 10 400 purchases, none recent), the older matches are
        // all gathered and sorted for it, which counts them too; counting first would gather the
        // cap's worth of them once more (about a tenth of such a search: 4.5 of 40 ms alone).
        const paged = await pageOfMany(scope, match, slice, lookupUs);
        rest = paged.ids;
        counted = totalOf(paged) ?? (await repo.countAndCollect(scope, match, cap, slice)).count;
      } else {
        // A phrase common enough is counted by a walk (walkRows; from the index alone when its
        // text matches are few). Else, and when the walk comes up short, up to the count cap every
        // match is gathered through the indexes (count and page in one statement). Beyond the cap
        // matches are many: walk the newest rows of the scope for the page. The text matches
        // gathered for the count serve the page's walk too.
        const common = walkRows !== null ? await capWithin(scope, match, cap, walkRows, lookupUs) : { match, full: false };
        if (common.full) {
          counted = cap;
          rest = (await pageOfMany(scope, common.match, slice, lookupUs)).ids;
        } else {
          const collected = await repo.countAndCollect(scope, match, cap, slice);
          counted = collected.count;
          rest = collected.ids ?? (await pageOfMany(scope, common.match, slice, lookupUs)).ids;
        }
      }
      ids = hit && start === 0 ? [hit.purchaseId, ...rest] : rest;
    }
    const more = ids.length > size;
    const rows = await repo.hydrate(ids.slice(0, size), phrase, LISTED_CERTIFICATE_NUMBERS);
    return {
      total: Math.min(counted, countCap),
      total_exact: counted <= countCap,
      page_index: req.page_index,
      page_size: size,
      has_more: more && start + 2 * size <= SEARCH_RESULT_WINDOW,
      purchases: rows.map(toHit),
    };
  }

  return {
    /** `/platform-agency-certs/searchTeammatePurchasedProducts`: the teammate's paid sales. Throws TEAMMATE_NOT_FOUND. */
    async searchAsTeammate(principal: Principal, req: SearchTeammatePurchasesRequest): Promise<PurchaseSearchResponse> {
      return search(await deps.scopes.teammate(principal, req.idp_teammate_uuid), principal.mode, req);
    },
    /**
     * Every paid sale of an account the caller already holds (the agency portal's signed-in
     * teammate's), as the root surface searches it, without naming the account's public id.
     */
    async searchAccount(
      view: Pick<Principal, 'rootAccountId' | 'mode'>,
      req: Pick<SearchRootPurchasesRequest, 'search_text' | 'page_size' | 'page_index'>,
    ): Promise<PurchaseSearchResponse> {
      return search({ rootAccountId: view.rootAccountId, agentId: null }, view.mode, req);
    },
    /** `/platform-agency-root-certs/searchTeammatePurchasedProducts`: every paid sale of the root account. Throws SELLER_NOT_FOUND. */
    async searchAsRoot(principal: Principal, req: SearchRootPurchasesRequest): Promise<PurchaseSearchResponse> {
      return search(await deps.scopes.root(principal, req.idp_root_account_uuid), principal.mode, req);
    },
  };
}

export type PurchaseSearchService = ReturnType<typeof createPurchaseSearchService>;
