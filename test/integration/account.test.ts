/**
 * `GET /api/v1/account` on the real app and database: each agency's key reads its own account,
 * teammates and key (mode, teammate, platform fee) and the processor mode its payments use;
 * nothing of another agency; the ids it returns are the ones the other surfaces accept.
 */
import { startTestApp, type TestApp } from '../helpers/app';
import { call, createKey } from '../helpers/fixtures';
import { createAgency, type Agency } from '../helpers/certificates';

let app: TestApp;
let liveProcessorApp: TestApp;
let a: Agency;
let b: Agency;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
  a = await createAgency(app, 'Harbor & Pine Insurance Agency');
  b = await createAgency(app, 'Cedar Coast Agency');
});
afterAll(async () => {
  await app?.close();
  await liveProcessorApp?.close();
});

const account = (key: string, base = app.baseUrl) => call(base, '/api/v1/account', { key });
const rootIdOf = async (agency: Agency) =>
  (await app.container.db('root_accounts').where({ idp_root_account_uuid: agency.rootUuid }).first('id')).id as number;

test('when each agency asks with its test key, then it gets its own account, both teammates and its key, and nothing of the other', async () => {
  for (const [mine, theirs] of [
    [a, b],
    [b, a],
  ] as const) {
    const res = await account(mine.key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, message: 'Account retrieved' });
    const data = res.body.data;
    expect(data.root_account).toEqual({
      id: await rootIdOf(mine),
      name: expect.any(String),
      slug: mine.slug,
      kind: 'agency',
      idp_root_account_uuid: mine.rootUuid,
    });
    expect(data.teammates.map((t: { idp_teammate_uuid: string }) => t.idp_teammate_uuid)).toEqual([
      mine.teammateUuid,
      mine.otherTeammateUuid,
    ]);
    expect(data.api_key).toMatchObject({
      mode: 'test',
      teammate: { idp_teammate_uuid: mine.teammateUuid, name: 'Dana Agent' },
      platform_fee_bps: null,
    });
    expect(data.processor).toEqual({ mode: 'test' });
    expect(JSON.stringify(data)).not.toContain(theirs.rootUuid);
    expect(JSON.stringify(data)).not.toContain(theirs.teammateUuid);
  }
});

test('when the ids it returns are used, then the buyer and certificate surfaces accept them', async () => {
  const me = (await account(a.key)).body.data;
  const connected = await call(app.baseUrl, '/platform-seller-invites/checkIfBuyerExists', {
    method: 'POST',
    key: a.key,
    body: { buyer_email: 'nobody.yet@example.com', seller_slug: me.root_account.slug, query_param: '' },
  });
  expect(connected.status).toBe(200);
  const search = await call(app.baseUrl, '/platform-agency-certs/searchTeammatePurchasedProducts', {
    method: 'POST',
    key: a.key,
    body: { idp_teammate_uuid: me.api_key.teammate.idp_teammate_uuid, search_text: 'anything' },
  });
  expect(search.status).toBe(200);
});

test('when a live key with a platform fee and no teammate asks, then it says so; the processor mode follows the secret key of the live mode', async () => {
  const live = (
    await createKey(app.container, { rootAccountId: await rootIdOf(a), mode: 'live', name: 'Website checkout', platformFeeBps: 250 })
  ).key;
  const res = await account(live);
  expect(res.body.data.api_key).toEqual({
    id: expect.any(Number),
    name: 'Website checkout',
    mode: 'live',
    teammate: null,
    platform_fee_bps: 250,
  });
  // Locally the live mode's secret is a test-mode processor key: nothing is charged.
  expect(res.body.data.processor).toEqual({ mode: 'test' });
  liveProcessorApp = await startTestApp({ PAYPROC_LIVE_SECRET_KEY: 'sk_live_accountDiscoveryTest' });
  expect((await account(live, liveProcessorApp.baseUrl)).body.data.processor).toEqual({ mode: 'live' });
  expect((await account(a.key, liveProcessorApp.baseUrl)).body.data.processor).toEqual({ mode: 'test' });
});

test('when the key is missing or unknown, then the gateway answers 403 Forbidden', async () => {
  expect(await call(app.baseUrl, '/api/v1/account')).toMatchObject({ status: 403, body: { message: 'Forbidden' } });
  expect(await account('ik_test_unknown')).toMatchObject({ status: 403, body: { message: 'Forbidden' } });
});

test('when a query parameter is sent, then 400 QUERY_VALIDATION_ERROR names it (the account takes none)', async () => {
  const res = await call(app.baseUrl, '/api/v1/account?include=teammates', { key: a.key });
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ success: false, error: { code: 'QUERY_VALIDATION_ERROR' } });
  expect(JSON.stringify(res.body)).toContain('include');
});
