/**
 * The operators' codec endpoint (`POST /codec/decode|encode`, src/http/codec-server.ts) on
 * the real app: off without a token, 401 without the right bearer token, the Temporal UI's CORS
 * preflight, a round trip through the service's AES-256-GCM codec, and a real encrypted
 * workflow input from a history decoded for an operator.
 */
import { startTestApp, type TestApp } from '../helpers/app';
import { call } from '../helpers/fixtures';
import { codecJson, jsonPayload, withUnpolledWorkflow } from '../helpers/codec';

const TOKEN = 'operator-codec-token-for-tests-0123456789';
const UI = 'http://localhost:8233';
let app: TestApp;
let off: TestApp;

beforeAll(async () => {
  app = await startTestApp({ TEMPORAL_CODEC_TOKEN: TOKEN });
  off = await startTestApp();
});
afterAll(async () => {
  await app?.close();
  await off?.close();
});

const post = (a: TestApp, path: string, body: unknown, token: string | null = TOKEN, headers: Record<string, string> = {}) =>
  call(a.baseUrl, path, { method: 'POST', body, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });

test('when no codec token is configured, then the endpoint does not exist (404 ROUTE_NOT_FOUND)', async () => {
  const res = await post(off, '/codec/decode', { payloads: [] });
  expect(res.status).toBe(404);
  expect(res.body.error.code).toBe('ROUTE_NOT_FOUND');
});

test.each([
  ['no Authorization header', null],
  ['a wrong token', 'operator-codec-token-for-tests-012345678X'],
  ['an empty bearer', ''],
])('when the request has %s, then it is refused with 401 AUTHENTICATION_ERROR and nothing decoded', async (_case, token) => {
  const res = await post(app, '/codec/decode', { payloads: [jsonPayload('secret')] }, token);
  expect(res.status).toBe(401);
  expect(res.body.error.code).toBe('AUTHENTICATION_ERROR');
  expect(res.text).not.toContain(jsonPayload('secret').data);
});

test('when the Temporal UI sends its CORS preflight, then its origin is allowed without the token; another origin gets no CORS headers', async () => {
  const pre = await call(app.baseUrl, '/codec/decode', {
    method: 'OPTIONS',
    headers: {
      origin: UI,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type,x-namespace',
    },
  });
  expect(pre.status).toBe(204);
  expect(pre.headers.get('access-control-allow-origin')).toBe(UI);
  expect(pre.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
  expect(pre.headers.get('access-control-allow-credentials')).toBe('true');
  const other = await post(app, '/codec/decode', { payloads: [] }, TOKEN, { origin: 'https://evil.example' });
  expect(other.status).toBe(200);
  expect(other.headers.get('access-control-allow-origin')).toBeNull();
});

test('when payloads are encoded and the result decoded, then the original comes back and the encoded form is encrypted with the current key id', async () => {
  const original = jsonPayload({ buyerEmail: 'jordan@example.com' });
  const enc = await post(app, '/codec/encode', { payloads: [original] }, TOKEN, { 'x-namespace': 'default' });
  expect(enc.status).toBe(200);
  expect(enc.headers.get('cache-control')).toBe('no-store');
  const [encoded] = enc.body.payloads;
  expect(Buffer.from(encoded.metadata.encoding, 'base64').toString()).toBe('binary/encrypted');
  expect(Buffer.from(encoded.metadata['encryption-key-id'], 'base64').toString()).toBe(app.container.config.TEMPORAL_PAYLOAD_KEYS[0]!.id);
  expect(Buffer.from(encoded.data, 'base64').toString('latin1')).not.toContain('jordan');
  const dec = await post(app, '/codec/decode', { payloads: [encoded] });
  expect(dec.body.payloads).toEqual([original]);
});

test('when a body is not the payloads shape or a payload does not verify, then 400 says which', async () => {
  expect((await post(app, '/codec/decode', { payload: [] })).body.error.code).toBe('VALIDATION_ERROR');
  expect((await post(app, '/codec/decode', { payloads: [{ data: 'not base64!' }] })).body.error.code).toBe('VALIDATION_ERROR');
  const [encoded] = (await post(app, '/codec/encode', { payloads: [jsonPayload('x')] })).body.payloads;
  const bytes = Buffer.from(encoded.data, 'base64');
  bytes[bytes.length - 1]! ^= 1;
  const res = await post(app, '/codec/decode', { payloads: [{ ...encoded, data: bytes.toString('base64') }] });
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringMatching(/does not verify/) });
});

test('when a plain (never encrypted) payload is decoded, then it passes through unchanged', async () => {
  const plain = jsonPayload({ a: 1 });
  expect((await post(app, '/codec/decode', { payloads: [plain] })).body.payloads).toEqual([plain]);
});

test('when the input of a real workflow start is taken from its stored history, then it is encrypted there and the endpoint decodes it for the operator', async () => {
  const input = { purchaseId: 7, note: 'Named insured: Jordan Lee, jordan@example.com' };
  await withUnpolledWorkflow(app.container.temporal.client, 'codecProbeWorkflow', input, 'codec endpoint test done', async (handle) => {
    const history = await handle.fetchHistory();
    const stored = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    expect(Buffer.from(stored.metadata!.encoding!).toString()).toBe('binary/encrypted');
    expect(Buffer.from(stored.data!).toString('latin1')).not.toContain('Jordan');
    const res = await post(app, '/codec/decode', { payloads: [codecJson(stored)] });
    expect(res.status).toBe(200);
    expect(res.body.payloads).toEqual([jsonPayload(input)]);
  });
});

test("when the body is {} or empty (the CLI's form of an empty payload list), then the answer is an empty list, not an error", async () => {
  for (const body of [{}, undefined]) {
    for (const path of ['/codec/decode', '/codec/encode']) {
      const res = await post(app, path, body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ payloads: [] });
    }
  }
});

describe('the UI mount (/codec/ui/<key>)', () => {
  const KEY = 'ui-mount-key-for-tests-0123456789abcdef';
  let ui: TestApp;
  beforeAll(async () => {
    ui = await startTestApp({ TEMPORAL_CODEC_TOKEN: TOKEN, TEMPORAL_CODEC_UI_KEY: KEY });
  });
  afterAll(async () => ui?.close());

  test('when the UI posts to its mount without any Authorization, then payloads decode and the line logged names the UI as the caller', async () => {
    const [encoded] = (await post(ui, '/codec/encode', { payloads: [jsonPayload({ n: 1 })] })).body.payloads;
    const pre = await call(ui.baseUrl, `/codec/ui/${KEY}/decode`, {
      method: 'OPTIONS',
      headers: { origin: UI, 'access-control-request-method': 'POST' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe(UI);
    const res = await post(ui, `/codec/ui/${KEY}/decode`, { payloads: [encoded] }, null, { origin: UI, 'x-namespace': 'default' });
    expect(res.status).toBe(200);
    expect(res.body.payloads).toEqual([jsonPayload({ n: 1 })]);
    expect(ui.logs.filter((l) => l.msg === 'codec request').at(-1)).toMatchObject({
      codec: 'decode',
      caller: 'temporal-ui',
      origin: UI,
      namespace: 'default',
      payloads: 1,
    });
    expect(ui.rawLogs()).not.toContain(KEY);
  });

  test('when the key in the path is wrong, or the mount is not configured, then it is 404 like any unknown path', async () => {
    const wrong = await post(ui, `/codec/ui/${KEY.slice(0, -1)}x/decode`, { payloads: [] }, null);
    expect(wrong.status).toBe(404);
    expect(wrong.body.error.code).toBe('ROUTE_NOT_FOUND');
    const unset = await post(app, `/codec/ui/${KEY}/decode`, { payloads: [] }, null);
    expect(unset.status).toBe(404);
  });
});
