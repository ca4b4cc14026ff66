/**
 * Buyer connection `/platform-seller-invites` (spec §4.3, §5.5, §5.7, §7.2) and buyer access
 * token verification, against the real app and real PostgreSQL.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../helpers/app';
import { call, createKey, createRootAccount } from '../helpers/fixtures';
import { eventually } from '../helpers/worker';
import { createAccountsRepository, type RootAccount } from '../../src/accounts/repository';
import type { Principal } from '../../src/api-keys/service';

const TOKEN_SHAPE = /^bat_[A-Za-z0-9_-]{43}$/;
const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let app: TestApp;
let accountA: RootAccount;
let accountB: RootAccount;
let keyA: string;
let keyB: string;
let keyAId: number;
let agentAId: number;
let principalA: Principal;
let principalB: Principal;
/** Every token the API handed out, to search the logs for at the end. */
const issuedTokens: string[] = [];

beforeAll(async () => {
  app = await startTestApp();
  accountA = await createRootAccount(app.container, 'Harbor Events');
  accountB = await createRootAccount(app.container, 'Summit Agency');
  const agent = await createAccountsRepository(app.container.db).upsertAgent({
    rootAccountId: accountA.id,
    name: 'Ana Agent',
    email: `ana-${randomUUID()}@agency.example`,
  });
  agentAId = agent.id;
  const issuedA = await createKey(app.container, { rootAccountId: accountA.id, agentId: agent.id });
  keyA = issuedA.key;
  keyAId = issuedA.id;
  keyB = (await createKey(app.container, { rootAccountId: accountB.id })).key;
  principalA = (await app.container.services.apiKeys.authenticate(keyA))!;
  principalB = (await app.container.services.apiKeys.authenticate(keyB))!;
});

afterAll(() => app.close());

const newEmail = () => `buyer-${randomUUID()}@example.com`;
const sha256 = (v: string) => createHash('sha256').update(v).digest('hex');

async function check(key: string, body: unknown, base = app.baseUrl) {
  const res = await call(base, '/platform-seller-invites/checkIfBuyerExists', { method: 'POST', key, body });
  if (res.body?.access_token) issuedTokens.push(res.body.access_token);
  return res;
}

async function connect(key: string, body: unknown, base = app.baseUrl) {
  const res = await call(base, '/platform-seller-invites/newConnect', { method: 'POST', key, body });
  if (res.body?.access_token) issuedTokens.push(res.body.access_token);
  return res;
}

const connectBody = (email: string, account: RootAccount = accountA, extra: Record<string, unknown> = {}) => ({
  buyer_first_name: 'Jane',
  buyer_last_name: 'Doe',
  buyer_email: email,
  seller_slug: account.slug,
  query_param: 'spring-fair',
  ...extra,
});
const checkBody = (email: string, account: RootAccount = accountA) => ({
  buyer_email: email,
  seller_slug: account.slug,
  query_param: 'spring-fair',
});

async function countBuyers(email: string): Promise<number> {
  const [row] = await app.container.db('buyers').whereRaw('lower(email) = lower(?)', [email.trim()]).count({ n: '*' });
  return Number(row!.n);
}
async function connectionsOf(email: string) {
  return app.container
    .db('buyer_connections as c')
    .join('buyers as b', 'b.id', 'c.buyer_id')
    .whereRaw('lower(b.email) = lower(?)', [email.trim()])
    .select('c.*');
}

describe('POST /platform-seller-invites/checkIfBuyerExists', () => {
  test('when the buyer is unknown, then 200 with buyer_exists false and nothing else', async () => {
    const res = await check(keyA, checkBody(newEmail()));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ buyer_exists: false });
  });

  test('when the buyer is connected to this seller, then its idp_accnt_uuid and a fresh token each time', async () => {
    const email = newEmail();
    const connected = await connect(keyA, connectBody(email));
    const first = await check(keyA, checkBody(email));
    const second = await check(keyA, checkBody(email));
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(['access_token', 'access_token_expires_at', 'buyer_exists', 'idp_accnt_uuid']);
    expect(first.body).toMatchObject({
      buyer_exists: true,
      idp_accnt_uuid: connected.body.idp_accnt_uuid,
      access_token: expect.stringMatching(TOKEN_SHAPE),
    });
    expect(second.body.access_token).not.toBe(first.body.access_token);
    expect(first.body.access_token).not.toBe(connected.body.access_token);
  });
});

describe('POST /platform-seller-invites/newConnect', () => {
  test('when the buyer is new, then the buyer and its connection are created with the attribution and a hashed token', async () => {
    const email = newEmail();
    const before = Date.now();
    const res = await connect(keyA, connectBody(email, accountA, { query_param: 'attr-123' }));
    expect(res.status).toBe(200);
    expect(res.body.success).toBeUndefined();
    expect(Object.keys(res.body).sort()).toEqual([
      'access_token',
      'access_token_expires_at',
      'buyer_already_exists',
      'idp_accnt_uuid',
      'objectOfInsertedIds',
    ]);
    expect(res.body.buyer_already_exists).toBe(false);
    expect(res.body.idp_accnt_uuid).toMatch(UUID_SHAPE);
    expect(res.body.objectOfInsertedIds).toEqual({ buyer_id: res.body.idp_accnt_uuid, buyer_connection_id: expect.any(Number) });
    expect(res.body.access_token).toMatch(TOKEN_SHAPE);
    const ttlMs = Date.parse(res.body.access_token_expires_at) - before;
    expect(ttlMs).toBeGreaterThanOrEqual(899_000);
    expect(ttlMs).toBeLessThanOrEqual(905_000);

    const buyer = await app.container.db('buyers').where({ idp_accnt_uuid: res.body.idp_accnt_uuid }).first();
    expect(buyer).toMatchObject({ email, first_name: 'Jane', last_name: 'Doe' });
    const [conn] = await connectionsOf(email);
    expect(conn).toMatchObject({
      id: res.body.objectOfInsertedIds.buyer_connection_id,
      root_account_id: accountA.id,
      api_key_id: keyAId,
      agent_id: agentAId,
      query_param: 'attr-123',
    });
    const tokens = await app.container.db('buyer_access_tokens').where({ buyer_id: buyer.id });
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).toMatchObject({ root_account_id: accountA.id, token_hash: sha256(res.body.access_token) });
  });

  test('when it is called twice, then nothing is created twice, buyer_already_exists is true and the stored names and attribution stay', async () => {
    const email = newEmail();
    const first = await connect(keyA, connectBody(email));
    const second = await connect(
      keyA,
      connectBody(email, accountA, { buyer_first_name: 'Janet', buyer_last_name: 'Other', query_param: 'later-code' }),
    );
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      buyer_already_exists: true,
      objectOfInsertedIds: { buyer_id: null, buyer_connection_id: null },
      idp_accnt_uuid: first.body.idp_accnt_uuid,
    });
    expect(second.body.access_token).not.toBe(first.body.access_token);
    expect(await countBuyers(email)).toBe(1);
    const conns = await connectionsOf(email);
    expect(conns).toHaveLength(1);
    expect(conns[0].query_param).toBe('spring-fair');
    const buyer = await app.container.db('buyers').where({ idp_accnt_uuid: first.body.idp_accnt_uuid }).first();
    expect(buyer).toMatchObject({ first_name: 'Jane', last_name: 'Doe' });
  });

  test('when five connects of one buyer run concurrently, then one buyer and one connection exist and exactly one call inserted them', async () => {
    const email = newEmail();
    const results = await Promise.all(Array.from({ length: 5 }, () => connect(keyA, connectBody(email))));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(results.map((r) => r.body.idp_accnt_uuid)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.access_token)).size).toBe(5);
    expect(results.filter((r) => r.body.buyer_already_exists === false)).toHaveLength(1);
    expect(results.filter((r) => r.body.objectOfInsertedIds.buyer_id !== null)).toHaveLength(1);
    expect(results.filter((r) => r.body.objectOfInsertedIds.buyer_connection_id !== null)).toHaveLength(1);
    expect(await countBuyers(email)).toBe(1);
    expect(await connectionsOf(email)).toHaveLength(1);
  });

  test('when the email differs only in case and surrounding spaces, then it is the same buyer, stored trimmed and lower case', async () => {
    const local = `Mixed.Case-${randomUUID()}`;
    const res = await connect(keyA, connectBody(`  ${local}@Example.COM `));
    expect(res.status).toBe(200);
    const stored = await app.container.db('buyers').where({ idp_accnt_uuid: res.body.idp_accnt_uuid }).first();
    expect(stored.email).toBe(`${local.toLowerCase()}@example.com`);

    const checked = await check(keyA, checkBody(`${local.toUpperCase()}@EXAMPLE.com`));
    expect(checked.body).toMatchObject({ buyer_exists: true, idp_accnt_uuid: res.body.idp_accnt_uuid });
    const again = await connect(keyA, connectBody(`${local.toLowerCase()}@example.com`));
    expect(again.body).toMatchObject({ buyer_already_exists: true, idp_accnt_uuid: res.body.idp_accnt_uuid });
    expect(await countBuyers(`${local}@example.com`)).toBe(1);
  });

  test('when a buyer is connected to account A only, then B reads it as missing and B connects the same global buyer without a duplicate', async () => {
    const email = newEmail();
    const viaA = await connect(keyA, connectBody(email, accountA));
    expect((await check(keyB, checkBody(email, accountB))).body).toEqual({ buyer_exists: false });

    const viaB = await connect(keyB, connectBody(email, accountB, { buyer_first_name: 'Other', query_param: 'b-code' }));
    expect(viaB.status).toBe(200);
    expect(viaB.body).toMatchObject({
      buyer_already_exists: false,
      objectOfInsertedIds: { buyer_id: null, buyer_connection_id: expect.any(Number) },
      idp_accnt_uuid: viaA.body.idp_accnt_uuid,
    });
    expect(await countBuyers(email)).toBe(1);
    const conns = await connectionsOf(email);
    expect(conns.map((c: any) => [c.root_account_id, c.query_param]).sort()).toEqual(
      [
        [accountA.id, 'spring-fair'],
        [accountB.id, 'b-code'],
      ].sort(),
    );
    expect((await check(keyB, checkBody(email, accountB))).body.buyer_exists).toBe(true);
  });
});

describe('seller_slug and body validation', () => {
  test.each([
    ['checkIfBuyerExists', 'another account'],
    ['checkIfBuyerExists', 'unknown'],
    ['newConnect', 'another account'],
    ['newConnect', 'unknown'],
  ])('when %s names a seller slug of %s, then 404 SELLER_NOT_FOUND with the same bare body', async (path, kind) => {
    const slug = kind === 'unknown' ? `nope-${randomUUID().slice(0, 8)}` : accountB.slug;
    const email = newEmail();
    const body = path === 'newConnect' ? { ...connectBody(email), seller_slug: slug } : { ...checkBody(email), seller_slug: slug };
    const res = await call(app.baseUrl, `/platform-seller-invites/${path}`, { method: 'POST', key: keyA, body });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'SELLER_NOT_FOUND', message: "seller_slug does not name this API key's seller" });
    expect(await countBuyers(email)).toBe(0);
  });

  // Built at collection time, before beforeAll: body validation runs before the seller check anyway.
  const valid = {
    buyer_first_name: 'Jane',
    buyer_last_name: 'Doe',
    buyer_email: 'valid@example.com',
    seller_slug: 'any-seller',
    query_param: 'spring-fair',
  };
  const badConnectBodies: [string, unknown][] = [
    ['an empty object', {}],
    ['a missing buyer_email', { ...valid, buyer_email: undefined }],
    ['a malformed email', { ...valid, buyer_email: 'not-an-email' }],
    [
      'an email over 254 characters',
      { ...valid, buyer_email: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com` },
    ],
    ['a numeric email', { ...valid, buyer_email: 42 }],
    ['a blank first name', { ...valid, buyer_first_name: '   ' }],
    ['a last name of 101 characters', { ...valid, buyer_last_name: 'x'.repeat(101) }],
    ['a seller_slug of 65 characters', { ...valid, seller_slug: 's'.repeat(65) }],
    ['an empty seller_slug', { ...valid, seller_slug: '' }],
    ['a query_param of 256 characters', { ...valid, query_param: 'q'.repeat(256) }],
    ['a null query_param', { ...valid, query_param: null }],
    ['a missing query_param', { ...valid, query_param: undefined }],
    ['an unknown field', { ...valid, buyer_phone: '+1-555-0100' }],
    ['an array body', [valid]],
  ];

  test.each(badConnectBodies)('when newConnect gets %s, then 400 VALIDATION_ERROR in the bare shape', async (_name, body) => {
    const res = await connect(keyA, body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(typeof res.body.message).toBe('string');
    expect(res.body).not.toHaveProperty('success');
    expect(Object.keys(res.body).every((k) => ['code', 'message', 'details'].includes(k))).toBe(true);
  });

  test.each([
    ['a missing seller_slug', { buyer_email: 'a@example.com', query_param: '' }],
    ['a malformed email', { buyer_email: 'a@', seller_slug: 'x', query_param: '' }],
    ['buyer names (not part of this body)', { buyer_email: 'a@example.com', seller_slug: 'x', query_param: '', buyer_first_name: 'A' }],
  ])('when checkIfBuyerExists gets %s, then 400 VALIDATION_ERROR in the bare shape', async (_name, body) => {
    const res = await check(keyA, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: expect.any(Array) });
    expect(res.body).not.toHaveProperty('success');
  });

  test('when the body is not JSON, then 400 VALIDATION_ERROR in the bare shape', async () => {
    const res = await call(app.baseUrl, '/platform-seller-invites/newConnect', {
      method: 'POST',
      key: keyA,
      rawBody: '{"buyer_email":',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.any(String) });
  });

  test('when query_param is empty, then it is accepted', async () => {
    const res = await connect(keyA, connectBody(newEmail(), accountA, { query_param: '' }));
    expect(res.status).toBe(200);
  });

  test.each([
    ['no key', undefined],
    ['an unknown key', `ik_live_${randomBytes(32).toString('base64url')}`],
  ])('when the request has %s, then the gateway answers 403 Forbidden', async (_name, key) => {
    const res = await call(app.baseUrl, '/platform-seller-invites/checkIfBuyerExists', {
      method: 'POST',
      key,
      body: checkBody(newEmail()),
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: 'Forbidden' });
  });
});

describe('verifyAccessToken', () => {
  const verify = (p: Principal, uuid: unknown, token: unknown) => app.container.services.buyers.verifyAccessToken(p, uuid, token);

  test('when the token is current and used by the same account for its buyer, then the buyer is returned', async () => {
    const email = newEmail();
    const res = await connect(keyA, connectBody(email));
    const buyer = await verify(principalA, res.body.idp_accnt_uuid, res.body.access_token);
    expect(buyer).toEqual({
      buyerId: expect.any(Number),
      idpAccntUuid: res.body.idp_accnt_uuid,
      email,
      firstName: 'Jane',
      lastName: 'Doe',
    });
    // the uuid is accepted in upper case too
    await expect(verify(principalA, res.body.idp_accnt_uuid.toUpperCase(), res.body.access_token)).resolves.toMatchObject({ email });
  });

  test("when another account's key uses the token, then ACCESS_TOKEN_INVALID (401), even if that account is connected to the buyer", async () => {
    const email = newEmail();
    const viaA = await connect(keyA, connectBody(email, accountA));
    await connect(keyB, connectBody(email, accountB));
    await expect(verify(principalB, viaA.body.idp_accnt_uuid, viaA.body.access_token)).rejects.toMatchObject({
      code: 'ACCESS_TOKEN_INVALID',
      status: 401,
    });
  });

  test('when the token belongs to another buyer, then ACCESS_TOKEN_INVALID', async () => {
    const one = await connect(keyA, connectBody(newEmail()));
    const two = await connect(keyA, connectBody(newEmail()));
    await expect(verify(principalA, one.body.idp_accnt_uuid, two.body.access_token)).rejects.toMatchObject({
      code: 'ACCESS_TOKEN_INVALID',
      status: 401,
    });
  });

  test.each([
    ['a malformed uuid', 'not-a-uuid', 'valid'],
    ['a garbage token', 'valid', 'garbage'],
    ['an unknown well-formed token', 'valid', `bat_${randomBytes(32).toString('base64url')}`],
    ['an unknown uuid', randomUUID(), 'valid'],
    ['a missing token', 'valid', undefined],
    ['a non-string token', 'valid', { token: 1 }],
    ['an API key in place of the token', 'valid', 'ik'],
  ])('when verification gets %s, then ACCESS_TOKEN_INVALID and never a crash', async (_name, uuid, token) => {
    const res = await connect(keyA, connectBody(newEmail()));
    const u = uuid === 'valid' ? res.body.idp_accnt_uuid : uuid;
    const t = token === 'valid' ? res.body.access_token : token === 'ik' ? keyA : token;
    await expect(verify(principalA, u, t)).rejects.toMatchObject({ code: 'ACCESS_TOKEN_INVALID', status: 401 });
  });

  test('when the token outlives its TTL, then ACCESS_TOKEN_EXPIRED (401)', async () => {
    const shortLived = await startTestApp({ BUYER_ACCESS_TOKEN_TTL_SECONDS: '1' });
    try {
      const account = await createRootAccount(shortLived.container);
      const key = (await createKey(shortLived.container, { rootAccountId: account.id })).key;
      const principal = (await shortLived.container.services.apiKeys.authenticate(key))!;
      const res = await connect(key, connectBody(newEmail(), account), shortLived.baseUrl);
      expect(res.status).toBe(200);
      const { idp_accnt_uuid: uuid, access_token: token } = res.body;
      await expect(shortLived.container.services.buyers.verifyAccessToken(principal, uuid, token)).resolves.toMatchObject({
        idpAccntUuid: uuid,
      });
      // The app runs in this process: its clock is this one, past the expiry it answered.
      const expiresAt = Date.parse(res.body.access_token_expires_at);
      await eventually(async () => Date.now() > expiresAt, 5_000);
      await expect(shortLived.container.services.buyers.verifyAccessToken(principal, uuid, token)).rejects.toMatchObject({
        code: 'ACCESS_TOKEN_EXPIRED',
        status: 401,
      });
      // expiry is checked after the binding: another account still gets INVALID
      await expect(shortLived.container.services.buyers.verifyAccessToken(principalA, uuid, token)).rejects.toMatchObject({
        code: 'ACCESS_TOKEN_INVALID',
      });
      expect(shortLived.rawLogs()).not.toContain(token);
    } finally {
      await shortLived.close();
    }
  });
});

describe('OpenAPI and logs', () => {
  test('when /openapi.json is fetched, then both buyer paths are documented with the bare error schema', async () => {
    const res = await call(app.baseUrl, '/openapi.json');
    const paths = res.body.paths;
    for (const p of ['/platform-seller-invites/checkIfBuyerExists', '/platform-seller-invites/newConnect']) {
      expect(paths[p].post.requestBody).toBeDefined();
      expect(paths[p].post.responses['200']).toBeDefined();
      expect(paths[p].post.responses['404'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/BareError' });
    }
    expect(res.body.components.schemas.NewConnectResponse.example).toBeDefined();
  });

  test('when the suite has issued tokens, then none of them appears in the captured logs', () => {
    expect(issuedTokens.length).toBeGreaterThan(20);
    const logs = app.rawLogs();
    expect(logs.length).toBeGreaterThan(0);
    for (const token of issuedTokens) expect(logs).not.toContain(token);
    expect(logs).not.toContain('bat_');
  });
});
