/**
 * Data for the catalog benchmark (`npm run bench -- catalog`): its own database, migrated with
 * the project's migrations, holding a bench agency with `rows` product lines and `rows` bundles
 * (plus bundle links), a second agency with a smaller catalog that tenancy filters must exclude,
 * a few insurer and MGA root accounts for the bundles' root ids, and a live API key issued
 * through the real key service.
 *
 * Seeding is idempotent: when the bench accounts already hold what was asked for (same row
 * counts and seed version, recorded in the account name), the rows are reused.
 *
 * Product lines and bundles are written straight into the tables with multi-row
 * `insert … select from unnest(…)` statements instead of through the services: the services
 * would create a product and price at the payment processor for each of 100 000 products,
 * which takes hours and adds nothing to what is measured here (the list endpoints read only
 * PostgreSQL). The rows still satisfy every rule the services enforce (links only within the
 * account and mode, first link primary, a root id on bundles with links, a correct
 * `product_line_count`).
 */
import { performance } from 'node:perf_hooks';
import type { Config } from '../../src/config';
import type { Db } from '../../src/db/knex';
import { createPgPool, type PgPoolClient } from './lib';
import { openSeedAccounts, vacuumAnalyze, type SeedLog } from './seed-accounts';
import { SEED_COVERAGES, SEED_EVENTS, SEED_TIERS } from './seed-words';

/** Bump when the generated data changes, so an older seed is replaced instead of reused. */
const SEED_VERSION = 1;
/** Rows per INSERT statement. */
const BATCH_ROWS = 5000;
const KEY_NAME = 'catalog bench (live)';

/** The word the "searched" scenario looks for; the generator puts it in about 3 % of rows. */
export const SEARCH_TERM = 'hurricane';
const SEARCH_TERM_SHARE = 0.03;

export interface SeedOptions {
  /** Product lines and bundles of the bench account (each). */
  rows: number;
  /** Product lines and bundles of the second account (each). */
  otherRows: number;
}

export interface SeedResult {
  reused: boolean;
  /** Wall time of the seeding step (0 when reused), seconds. */
  seedSeconds: number;
  /** Wall time of VACUUM ANALYZE, seconds. */
  analyzeSeconds: number;
  account: { id: number; slug: string };
  otherAccount: { id: number; slug: string };
  counts: { productLines: number; bundles: number; bundleLinks: number; otherProductLines: number; otherBundles: number };
  /** A live API key of the bench account, created by this run. */
  apiKey: string;
}

// ---------------------------------------------------------------------------------------------
// Deterministic generator

/** mulberry32: a small seeded PRNG, so every seed of the same size holds the same data. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NOUNS = ['Protection', 'Bundle', 'Package', 'Shield', 'Cover', 'Plan', 'Program'];
const REGIONS = [
  'Texas',
  'California',
  'Florida',
  'New York',
  'the Midwest',
  'the Pacific Northwest',
  'New England',
  'the Southwest',
  'the Rocky Mountains',
  'the Gulf Coast',
  'the Mid-Atlantic',
  'the Great Lakes',
  'the Carolinas',
  'all 50 states',
];
const INSURERS = [
  'Evergreen Mutual Insurance Co.',
  'Harbor Point Specialty',
  'Granite State Casualty',
  'Blue Mesa Underwriters',
  'Lakeshore Indemnity',
  'Summit Ridge Assurance',
  'Prairie Wind Insurance',
  'Coastal Shield Insurance',
];
const PARTIES = ['venues', 'vendors', 'sponsors', 'landlords', 'municipalities', 'school districts', 'park services'];
const SIZES = ['small', 'mid-size', 'large', 'outdoor', 'indoor', 'private', 'public'];

const code = (s: string) =>
  s
    .replace(/[^A-Za-z]/g, '')
    .slice(0, 3)
    .toUpperCase();

function generator(seed: number) {
  const r = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const now = Date.now();
  const threeYears = 3 * 365 * 86_400_000;

  function description(event: string, coverage: string): string {
    const sentences = [
      `Covers ${coverage.toLowerCase()} for ${event.toLowerCase()} hosts in ${pick(REGIONS)}.`,
      pick([
        `Limits up to $${int(1, 5)},000,000 per occurrence with a $${int(0, 10) * 250} deductible.`,
        `Includes additional insured certificates for ${pick(PARTIES)} and ${pick(PARTIES)}.`,
        `Designed for ${pick(SIZES)} events of up to ${int(1, 50) * 100} guests.`,
        `Bound online in minutes; certificates are issued instantly.`,
        `Underwritten by ${pick(INSURERS)}.`,
      ]),
    ];
    if (r() < 0.5) sentences.push(`Coverage days run from setup to teardown, ${int(1, 14)} days at most.`);
    // The searched term, in about SEARCH_TERM_SHARE of the rows and nowhere else.
    if (r() < SEARCH_TERM_SHARE) sentences.push(`Includes ${SEARCH_TERM} and named-storm cancellation cover.`);
    return sentences.join(' ');
  }

  /** created_at spread over three years; updated_at at or after it, never in the future. */
  function timestamps(): [Date, Date] {
    const created = now - Math.floor(r() * threeYears);
    const updated = r() < 0.4 ? created : Math.min(now, created + Math.floor(r() * 180 * 86_400_000));
    return [new Date(created), new Date(updated)];
  }

  /** A row's theme: its event, coverage and tier, drawn in that order. */
  const theme = () => ({ event: pick(SEED_EVENTS), coverage: pick(SEED_COVERAGES), tier: pick(SEED_TIERS) });

  return { r, pick, int, description, timestamps, theme };
}

// ---------------------------------------------------------------------------------------------
// Bulk insert

interface Column {
  name: string;
  /** PostgreSQL element type of the unnest array. */
  type: string;
}

/** The columns of a table in insert order, written `name type, name type, …` (type: PostgreSQL's). */
function columns(list: string): Column[] {
  return list
    .split(',')
    .map((c) => c.trim().split(/\s+/))
    .map(([name, type]) => ({ name: name!, type: type! }));
}

/** Inserts `rows` (values in `columns` order) with one `insert … select from unnest` per batch. */
async function insertRows(client: PgPoolClient, table: string, columns: Column[], rows: unknown[][]): Promise<void> {
  const sql =
    `insert into ${table} (${columns.map((c) => c.name).join(', ')}) ` +
    `select * from unnest(${columns.map((c, i) => `$${i + 1}::${c.type}[]`).join(', ')})`;
  for (let start = 0; start < rows.length; start += BATCH_ROWS) {
    const batch = rows.slice(start, start + BATCH_ROWS);
    await client.query(
      sql,
      columns.map((_, i) => batch.map((row) => row[i])),
    );
  }
}

const PRODUCT_COLUMNS = columns(`
  root_account_id int, customer_name text, internal_name text, description text,
  default_price_minor bigint, currency text, insurer_name text, claims_phone_number text,
  video_url text, master_policy_number text, policy_number_two text, deductible_minor bigint,
  is_recurring boolean, is_test_mode boolean, is_active boolean, question_set_id int,
  mga_root_account_id int, insurer_root_account_id int, payproc_product_id text,
  payproc_price_id text, created_at timestamptz, updated_at timestamptz
`);

const BUNDLE_COLUMNS = columns(`
  root_account_id int, bundle_name text, customer_facing_name text, internally_facing_name text,
  bundle_description text, is_recurring boolean, is_test_mode boolean, product_line_count int,
  root_insurer_db_id int, root_mga_db_id int, root_seller_db_id int, question_set_id int,
  created_at timestamptz, updated_at timestamptz
`);

const LINK_COLUMNS = columns(`
  bundle_id int, product_line_id int, is_primary boolean, position int, created_at timestamptz
`);

interface RootIds {
  insurers: number[];
  mgas: number[];
}

function productRows(accountId: number, n: number, seed: number, roots: RootIds): unknown[][] {
  const g = generator(seed);
  const rows: unknown[][] = [];
  for (let i = 1; i <= n; i++) {
    const { event, coverage, tier } = g.theme();
    const [created, updated] = g.timestamps();
    const isTest = g.r() < 0.3;
    rows.push([
      accountId,
      `${event} ${coverage} ${tier}`,
      `${code(event)}-${code(coverage)}-${String(i).padStart(6, '0')}`,
      g.description(event, coverage),
      g.int(5, 2000) * 250,
      'usd',
      g.pick(INSURERS),
      `+1-800-555-${String(g.int(0, 9999)).padStart(4, '0')}`,
      g.r() < 0.2 ? `https://videos.example.com/products/${i}` : '',
      `MP-${g.int(100000, 999999)}`,
      g.r() < 0.3 ? `P2-${g.int(1000, 9999)}` : '',
      g.int(0, 20) * 5000,
      g.r() < 0.4,
      isTest,
      g.r() < 0.9,
      g.r() < 0.5 ? g.int(1, 50) : null,
      g.r() < 0.3 ? g.pick(roots.mgas) : null,
      g.r() < 0.5 ? g.pick(roots.insurers) : null,
      `prod_bench${isTest ? 'test' : 'live'}${accountId}x${i}`,
      `price_bench${isTest ? 'test' : 'live'}${accountId}x${i}`,
      created,
      updated,
    ]);
  }
  return rows;
}

/** How many products a bundle links: none for about half, up to five for a few. */
function linkCount(r: () => number): number {
  const x = r();
  if (x < 0.45) return 0;
  if (x < 0.7) return 1;
  if (x < 0.85) return 2;
  if (x < 0.95) return 3;
  return 5;
}

function bundleRows(
  accountId: number,
  n: number,
  seed: number,
  roots: RootIds,
  productsByMode: Record<'test' | 'live', number>,
): unknown[][] {
  const g = generator(seed);
  const rows: unknown[][] = [];
  for (let i = 1; i <= n; i++) {
    const { event, coverage, tier } = g.theme();
    const noun = g.pick(NOUNS);
    const [created, updated] = g.timestamps();
    const isTest = g.r() < 0.3;
    const available = productsByMode[isTest ? 'test' : 'live'];
    const links = Math.min(linkCount(g.r), available);
    const insurer = g.r() < 0.5 ? g.pick(roots.insurers) : null;
    const mga = g.r() < 0.25 ? g.pick(roots.mgas) : null;
    // spec §2.3 rule 2: a bundle with products names at least one root account.
    const seller = links > 0 || g.r() < 0.5 ? accountId : null;
    rows.push([
      accountId,
      `${event} ${coverage} ${noun} ${tier}`,
      `${event} ${tier} ${noun}`,
      `${code(event)}-${code(coverage)}-${tier.slice(0, 1)}-${String(i).padStart(6, '0')}`,
      g.description(event, coverage),
      g.r() < 0.4,
      isTest,
      links,
      insurer,
      mga,
      seller,
      g.r() < 0.5 ? g.int(1, 50) : null,
      created,
      updated,
    ]);
  }
  return rows;
}

/**
 * Links for every bundle of `accountId` with `product_line_count > 0`: that many distinct
 * product lines of the same account and test mode, the first one primary.
 */
async function insertLinks(client: PgPoolClient, accountId: number, seed: number): Promise<number> {
  const products = await client.query('select id, is_test_mode from product_lines where root_account_id = $1 order by id', [accountId]);
  const byMode: Record<'test' | 'live', number[]> = { test: [], live: [] };
  for (const p of products.rows) byMode[p.is_test_mode ? 'test' : 'live'].push(p.id as number);
  const bundles = await client.query(
    'select id, is_test_mode, product_line_count, created_at from bundles where root_account_id = $1 and product_line_count > 0 order by id',
    [accountId],
  );
  const r = prng(seed);
  const rows: unknown[][] = [];
  for (const b of bundles.rows) {
    const pool = byMode[b.is_test_mode ? 'test' : 'live'];
    const chosen = new Set<number>();
    while (chosen.size < (b.product_line_count as number)) chosen.add(pool[Math.floor(r() * pool.length)]!);
    [...chosen].forEach((pid, position) => rows.push([b.id, pid, position === 0, position, b.created_at]));
  }
  await insertRows(client, 'bundle_products', LINK_COLUMNS, rows);
  return rows.length;
}

async function countsFor(db: Db, accountId: number): Promise<{ productLines: number; bundles: number; links: number }> {
  const [p] = await db('product_lines').where('root_account_id', accountId).count({ n: '*' });
  const [b] = await db('bundles').where('root_account_id', accountId).count({ n: '*' });
  const [l] = await db('bundle_products as bp')
    .join('bundles as b', 'b.id', 'bp.bundle_id')
    .where('b.root_account_id', accountId)
    .count({ n: '*' });
  return { productLines: Number(p?.n ?? 0), bundles: Number(b?.n ?? 0), links: Number(l?.n ?? 0) };
}

/**
 * Migrates the bench database and makes sure it holds the requested catalog; then runs
 * VACUUM ANALYZE and issues a fresh live API key for the bench account.
 * `db` is the app's knex instance on the bench database; `url` the same database for `pg`.
 */
export async function seedCatalog(db: Db, url: string, config: Config, opts: SeedOptions, log: SeedLog): Promise<SeedResult> {
  const { accounts, upsert, reissueKey } = await openSeedAccounts(db, config);
  const mainName = `Catalog Bench Agency (seed v${SEED_VERSION}, ${opts.rows} rows)`;
  const otherName = `Catalog Bench Other Agency (seed v${SEED_VERSION}, ${opts.otherRows} rows)`;
  const before = await Promise.all([accounts.findBySlug('bench-agency'), accounts.findBySlug('bench-other-agency')]);

  const roots: RootIds = { insurers: [], mgas: [] };
  for (let i = 1; i <= 3; i++) roots.insurers.push((await upsert(`bench-insurer-${i}`, `Bench Insurer ${i}`, 'insurer')).id);
  for (let i = 1; i <= 2; i++) roots.mgas.push((await upsert(`bench-mga-${i}`, `Bench MGA ${i}`, 'mga')).id);

  const existingMain = before[0] ? await countsFor(db, before[0].id) : null;
  const existingOther = before[1] ? await countsFor(db, before[1].id) : null;
  const reusable =
    before[0]?.name === mainName &&
    before[1]?.name === otherName &&
    existingMain?.productLines === opts.rows &&
    existingMain.bundles === opts.rows &&
    existingOther?.productLines === opts.otherRows &&
    existingOther.bundles === opts.otherRows;

  const main = await upsert('bench-agency', mainName);
  const other = await upsert('bench-other-agency', otherName);

  let seedSeconds = 0;
  if (reusable) {
    log(
      `reusing the seeded catalog in the bench database (${opts.rows} product lines and bundles for account ${main.id}, ${opts.otherRows} for account ${other.id})`,
    );
  } else {
    log(
      `seeding ${opts.rows} product lines and ${opts.rows} bundles (+ ${opts.otherRows} each for a second account), ${BATCH_ROWS} rows per INSERT …`,
    );
    const started = performance.now();
    const pool = createPgPool(url, 1);
    const client = await pool.connect();
    try {
      await client.query('begin');
      // The bench database holds nothing but bench data, so an old seed is simply emptied
      // (cascade: tables of later migrations that reference product lines go with it).
      await client.query('truncate bundle_products, bundles, product_lines restart identity cascade');
      for (const [account, n, seed] of [
        [main.id, opts.rows, 1],
        [other.id, opts.otherRows, 2],
      ] as const) {
        const products = productRows(account, n, seed * 1000 + 1, roots);
        await insertRows(client, 'product_lines', PRODUCT_COLUMNS, products);
        const byMode = { test: products.filter((p) => p[13]).length, live: products.filter((p) => !p[13]).length };
        await insertRows(client, 'bundles', BUNDLE_COLUMNS, bundleRows(account, n, seed * 1000 + 2, roots, byMode));
        await insertLinks(client, account, seed * 1000 + 3);
        log(
          `  account ${account}: ${n} product lines, ${n} bundles and their links inserted (${((performance.now() - started) / 1000).toFixed(1)} s)`,
        );
      }
      await client.query('commit');
    } catch (err) {
      await client.query('rollback').catch(() => undefined);
      throw err;
    } finally {
      client.release();
      await pool.end();
    }
    seedSeconds = (performance.now() - started) / 1000;
    log(`seeded in ${seedSeconds.toFixed(1)} s`);
  }

  // Fresh statistics and visibility map (index-only scans), as autovacuum would leave a table
  // that has been in use for a while. Cheap when nothing changed.
  const analyzeSeconds = await vacuumAnalyze(db, [
    'product_lines',
    'bundles',
    'bundle_products',
    'root_accounts',
    'api_keys',
    'api_key_secrets',
  ]);

  // The key goes through the real key service, like `npm run seed`; the previous run's is deleted.
  const agent = await accounts.upsertAgent({ rootAccountId: main.id, name: 'Bench Agent', email: 'bench@bench-agency.test' });
  const key = await reissueKey({
    rootAccountId: main.id,
    name: KEY_NAME,
    agentId: agent.id,
    description: 'created by npm run bench -- catalog',
  });

  const mainCounts = await countsFor(db, main.id);
  const otherCounts = await countsFor(db, other.id);
  return {
    reused: reusable,
    seedSeconds,
    analyzeSeconds,
    account: { id: main.id, slug: main.slug },
    otherAccount: { id: other.id, slug: other.slug },
    counts: {
      productLines: mainCounts.productLines,
      bundles: mainCounts.bundles,
      bundleLinks: mainCounts.links,
      otherProductLines: otherCounts.productLines,
      otherBundles: otherCounts.bundles,
    },
    apiKey: key.key,
  };
}
