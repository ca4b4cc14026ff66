/**
 * `/api/v1/question_sets` against real PostgreSQL, and a brand-new agency that creates its own
 * question set and product through the API and sells end to end (checkout on stripe-mock, paid
 * with the test helper, certificates through the Temporal dev server and fake-gcs-server). The
 * seed's shared sets are checked by running `npm run seed`'s script against the test database.
 */
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call, createKey, createRootAccount } from '../helpers/fixtures';
import { specialEventSelection } from '../helpers/purchases';
import { runScript } from '../helpers/run';
import { SPECIAL_EVENT_LIABILITY, TRIP_EXCESS } from '../../src/question-sets/examples';
import { purchaseWorkflowId, type PurchaseStatusView } from '../../workflows/contracts';

const stack = useStack();
let app: TestApp;
let mine: { id: number; slug: string; key: string };
let theirs: { id: number; key: string };

beforeAll(async () => {
  app = stack.app;
  const a = await createRootAccount(app.container, 'Brand New Agency');
  mine = { id: a.id, slug: a.slug, key: (await createKey(app.container, { rootAccountId: a.id, mode: 'test' })).key };
  const b = await createRootAccount(app.container, 'Other Agency');
  theirs = { id: b.id, key: (await createKey(app.container, { rootAccountId: b.id, mode: 'test' })).key };
});

const api = (key: string, method: string, path: string, body?: unknown) =>
  call(app.baseUrl, `/api/v1${path}`, { method, key, ...(body === undefined ? {} : { body }) });

describe('POST /api/v1/question_sets', () => {
  test('when a valid per-day definition is sent, then 201 with the set, its coverage unit and the definition with defaults filled', async () => {
    const res = await api(mine.key, 'POST', '/question_sets', { name: 'Our event wording', definition: SPECIAL_EVENT_LIABILITY });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      success: true,
      message: 'Question set created',
      data: {
        id: expect.any(Number),
        name: 'Our event wording',
        isShared: false,
        rootAccountId: mine.id,
        coverageUnit: 'day',
        createdAt: expect.any(String),
      },
    });
    expect(res.body.data.definition.questions.map((q: { id: string }) => q.id)).toEqual(SPECIAL_EVENT_LIABILITY.questions.map((q) => q.id));
    expect(res.body.data.definition.questions.every((q: { required: boolean }) => typeof q.required === 'boolean')).toBe(true);
    const trip = await api(mine.key, 'POST', '/question_sets', { name: 'Our trip wording', definition: TRIP_EXCESS });
    expect(trip.body.data.coverageUnit).toBe('trip');
  });

  test('when the definition is invalid, then 400 VALIDATION_ERROR listing every problem and nothing is stored', async () => {
    const before = Number((await app.container.db('question_sets').where({ root_account_id: mine.id }).count({ n: '*' }).first())!.n);
    const cases: Array<[unknown, RegExp]> = [
      [
        { name: 'x', definition: { version: 1, questions: [{ id: 'a', kind: 'text', label: 'A' }] } },
        /exactly one coverage_dates or trips question/,
      ],
      [{ name: 'x', definition: { version: 2, questions: SPECIAL_EVENT_LIABILITY.questions } }, /definition\.version/],
      [{ name: 'x', definition: { version: 1, questions: [{ id: 'Bad Id', kind: 'coverage_dates', label: 'When' }] } }, /lower_snake_case/],
      [
        {
          name: 'x',
          definition: {
            version: 1,
            questions: [
              { id: 'c', kind: 'coverage_dates', label: 'When' },
              { id: 'c', kind: 'number', label: 'N', min: 5, max: 1 },
            ],
          },
        },
        /min must not exceed max|duplicate question id/,
      ],
      [
        {
          name: 'x',
          definition: {
            version: 1,
            questions: [
              { id: 'c', kind: 'coverage_dates', label: 'When' },
              { id: 'k', kind: 'slider', label: 'K' },
            ],
          },
        },
        /definition\.questions\.1/,
      ],
      [{ name: '', definition: SPECIAL_EVENT_LIABILITY }, /name/],
      [{ name: 'x', definition: SPECIAL_EVENT_LIABILITY, rootAccountId: theirs.id }, /rootAccountId/],
      [{ name: 'x' }, /definition/],
    ];
    for (const [body, message] of cases) {
      const res = await api(mine.key, 'POST', '/question_sets', body);
      expect(res.status).toBe(400);
      expect(res.body.success).toBe(false);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(`${res.body.error.message} ${JSON.stringify(res.body.error.details)}`).toMatch(message);
    }
    expect(Number((await app.container.db('question_sets').where({ root_account_id: mine.id }).count({ n: '*' }).first())!.n)).toBe(before);
  });
});

describe('GET /api/v1/question_sets and /{id}', () => {
  test('when listed, then shared sets and the account’s own come back, never another account’s; one of those by id is 404', async () => {
    const own = (await api(mine.key, 'POST', '/question_sets', { name: 'Listed wording', definition: SPECIAL_EVENT_LIABILITY })).body.data;
    const other = (await api(theirs.key, 'POST', '/question_sets', { name: 'Their wording', definition: SPECIAL_EVENT_LIABILITY })).body
      .data;
    const all: Array<{ id: number; isShared: boolean; rootAccountId: number | null }> = [];
    for (let pageIndex = 0; ; pageIndex++) {
      const page = await api(mine.key, 'GET', `/question_sets?pageSize=100&pageIndex=${pageIndex}`);
      expect(page.status).toBe(200);
      all.push(...page.body.data);
      expect(page.body.metadata.total).toBeGreaterThanOrEqual(all.length);
      if (all.length >= page.body.metadata.total || page.body.data.length === 0) break;
    }
    expect(all.map((s) => s.id)).toContain(own.id);
    expect(all.map((s) => s.id)).not.toContain(other.id);
    expect(all.every((s) => s.isShared === (s.rootAccountId === null) && (s.rootAccountId === null || s.rootAccountId === mine.id))).toBe(
      true,
    );

    const one = await api(mine.key, 'GET', `/question_sets/${own.id}`);
    expect(one.status).toBe(200);
    expect(one.body.data).toEqual(own);
    const hidden = await api(mine.key, 'GET', `/question_sets/${other.id}`);
    expect(hidden.status).toBe(404);
    expect(hidden.body.error).toEqual({ code: 'NOT_FOUND', message: `Question set ${other.id} not found` });
    expect((await api(mine.key, 'GET', '/question_sets/abc')).body.error.code).toBe('VALIDATION_ERROR');
    expect((await api(mine.key, 'GET', '/question_sets?pageSize=0')).body.error.code).toBe('QUERY_VALIDATION_ERROR');
  });
});

describe('a brand-new agency sells end to end on its own question set', () => {
  test('when it creates a set and a product through the API, connects a buyer, checks out and pays in test mode, then certificates are issued for each covered day', async () => {
    const set = (await api(mine.key, 'POST', '/question_sets', { name: 'Day cover', definition: SPECIAL_EVENT_LIABILITY })).body.data;
    const product = await api(mine.key, 'POST', '/products', {
      customerName: 'New Agency Event Cover',
      defaultPrice: 25,
      questionSetId: set.id,
    });
    expect(product.status).toBe(201);
    expect(product.body.data.coverageUnit).toBe('day');
    const read = await api(mine.key, 'GET', `/products/${product.body.data.id}`);
    expect(read.body.data.ins_product_line_coverage_unit).toBe('day');

    const buyer = await call(app.baseUrl, '/platform-seller-invites/newConnect', {
      method: 'POST',
      key: mine.key,
      body: {
        buyer_first_name: 'Ada',
        buyer_last_name: 'New',
        buyer_email: `ada.${mine.id}@example.com`,
        seller_slug: mine.slug,
        query_param: '',
      },
    });
    expect(buyer.status).toBe(200);
    const session = await call(app.baseUrl, '/public-quote/adminValidateBuyerResponses', {
      method: 'POST',
      key: mine.key,
      body: {
        idp_accnt_uuid: buyer.body.idp_accnt_uuid,
        access_token: buyer.body.access_token,
        selected_product_lines_to_purchase: [specialEventSelection(product.body.data.id, 'Ada New')],
      },
    });
    expect(session.status).toBe(200);
    const paid = await api(mine.key, 'POST', `/test_helpers/purchases/${session.body.purchase_id}/pay`);
    expect(paid.status).toBe(200);
    const result = (await app.container.temporal.client.workflow
      .getHandle(purchaseWorkflowId(session.body.purchase_id))
      .result()) as PurchaseStatusView;
    expect(result.status).toBe('issued');
    expect(
      Number((await app.container.db('certificates').where({ purchase_id: session.body.purchase_id }).count({ n: '*' }).first())!.n),
    ).toBe(2);
  }, 90_000);
});

describe('npm run seed', () => {
  test('when it runs, then shared sets exist that any account (the second agency, a new one) can list and build products on', async () => {
    const seeded = await runScript('scripts/seed.ts', [], { LOG_LEVEL: 'silent' });
    expect(seeded.code).toBe(0);
    const again = await runScript('scripts/seed.ts', [], { LOG_LEVEL: 'silent' });
    expect(again.code).toBe(0);
    const shared = await app.container.db('question_sets').whereNull('root_account_id').where('name', 'like', '% (shared)');
    expect(shared.map((s) => s.name).sort()).toEqual([
      'Equipment damage waiver (shared)',
      'Special event liability (shared)',
      'Trip excess (shared)',
    ]);
    const second = JSON.parse(again.stdout).accounts.find((a: { slug: string }) => a.slug === 'second-agency');
    const listed = await call(app.baseUrl, '/api/v1/question_sets?pageSize=100', { key: second.testApiKey });
    expect(listed.body.data.filter((s: { isShared: boolean }) => s.isShared).map((s: { name: string }) => s.name)).toEqual(
      expect.arrayContaining(shared.map((s) => s.name)),
    );
    const tripSet = shared.find((s) => s.name === 'Trip excess (shared)')!;
    const product = await call(app.baseUrl, '/api/v1/products', {
      method: 'POST',
      key: second.testApiKey,
      body: { customerName: 'Second Agency Trips', defaultPrice: 12, questionSetId: tripSet.id },
    });
    expect(product.status).toBe(201);
    expect(product.body.data.coverageUnit).toBe('trip');
    // The seeded venue products' certificates name their endorsements (issue 50, item 1), once.
    // The seeded accounts' own (other suites of the same run make SEL-DAY products too).
    const seededAccounts = (JSON.parse(again.stdout).accounts as Array<{ rootAccountId: number }>).map((a) => a.rootAccountId);
    const venueProducts = await app.container
      .db('product_lines')
      .where({ internal_name: 'SEL-DAY' })
      .whereIn('root_account_id', seededAccounts)
      .select('id');
    expect(venueProducts.length).toBeGreaterThan(0);
    const settings = await app.container.db('product_certificate_settings').whereIn(
      'product_line_id',
      venueProducts.map((p) => p.id),
    );
    expect(settings).toHaveLength(venueProducts.length);
    for (const s of settings)
      expect(s).toMatchObject({
        coverage_type: 'Commercial General Liability',
        additional_insured_form: 'CG 20 26 04 13',
        waiver_form: 'CG 24 04 05 09',
        primary_non_contributory: true,
      });
    // Each seeded product sells with commission and premium tax (issue 49), set once over two runs.
    const parties = Object.fromEntries(
      (JSON.parse(again.stdout).parties as Array<{ kind: string; rootAccountId: number }>).map((p) => [p.rootAccountId, p.kind]),
    );
    const catalog = await app.container
      .db('product_lines as pl')
      .whereIn('pl.root_account_id', seededAccounts)
      .whereIn('pl.internal_name', ['SEL-DAY', 'EDW-DAY', 'TRX-TRIP'])
      .leftJoin('product_commission_rates as r', 'r.product_line_id', 'pl.id')
      .leftJoin('product_tax_settings as t', 't.product_line_id', 'pl.id')
      .select('pl.internal_name', 'r.party_root_account_id', 'r.rate_bps', 't.line_of_business', 't.risk_location');
    expect(catalog).toHaveLength(6);
    expect(
      new Set(
        catalog.map((r) => `${r.internal_name} ${parties[r.party_root_account_id]} ${r.rate_bps} ${r.line_of_business} ${r.risk_location}`),
      ),
    ).toEqual(
      new Set([
        'SEL-DAY mga 1500 general_liability venue',
        'EDW-DAY mga 1000 property venue',
        'TRX-TRIP insurer 2000 travel named_insured',
      ]),
    );
  }, 120_000);
});
