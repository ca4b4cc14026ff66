/**
 * Choosing the trigram-index lookup ("probe") for a search phrase.
 *
 * The trigram index is over `search_key`, the search document without the characters that are
 * not letters, digits or line breaks (`purchase_search_fold`, migration 20261123001000). The
 * probe is one part of the phrase (a substring); SQL folds it the same way and looks up
 * `search_key LIKE '%<folded part>%'`. Deleting characters keeps substrings, so every purchase
 * whose document holds the phrase has a key holding the folded part: a probe only narrows the
 * candidates, and each one is still checked against the phrase itself.
 *
 * What a lookup costs (measured at 1 000 000 purchases): reading the index entries of each
 * trigram of the part, about 8 ns per row holding it (`coi`, in every certificate number, is
 * 8 ms on its own), plus fetching and checking every candidate row the trigrams leave, about
 * 2 µs each. So the best part is neither the whole phrase (common trigrams cost reading) nor
 * its rarest word alone (too many candidates): it is the window of the folded phrase that
 * minimises `sum(share of rows holding each trigram) + 250 × share of rows holding all of
 * them`, with the shares estimated on a sample of the table's rows (`TrigramSample`). At 1 000 000 purchases `COI-16` becomes `I-16` (`i16`: 11 053 rows
 * hold it, 10 775 of them match) and `patrick.kim.267992@example.com` becomes `ck.ki` (no
 * trigram of `example.com`, which every row holds).
 */

/** Longest probe considered, in folded characters (at most this minus two trigrams). */
const MAX_WINDOW = 12;
/** Folded characters of a long phrase a probe may start in (bounds the work on huge input). */
const MAX_START = 64;
/** Cost of a candidate row (fetch and check) relative to reading one index entry. */
const CANDIDATE_COST = 250;
/** Fixed cost of looking up one trigram in the index, as a share of the table's rows read. */
const LOOKUP_COST = 0.0005;
/** Folded characters of the probe chosen without a sample (before the table's first ANALYZE). */
const UNSAMPLED_WINDOW = 10;
/** Sample rows used at most (row indices are 16-bit). */
const MAX_SAMPLE = 65_535;

/** Which rows of a sample of `search_key` hold each trigram (lower-case folded text, 3 characters). */
export interface TrigramSample {
  /** Rows in the sample. */
  size: number;
  /** Trigram → ascending indices of the sample rows holding it. */
  rows: Map<string, Uint16Array>;
}

/** A sample of the search table's rows, for estimates (see `tableSample` in ./repository.ts). */
export interface TableSample {
  trigrams: TrigramSample;
  /** `search_key` of each sample row. */
  keys: string[];
  /** `product_line_ids` of each sample row. */
  productLineIds: number[][];
  /** Sample rows by scope (scopeKey), and by root account and mode over all its teammates (rootScopeKey). */
  scopeRows: Map<string, number>;
  /** Estimated rows in the table. */
  tableRows: number;
}

/** Whose a sampled row is: its root account, teammate (null: none) and mode. */
export interface SampleScope {
  rootAccountId: number;
  agentId: number | null;
  mode: string;
}

/** A scope as the sample counts it: `root/agent/mode` (agent empty when none). */
const scopeKey = (s: SampleScope) => `${s.rootAccountId}/${s.agentId ?? ''}/${s.mode}`;

/** A root account's whole scope in `TableSample.scopeRows`, every teammate's rows and those of none. */
const rootScopeKey = (rootAccountId: number, mode: string) => `${rootAccountId}/*/${mode}`;

/** The sample of rows `keys` / `productLineIds` / `scopes` (aligned) out of about `tableRows`. */
export function tableSample(keys: string[], productLineIds: number[][], scopes: readonly SampleScope[], tableRows: number): TableSample {
  const scopeRows = new Map<string, number>();
  for (const s of scopes) {
    for (const k of [scopeKey(s), rootScopeKey(s.rootAccountId, s.mode)]) scopeRows.set(k, (scopeRows.get(k) ?? 0) + 1);
  }
  return { trigrams: trigramSample(keys), keys, productLineIds, scopeRows, tableRows };
}

/**
 * About how many rows of the table lie in a scope: a root account and mode, narrowed to one
 * teammate unless `agentId` is null (the share of the sample's rows in it, times the table's rows).
 */
export function estimatedScopeRows(sample: TableSample, scope: SampleScope): number {
  const key = scope.agentId === null ? rootScopeKey(scope.rootAccountId, scope.mode) : scopeKey(scope);
  return ((sample.scopeRows.get(key) ?? 0) / Math.max(sample.keys.length, 1)) * sample.tableRows;
}

/**
 * About how many rows of the table match `phrase` (its folded form in the key, or one of
 * `productLineIds`), from the sample: a superset of the matches' share, times the table's rows.
 */
export function estimatedMatches(sample: TableSample, phrase: string, productLineIds: readonly number[]): number {
  const folded = foldWithOrigins(phrase)
    .map((c) => c.char)
    .join('');
  const hit = new Uint8Array(sample.keys.length);
  if (folded !== '') {
    // A key holding the folded phrase holds each of its trigrams on one line (the fold keeps no
    // line break), so only the rows of its rarest trigram need the substring test; a phrase too
    // short for a trigram tests every row.
    const chars = [...folded];
    let rows: ArrayLike<number> | null = null;
    for (let i = 0; i + 3 <= chars.length && i < MAX_START; i++) {
      const list = sample.trigrams.rows.get(chars[i]! + chars[i + 1]! + chars[i + 2]!) ?? new Uint16Array(0);
      if (!rows || list.length < rows.length) rows = list;
    }
    const test = (r: number) => {
      if (sample.keys[r]!.includes(folded)) hit[r] = 1;
    };
    if (rows && sample.trigrams.size === sample.keys.length) for (let j = 0; j < rows.length; j++) test(rows[j]!);
    else for (let r = 0; r < sample.keys.length; r++) test(r);
  }
  if (productLineIds.length > 0) {
    const ids = new Set(productLineIds);
    for (let r = 0; r < sample.keys.length; r++) if (!hit[r] && sample.productLineIds[r]!.some((id) => ids.has(id))) hit[r] = 1;
  }
  let hits = 0;
  for (let r = 0; r < hit.length; r++) hits += hit[r]!;
  return (hits / Math.max(sample.keys.length, 1)) * sample.tableRows;
}

/** `true` for the characters the fold keeps: letters and digits (PostgreSQL's `[:alnum:]`, in Unicode terms). */
const KEPT = /^[\p{L}\p{N}]$/u;

/**
 * `text` lower-cased and folded as `purchase_search_fold` folds it, one entry per kept
 * character (code point) with the span of `text` (UTF-16 offsets) it came from.
 */
export function foldWithOrigins(text: string): Array<{ char: string; from: number; to: number }> {
  const out: Array<{ char: string; from: number; to: number }> = [];
  let at = 0;
  for (const c of text) {
    for (const l of c.toLowerCase()) if (KEPT.test(l)) out.push({ char: l, from: at, to: at + c.length });
    at += c.length;
  }
  return out;
}

/** The trigram sample of `keys` (values of `search_key`, already lower case and folded). */
export function trigramSample(keys: readonly string[]): TrigramSample {
  const used = keys.slice(0, MAX_SAMPLE);
  const lists = new Map<string, number[]>();
  used.forEach((key, row) => {
    for (const line of key.split('\n')) {
      // Three UTF-16 units are three characters unless the line holds surrogate pairs.
      const chars = /[\uD800-\uDFFF]/.test(line) ? [...line] : null;
      const length = chars ? chars.length : line.length;
      for (let i = 0; i + 3 <= length; i++) {
        const t = chars ? chars[i]! + chars[i + 1]! + chars[i + 2]! : line.slice(i, i + 3);
        const list = lists.get(t);
        if (!list) lists.set(t, [row]);
        else if (list[list.length - 1] !== row) list.push(row);
      }
    }
  });
  const rows = new Map<string, Uint16Array>();
  for (const [t, list] of lists) rows.set(t, Uint16Array.from(list));
  return { size: used.length, rows };
}

/** What reading one trigram index entry costs, µs (8 ns, measured at 1 000 000 purchases). */
export const INDEX_ENTRY_US = 0.008;

/**
 * The part of `phrase` (a substring of it) the trigram index should look up (`probe`), with
 * what looking it up is estimated to cost (`cost`: the share of the table's rows it reads as
 * index entries plus CANDIDATE_COST × the share it leaves as candidate rows, so
 * `cost × table rows × INDEX_ENTRY_US` is about the lookup's time in µs); null when no part
 * gives a trigram (fewer than three letters and digits). `sample`: null when none was taken (an
 * empty table); the first `UNSAMPLED_WINDOW` folded characters are the probe then, cost null.
 */
export function choosePhraseLookup(phrase: string, sample: TrigramSample | null): { probe: string; cost: number | null } | null {
  const folded = foldWithOrigins(phrase);
  if (folded.length < 3) return null;
  const span = (a: number, b: number) => phrase.slice(folded[a]!.from, folded[b - 1]!.to);
  if (!sample || sample.size === 0) return { probe: span(0, Math.min(folded.length, UNSAMPLED_WINDOW)), cost: null };

  const n = sample.size;
  const words = Math.ceil(n / 32);
  const floor = 0.5 / n; // a trigram or window no sample row holds: rarer than one in n
  // Windows start in the first MAX_START characters, so later trigrams are never looked at.
  const considered = Math.min(folded.length, MAX_START + MAX_WINDOW) - 2;
  const trigrams = Array.from({ length: considered }, (_, i) => folded[i]!.char + folded[i + 1]!.char + folded[i + 2]!.char);
  const bitsCache = new Map<string, Uint32Array>();
  const bitsOf = (t: string): Uint32Array => {
    let bits = bitsCache.get(t);
    if (!bits) {
      bits = new Uint32Array(words);
      for (const r of sample.rows.get(t) ?? []) bits[r >>> 5]! |= 1 << (r & 31);
      bitsCache.set(t, bits);
    }
    return bits;
  };
  const shares = trigrams.map((t) => (sample.rows.get(t)?.length ?? 0) / n);
  // How often trigram i + 1 follows where trigram i is (they share two characters, so they are far from
  // independent): the estimate of a window no sample row holds whole chains these, as a Markov chain.
  const follows = trigrams.map((t, i) => {
    if (i === 0) return 1;
    const before = Math.max(shares[i - 1]!, floor);
    const together = countBits(bitsOf(trigrams[i - 1]!), bitsOf(t), words) / n;
    return Math.min(1, (together > 0 ? together : Math.min(floor, before, Math.max(shares[i]!, floor))) / before);
  });

  let best = { cost: Infinity, a: 0, b: 3 };
  const running = new Uint32Array(words);
  for (let a = 0; a < trigrams.length && a < MAX_START; a++) {
    running.set(bitsOf(trigrams[a]!));
    let read = 0;
    let chain = Math.max(shares[a]!, floor);
    for (let i = a; i < trigrams.length && i + 3 - a <= MAX_WINDOW; i++) {
      if (i > a) {
        const bits = bitsOf(trigrams[i]!);
        for (let w = 0; w < words; w++) running[w]! &= bits[w]!;
        chain *= follows[i]!;
      }
      read += shares[i]! + LOOKUP_COST;
      const together = countBits(running, running, words);
      // Rows holding every trigram: counted in the sample, or (none there) estimated by the chain.
      const candidates = together > 0 ? together / n : Math.min(floor, chain);
      const cost = read + CANDIDATE_COST * candidates;
      if (cost < best.cost) best = { cost, a, b: i + 3 };
    }
  }
  return { probe: span(best.a, best.b), cost: best.cost };
}

/** Sample rows set in both `x` and `y`. */
function countBits(x: Uint32Array, y: Uint32Array, words: number): number {
  let c = 0;
  for (let w = 0; w < words; w++) c += popcount(x[w]! & y[w]!);
  return c;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
