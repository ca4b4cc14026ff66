/**
 * Data for the purchase-search benchmark (`npm run bench -- search`): its own database
 * (`insurance_bench_search`), migrated with the project's migrations, holding
 *
 * - a bench agency with 20 teammates, `products` product lines (80 % live, 20 % test) and
 *   `purchases` purchases paid over three years, ids rising with time as in production:
 *   94 % paid live, 3 % paid test, 3 % unpaid (expired); 10 % of them through a key without a
 *   teammate, the rest spread evenly over the teammates;
 * - a second agency with `otherPurchases` paid live purchases over the same buyers and product
 *   names, which no search of the bench agency may return;
 * - `buyers` buyers ("first last", `first.last.<n>@example.com`, names from fixed lists, so a
 *   last name matches about 1 in 150 purchases), 1–2 items per purchase, 1–5 covered units per
 *   item and one certificate per covered unit of a paid purchase (numbered as
 *   src/certificates/repository.ts plan() numbers them).
 *
 * Everything is generated inside PostgreSQL (generate_series, random()) in one transaction with
 * `session_replication_role = replica`, which skips row triggers and foreign-key checks during
 * the load; `purchase_search` is then rebuilt in one statement from the migration's
 * `purchase_search_source` view, in payment order (the order the triggers insert rows in
 * production, so the table's physical layout matches), with its secondary indexes dropped and
 * re-created afterwards (a bulk GIN build is far cheaper than row-by-row maintenance). The rows
 * are what the triggers would have written: the integration test checks that path.
 *
 * Idempotent: when the bench accounts already hold what was asked for (seed version and counts
 * recorded in the account name, purchase_search complete), the data is reused.
 */
import { performance } from 'node:perf_hooks';
import type { Config } from '../../src/config';
import type { Db } from '../../src/db/knex';
import { createPgPool, type PgPoolClient } from './lib';
import { openSeedAccounts, vacuumAnalyze, type SeedLog } from './seed-accounts';
import { SEED_COVERAGES, SEED_EVENTS, SEED_TIERS } from './seed-words';

/** Bump when the generated data changes, so an older seed is replaced instead of reused. */
const SEED_VERSION = 3;
const KEY_NAME = 'search bench (live)';
const SEED_KEY_NAME = 'search bench seeding (live)';
const TEAMMATES = 20;

export interface SearchSeedOptions {
  purchases: number;
  otherPurchases: number;
  buyers: number;
  products: number;
}

export interface SearchSeedResult {
  reused: boolean;
  /** Wall time of the load (0 when reused), seconds. */
  seedSeconds: number;
  /** Wall time of the purchase_search rebuild and its index builds (0 when reused), seconds. */
  indexSeconds: number;
  /** Wall time of VACUUM ANALYZE, seconds. */
  analyzeSeconds: number;
  account: { id: number; idpRootAccountUuid: string };
  otherAccountId: number;
  /** Teammates of the bench account, most purchases first. */
  teammates: Array<{ id: number; idpTeammateUuid: string; purchases: number }>;
  counts: Record<string, number>;
  /** Sizes of the search table and its indexes, bytes. */
  sizes: Record<string, number>;
  /** A live API key of the bench account, created by this run. */
  apiKey: string;
}

const FIRST_NAMES = [
  'James',
  'Mary',
  'Robert',
  'Patricia',
  'John',
  'Jennifer',
  'Michael',
  'Linda',
  'David',
  'Elizabeth',
  'William',
  'Barbara',
  'Richard',
  'Susan',
  'Joseph',
  'Jessica',
  'Thomas',
  'Sarah',
  'Charles',
  'Karen',
  'Christopher',
  'Lisa',
  'Daniel',
  'Nancy',
  'Matthew',
  'Betty',
  'Anthony',
  'Margaret',
  'Mark',
  'Sandra',
  'Donald',
  'Ashley',
  'Steven',
  'Kimberly',
  'Paul',
  'Emily',
  'Andrew',
  'Donna',
  'Joshua',
  'Michelle',
  'Kenneth',
  'Carol',
  'Kevin',
  'Amanda',
  'Brian',
  'Dorothy',
  'George',
  'Melissa',
  'Timothy',
  'Deborah',
  'Ronald',
  'Stephanie',
  'Edward',
  'Rebecca',
  'Jason',
  'Sharon',
  'Jeffrey',
  'Laura',
  'Ryan',
  'Cynthia',
  'Jacob',
  'Kathleen',
  'Gary',
  'Amy',
  'Nicholas',
  'Angela',
  'Eric',
  'Shirley',
  'Jonathan',
  'Anna',
  'Stephen',
  'Brenda',
  'Larry',
  'Pamela',
  'Justin',
  'Emma',
  'Scott',
  'Nicole',
  'Brandon',
  'Helen',
  'Benjamin',
  'Samantha',
  'Samuel',
  'Katherine',
  'Gregory',
  'Christine',
  'Alexander',
  'Debra',
  'Frank',
  'Rachel',
  'Patrick',
  'Carolyn',
  'Raymond',
  'Janet',
  'Jack',
  'Maria',
  'Kim',
  'Priya',
  'Wei',
  'Aiko',
];
const LAST_NAMES = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'Garcia',
  'Miller',
  'Davis',
  'Rodriguez',
  'Martinez',
  'Hernandez',
  'Lopez',
  'Gonzalez',
  'Wilson',
  'Anderson',
  'Thomas',
  'Taylor',
  'Moore',
  'Jackson',
  'Martin',
  'Lee',
  'Perez',
  'Thompson',
  'White',
  'Harris',
  'Sanchez',
  'Clark',
  'Ramirez',
  'Lewis',
  'Robinson',
  'Walker',
  'Young',
  'Allen',
  'King',
  'Wright',
  'Scott',
  'Torres',
  'Nguyen',
  'Hill',
  'Flores',
  'Green',
  'Adams',
  'Nelson',
  'Baker',
  'Hall',
  'Rivera',
  'Campbell',
  'Mitchell',
  'Carter',
  'Roberts',
  'Gomez',
  'Phillips',
  'Evans',
  'Turner',
  'Diaz',
  'Parker',
  'Cruz',
  'Edwards',
  'Collins',
  'Reyes',
  'Stewart',
  'Morris',
  'Morales',
  'Murphy',
  'Cook',
  'Rogers',
  'Gutierrez',
  'Ortiz',
  'Morgan',
  'Cooper',
  'Peterson',
  'Bailey',
  'Reed',
  'Kelly',
  'Howard',
  'Ramos',
  'Kim',
  'Cox',
  'Ward',
  'Richardson',
  'Watson',
  'Brooks',
  'Chavez',
  'Wood',
  'James',
  'Bennett',
  'Gray',
  'Mendoza',
  'Ruiz',
  'Hughes',
  'Price',
  'Alvarez',
  'Castillo',
  'Sanders',
  'Patel',
  'Myers',
  'Long',
  'Ross',
  'Foster',
  'Jimenez',
  'Powell',
  'Jenkins',
  'Perry',
  'Russell',
  'Sullivan',
  'Bell',
  'Coleman',
  'Butler',
  'Henderson',
  'Barnes',
  'Gonzales',
  'Fisher',
  'Vasquez',
  'Simmons',
  'Romero',
  'Jordan',
  'Patterson',
  'Alexander',
  'Hamilton',
  'Graham',
  'Reynolds',
  'Griffin',
  'Wallace',
  'Moreno',
  'West',
  'Cole',
  'Hayes',
  'Bryant',
  'Herrera',
  'Gibson',
  'Ellis',
  'Tran',
  'Medina',
  'Aguilar',
  'Stevens',
  'Murray',
  'Ford',
  'Castro',
  'Marshall',
  'Owens',
  'Harrison',
  'Fernandez',
  'McDonald',
  'Woods',
  'Washington',
  'Kennedy',
  'Wells',
  'Park',
  'Okafor',
  'Nakamura',
  'Kowalski',
];
/**
 * The catalog seed's events but three, as this seed's data has always been made: its words go
 * into SQL unquoted (`textArray`, no 'ñ'), and the same list and order keep seed v3's data.
 */
const EVENTS = SEED_EVENTS.filter((e) => !['Quinceañera', 'Music Lesson', 'Film Festival'].includes(e));

/** A text[] literal of fixed words (letters, spaces and hyphens only, so nothing needs quoting). */
function textArray(words: readonly string[]): string {
  for (const w of words) if (!/^[A-Za-z -]+$/.test(w)) throw new Error(`bench word "${w}" needs quoting`);
  return `'{${words.map((w) => `"${w}"`).join(',')}}'::text[]`;
}

async function timed(
  client: PgPoolClient,
  log: (line: string) => void,
  label: string,
  sql: string,
  values: unknown[] = [],
): Promise<number> {
  const t0 = performance.now();
  const res = await client.query(sql, values);
  log(`  ${label}: ${res.rowCount ?? 0} rows, ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return res.rowCount ?? 0;
}

/** Loads accounts' products, buyers, purchases, items, covered units and certificates (one transaction). */
async function load(
  client: PgPoolClient,
  opts: SearchSeedOptions,
  ids: { main: number; other: number; seedKeyId: number; teammates: number[] },
  log: (line: string) => void,
): Promise<void> {
  await client.query('begin');
  try {
    await client.query("set local session_replication_role = 'replica'");
    await client.query("set local synchronous_commit = 'off'");
    await client.query(
      'truncate purchase_search, certificate_archives, certificates, covered_units, purchase_items, purchase_direct_charges, payproc_events, purchases, buyer_connections, buyer_access_tokens, buyer_payproc_customers, buyers, product_approvals, api_key_products, bundle_products, bundles, product_lines restart identity cascade',
    );

    // Product lines: the bench account's, live ones first then test ones (so each is an id range), then the other account's.
    const productSql = `
      insert into product_lines (root_account_id, customer_name, internal_name, default_price_minor, is_test_mode, question_set_id)
      select $1, name || case when n > 1 then ' ' || n else '' end, 'BENCH-' || g, 2000, $3, null
        from (select g, (${textArray(EVENTS)})[1 + g % ${EVENTS.length}] || ' ' || (${textArray(SEED_COVERAGES)})[1 + (g / ${EVENTS.length}) % ${SEED_COVERAGES.length}] || ' ' ||
                     (${textArray(SEED_TIERS)})[1 + (g * 7) % ${SEED_TIERS.length}] as name,
                     1 + g / ${EVENTS.length * SEED_COVERAGES.length} as n
                from generate_series($4::int, $4::int + $2::int - 1) g) x
       order by g`;
    const live = Math.round(opts.products * 0.8);
    await timed(client, log, 'product lines (live)', productSql, [ids.main, live, false, 0]);
    await timed(client, log, 'product lines (test)', productSql, [ids.main, opts.products - live, true, live]);
    await timed(client, log, 'product lines (other account)', productSql, [ids.other, 40, false, 0]);
    const ranges = await client.query(
      'select root_account_id, is_test_mode, min(id) as lo, count(*)::int as n from product_lines group by 1, 2',
    );
    const range = (account: number, test: boolean) => {
      const r = ranges.rows.find((x) => x.root_account_id === account && x.is_test_mode === test);
      if (!r) throw new Error('product range missing');
      return { lo: Number(r.lo), n: Number(r.n) };
    };

    await timed(
      client,
      log,
      'buyers',
      `insert into buyers (email, first_name, last_name, created_at)
       select lower(f || '.' || l || '.' || g || '@example.com'), f, l, now() - interval '4 years'
         from (select g, (${textArray(FIRST_NAMES)})[1 + floor(random() * ${FIRST_NAMES.length})::int] as f,
                         (${textArray(LAST_NAMES)})[1 + floor(random() * ${LAST_NAMES.length})::int] as l
                 from generate_series(1, $1::int) g) x`,
      [opts.buyers],
    );

    // Purchases: paid over the last three years, ids rising with time as when sold one by one
    // (`order by`: the join would hand them out in hash-batch order otherwise);
    // of the bench account's, 3 % paid in test mode and 3 % never paid ($6, $7: per cent test, per cent unpaid).
    const unpaid = 'x.g % 100 >= $6::int and x.g % 100 < $6::int + $7::int';
    const purchaseSql = `
      insert into purchases (root_account_id, api_key_id, agent_id, buyer_id, mode, status, currency, subtotal_minor, platform_fee_minor,
                             total_minor, created_at, updated_at, payment_intent_id, paid_at, buyer_email, certificates_issued_at)
      select $1::int, $2::int, case when x.ra < 0.1 then null else ($3::int[])[1 + floor(x.rb * cardinality($3::int[]))::int] end, b.id,
             case when x.g % 100 < $6::int then 'test' else 'live' end,
             case when ${unpaid} then 'expired' else 'issued' end,
             'usd', 4000, 0, 4000, x.t - interval '10 minutes', x.t,
             case when ${unpaid} then null else 'pi_bench_' || $1::int || '_' || x.g end,
             case when ${unpaid} then null else x.t end,
             b.email,
             case when ${unpaid} then null else x.t + interval '1 minute' end
        from (select g, random() as ra, random() as rb, now() - (1 - g::float8 / $4::int) * interval '1095 days' - random() * interval '1 hour' as t,
                     1 + floor(random() * $5::int)::int as buyer_id
                from generate_series(1, $4::int) g) x
        join buyers b on b.id = x.buyer_id
       order by x.g`;
    await timed(client, log, 'purchases (bench account)', purchaseSql, [
      ids.main,
      ids.seedKeyId,
      ids.teammates,
      opts.purchases,
      opts.buyers,
      3,
      3,
    ]);
    await timed(client, log, 'purchases (other account)', purchaseSql, [
      ids.other,
      ids.seedKeyId,
      [],
      opts.otherPurchases,
      opts.buyers,
      0,
      0,
    ]);

    // Items: every purchase one, a quarter a second; 1 covered unit (80 %), 2 (15 %) or 5 (5 %) each.
    const mainLive = range(ids.main, false);
    const mainTest = range(ids.main, true);
    const otherLive = range(ids.other, false);
    const itemSql = (position: number, share: number) => `
      insert into purchase_items (purchase_id, product_line_id, position, is_trip_excess, unit_price_minor, units, price_factor, amount_minor, answers)
      select id, product_line_id, ${position}, false, 2000, units, 1, 2000 * units, '{}'
        from (select p.id,
                     case when p.root_account_id = $1::int and p.mode = 'test' then $2::int + floor(random() * $3::int)::int
                          when p.root_account_id = $1::int then $4::int + floor(random() * $5::int)::int
                          else $6::int + floor(random() * $7::int)::int end as product_line_id,
                     ('{1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2,2,2,5}'::int[])[1 + floor(random() * 20)::int] as units
                from purchases p ${share < 1 ? `where random() < ${share}` : ''}) x`;
    const itemValues = [ids.main, mainTest.lo, mainTest.n, mainLive.lo, mainLive.n, otherLive.lo, otherLive.n];
    await timed(client, log, 'purchase items (first)', itemSql(0, 1), itemValues);
    await timed(client, log, 'purchase items (second)', itemSql(1, 0.25), itemValues);
    await timed(
      client,
      log,
      'covered units',
      `insert into covered_units (purchase_id, purchase_item_id, unit_index, kind, starts_at, ends_at, time_zone, local_label)
       select i.purchase_id, i.id, u, 'day', d.d, d.d + interval '1 day', 'America/Chicago', to_char(d.d, 'YYYY-MM-DD')
         from purchase_items i
         join purchases p on p.id = i.purchase_id
        cross join lateral generate_series(0, i.units - 1) u
        cross join lateral (select date_trunc('day', p.created_at) + (u + 7) * interval '1 day' as d) d`,
    );
    await timed(
      client,
      log,
      'certificates',
      `insert into certificates (purchase_id, purchase_item_id, covered_unit_id, product_line_id, certificate_number, issue_date, created_at)
       select cu.purchase_id, i.id, cu.id, i.product_line_id,
              'COI-' || cu.purchase_id || '-' || (i.position + 1) || '-' || (cu.unit_index + 1) || '-' || upper(substr(md5(cu.id::text || '-bench'), 1, 10)),
              p.paid_at::date, p.paid_at
         from covered_units cu
         join purchase_items i on i.id = cu.purchase_item_id
         join purchases p on p.id = cu.purchase_id
        where p.paid_at is not null`,
    );
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  }
}

/**
 * Rebuilds purchase_search from its source view: secondary indexes dropped, one bulk insert,
 * indexes re-created with a large maintenance_work_mem. Returns wall time in seconds.
 */
async function rebuildSearch(client: PgPoolClient, log: (line: string) => void): Promise<number> {
  const t0 = performance.now();
  const indexes = await client.query(
    `select i.indexname, i.indexdef from pg_indexes i
      where i.schemaname = 'public' and i.tablename = 'purchase_search'
        and not exists (select 1 from pg_constraint c where c.conname = i.indexname)`,
  );
  await client.query("set maintenance_work_mem = '1GB'");
  await client.query('set max_parallel_maintenance_workers = 2');
  await client.query('begin');
  try {
    for (const r of indexes.rows) await client.query(`drop index ${String(r.indexname)}`);
    await client.query('truncate purchase_search');
    // In payment order, as the triggers write them in production (a row is inserted when its purchase is paid).
    await timed(
      client,
      log,
      'purchase_search rows',
      'insert into purchase_search select * from purchase_search_source order by paid_at, purchase_id',
    );
    for (const r of indexes.rows) {
      const t = performance.now();
      await client.query(String(r.indexdef));
      log(`  index ${String(r.indexname)}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  }
  return (performance.now() - t0) / 1000;
}

async function count(db: Db, sql: string, bindings: readonly (string | number)[] = []): Promise<number> {
  const { rows } = await db.raw(`select (${sql})::bigint as n`, bindings);
  return Number(rows[0].n);
}

/**
 * Migrates the bench database and makes sure it holds the requested purchases; then runs
 * VACUUM ANALYZE and issues a fresh live API key (without a teammate) for the bench account.
 * `db` is the app's knex instance on the bench database; `url` the same database for `pg`.
 */
export async function seedSearch(db: Db, url: string, config: Config, opts: SearchSeedOptions, log: SeedLog): Promise<SearchSeedResult> {
  const { accounts, keys, upsert, reissueKey } = await openSeedAccounts(db, config);
  const tag = `seed v${SEED_VERSION}, ${opts.purchases}/${opts.otherPurchases} purchases, ${opts.buyers} buyers, ${opts.products} products`;
  const mainName = `Search Bench Agency (${tag})`;
  const before = await accounts.findBySlug('search-bench-agency');
  const main = await upsert('search-bench-agency', mainName);
  const other = await upsert('search-bench-other-agency', 'Search Bench Other Agency');
  const teammateIds: number[] = [];
  for (let i = 1; i <= TEAMMATES; i++) {
    teammateIds.push(
      (
        await accounts.upsertAgent({
          rootAccountId: main.id,
          name: `Teammate ${String(i).padStart(2, '0')}`,
          email: `teammate${i}@search-bench.test`,
        })
      ).id,
    );
  }

  const paid = await count(db, 'select count(*) from purchases where paid_at is not null');
  const reusable =
    before?.name === mainName &&
    (await count(db, 'select count(*) from purchases where root_account_id = ?', [main.id])) === opts.purchases &&
    (await count(db, 'select count(*) from purchases where root_account_id = ?', [other.id])) === opts.otherPurchases &&
    (await count(db, 'select count(*) from purchase_search')) === paid;

  let seedSeconds = 0;
  let indexSeconds = 0;
  if (reusable) {
    log(
      `reusing the seeded purchases in the bench database (${opts.purchases} for account ${main.id}, ${opts.otherPurchases} for account ${other.id})`,
    );
  } else {
    log(
      `seeding ${opts.purchases} purchases (+ ${opts.otherPurchases} of a second account), ${opts.buyers} buyers, ${opts.products} product lines, in SQL …`,
    );
    let seedKey = (await keys.list(main.id)).find((k) => k.name === SEED_KEY_NAME);
    if (!seedKey) {
      const issued = await keys.create({
        rootAccountId: main.id,
        name: SEED_KEY_NAME,
        mode: 'live',
        description: 'owner of the seeded purchases',
      });
      seedKey = (await keys.list(main.id)).find((k) => k.id === issued.id)!;
    }
    const started = performance.now();
    const pool = createPgPool(url, 1);
    const client = await pool.connect();
    try {
      await load(client, opts, { main: main.id, other: other.id, seedKeyId: seedKey.id, teammates: teammateIds }, log);
      seedSeconds = (performance.now() - started) / 1000;
      log(`loaded in ${seedSeconds.toFixed(1)} s; rebuilding purchase_search …`);
      indexSeconds = await rebuildSearch(client, log);
      log(`purchase_search rebuilt in ${indexSeconds.toFixed(1)} s`);
    } finally {
      client.release();
      await pool.end();
    }
  }

  const analyzeSeconds = await vacuumAnalyze(db, [
    ...['purchase_search', 'purchases', 'purchase_items', 'covered_units', 'certificates', 'buyers', 'product_lines', 'agents'],
    ...['root_accounts', 'api_keys', 'api_key_secrets'],
  ]);

  const key = await reissueKey({ rootAccountId: main.id, name: KEY_NAME, description: 'created by npm run bench -- search' });

  const teammates = (
    await db.raw(
      `select a.id, a.idp_teammate_uuid, count(s.purchase_id)::int as n
         from agents a left join purchase_search s on s.agent_id = a.id and s.mode = 'live'
        where a.root_account_id = ? group by a.id order by n desc, a.id`,
      [main.id],
    )
  ).rows.map((r: { id: number; idp_teammate_uuid: string; n: number }) => ({
    id: r.id,
    idpTeammateUuid: r.idp_teammate_uuid,
    purchases: r.n,
  }));
  const rootUuid = (await db('root_accounts').where({ id: main.id }).first('idp_root_account_uuid')).idp_root_account_uuid as string;

  const counts = {
    purchases: await count(db, 'select count(*) from purchases where root_account_id = ?', [main.id]),
    paidLivePurchases: await count(db, "select count(*) from purchase_search where root_account_id = ? and mode = 'live'", [main.id]),
    otherAccountPurchases: await count(db, 'select count(*) from purchases where root_account_id = ?', [other.id]),
    purchaseItems: await count(db, 'select count(*) from purchase_items'),
    certificates: await count(db, 'select count(*) from certificates'),
    buyers: await count(db, 'select count(*) from buyers'),
    productLines: await count(db, 'select count(*) from product_lines'),
  };
  const sizes: Record<string, number> = {};
  for (const rel of [
    'purchase_search',
    'purchase_search_account_paid_idx',
    'purchase_search_agent_paid_idx',
    'purchase_search_key_trgm_idx',
    'purchase_search_products_idx',
  ]) {
    sizes[rel] = await count(db, 'select pg_relation_size(?::regclass)', [rel]);
  }
  return {
    reused: reusable,
    seedSeconds,
    indexSeconds,
    analyzeSeconds,
    account: { id: main.id, idpRootAccountUuid: rootUuid },
    otherAccountId: other.id,
    teammates,
    counts,
    sizes,
    apiKey: key.key,
  };
}
