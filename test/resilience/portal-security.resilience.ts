/**
 * The agency portal under attack, by hand-made HTTP requests (no browser) against the real API,
 * PostgreSQL and the local OpenID Provider: every route the portal serves (listed by the portal
 * itself, so none is forgotten) without a session, without or with a wrong CSRF token, as a
 * viewer, and as another agency's admin naming this agency's key; a forged session cookie; a
 * wrong password; a replayed authorization code; an open redirect through `next`; markup in every
 * text field. Each is refused with a clear page and nothing changes; no page but the one that
 * issues a key shows a key's value.
 */
import crypto from 'node:crypto';
import Koa from 'koa';
import { startTestApp, type TestApp } from '../helpers/app';
import { startLocalIdp, type LocalIdp } from '../helpers/local-idp';
import { freePort } from '../helpers/ports';
import { PortalClient, csrfToken, type PortalAnswer } from '../helpers/portal-client';
import { portalAppSettings } from '../helpers/portal-stack';
import { createAccountsRepository } from '../../src/accounts/repository';
import { createPortal, type PortalRoute } from '../../src/portal/routes';
import type { AppState } from '../../src/http/context';
import { PHASES, joinTurns } from './lib/schedule';

jest.setTimeout(120_000);

let app: TestApp;
let idp: LocalIdp;
let routes: PortalRoute[];
const tag = crypto.randomBytes(4).toString('hex');
const users = {
  adminA: { email: `admin@a-${tag}.example`, name: 'Admin A', password: 'admin A pass phrase', sub: '' },
  viewerA: { email: `viewer@a-${tag}.example`, name: 'Viewer A', password: 'viewer A pass phrase', sub: '' },
  adminB: { email: `admin@b-${tag}.example`, name: 'Admin B', password: 'admin B pass phrase', sub: '' },
};
let accountA: number;
let accountB: number;
let keyA: { id: number; key: string };
let keyB: { id: number; key: string };
/** Every answer of the run, with whether it is a page that issues a key value. */
const answers: { answer: PortalAnswer; issues: boolean }[] = [];
const turn = joinTurns('portal-security', PHASES.fuzzAndSecurity);

const seen = (answer: PortalAnswer, issues = false) => {
  answers.push({ answer, issues });
  return answer;
};

beforeAll(async () => {
  const appPort = await freePort();
  const idpPort = await freePort();
  const appUrl = `http://127.0.0.1:${appPort}`;
  const clientSecret = `secret-${crypto.randomUUID()}`;
  app = await startTestApp(portalAppSettings(appPort, idpPort, clientSecret));
  const accounts = createAccountsRepository(app.container.db);
  accountA = (await accounts.upsertBySlug({ slug: `a-${tag}`, name: `Agency A ${tag}`, kind: 'agency' })).id;
  accountB = (await accounts.upsertBySlug({ slug: `b-${tag}`, name: `Agency B ${tag}`, kind: 'agency' })).id;
  await accounts.upsertAgent({ rootAccountId: accountA, name: users.adminA.name, email: users.adminA.email, portalRole: 'admin' });
  await accounts.upsertAgent({ rootAccountId: accountA, name: users.viewerA.name, email: users.viewerA.email, portalRole: 'viewer' });
  await accounts.upsertAgent({ rootAccountId: accountB, name: users.adminB.name, email: users.adminB.email, portalRole: 'admin' });
  for (const u of Object.values(users)) u.sub = (await app.container.db('agents').where({ email: u.email }).first()).idp_teammate_uuid;
  const keys = app.container.services.apiKeys;
  keyA = await keys.create({ rootAccountId: accountA, name: `A secret key ${tag}`, mode: 'test' });
  keyB = await keys.create({ rootAccountId: accountB, name: `B secret key ${tag}`, mode: 'test' });
  idsOfA.keys = keyA.id;
  idsOfA.teammates = (await app.container.db('agents').where({ email: users.viewerA.email }).first()).id;
  idsOfA.webhooks = (
    await app.container.portal!.webhookEndpoints.create(
      { rootAccountId: accountA, mode: 'test', agentId: null },
      { url: `https://a-${tag}.example/hook`, enabled_events: ['*'] },
    )
  ).id;
  idp = await startLocalIdp({ users: Object.values(users), appUrl, port: idpPort, clientSecret });
  routes = createPortal(new Koa<AppState>(), app.container.portal!, {
    sessionKeys: ['x'.repeat(32)],
    idleMinutes: 30,
    absoluteHours: 12,
    secureCookie: false,
    defaultGraceHours: 24,
  }).routes;
});

afterAll(async () => {
  turn.done();
  await idp?.stop();
  await app?.close();
});

/** A route's URL with `:id` filled in. */
/** Agency A's own ids, per kind of route: a key, a teammate, a webhook endpoint. */
const idsOfA = { keys: 0, teammates: 0, webhooks: 0 };
/** A route's URL naming agency A's thing of that kind (or `id`, e.g. one that exists nowhere). */
const urlOf = (route: PortalRoute, id?: number) => {
  const kind = route.path.split('/')[2] as keyof typeof idsOfA;
  return `${app.baseUrl}${route.path.replace(':id', String(id ?? idsOfA[kind] ?? 999_999_998))}`;
};
/** A plausible form for each POST route (what a real form sends). */
const formOf = (route: PortalRoute): Record<string, string> =>
  route.path.endsWith('/rotate')
    ? { grace_hours: '0' }
    : route.path.endsWith('/delete')
      ? { confirm: 'yes' }
      : route.path === '/portal/keys'
        ? { name: 'attacker key', mode: 'test' }
        : route.path.endsWith('/role')
          ? { role: 'admin' }
          : route.path === '/portal/webhooks'
            ? { url: 'https://attacker.example/hook', events: '*' }
            : route.path === '/portal/account/return-urls'
              ? { success_url: 'https://attacker.example/paid' }
              : {};

/** Both agencies as they stand: keys (status, number of values: a rotation adds one), roles, endpoints, return URLs. */
async function keyStates() {
  const all = [...(await app.container.services.apiKeys.list(accountA)), ...(await app.container.services.apiKeys.list(accountB))];
  const db = app.container.db;
  return {
    keys: all.map((k) => [k.id, k.name, k.status, k.values.length]),
    roles: await db('agents').whereIn('root_account_id', [accountA, accountB]).orderBy('id').select('id', 'portal_role'),
    endpoints: await db('webhook_endpoints').whereIn('root_account_id', [accountA, accountB]).orderBy('id').select('id', 'url', 'status'),
    returnUrls: await db('root_accounts')
      .whereIn('id', [accountA, accountB])
      .orderBy('id')
      .select('checkout_success_url', 'checkout_cancel_url'),
  };
}

async function signedIn(user: { email: string; password: string }): Promise<{ client: PortalClient; token: string }> {
  const client = new PortalClient();
  const landed = seen(await client.signIn(app.baseUrl, user.email, user.password));
  expect([landed.status, landed.url]).toEqual([200, `${app.baseUrl}/portal/keys`]);
  return { client, token: csrfToken(landed.text) };
}

test('the portal lists its routes: the signed-in pages and their changes are all there', () => {
  expect(routes.filter((r) => r.signedIn).map((r) => `${r.method} ${r.path}`)).toEqual(
    expect.arrayContaining([
      'GET /portal/keys',
      'POST /portal/keys',
      'POST /portal/keys/:id/rotate',
      'POST /portal/keys/:id/freeze',
      'POST /portal/keys/:id/unfreeze',
      'GET /portal/keys/:id/delete',
      'POST /portal/keys/:id/delete',
      'GET /portal/audit',
      'GET /portal/account',
      'GET /portal/claims',
      'GET /portal/claims/:id',
      'POST /portal/claims/:id/actions',
    ]),
  );
});

test('a wrong password signs nobody in; the provider says so on its form', async () => {
  const client = new PortalClient();
  const answer = seen(await client.signIn(app.baseUrl, users.adminA.email, 'wrong password'));
  expect(answer.status).toBe(401);
  expect(answer.text).toContain('Wrong email or password.');
  const page = seen(await client.request(`${app.baseUrl}/portal/keys`));
  expect([page.status, page.location]).toEqual([303, `${app.baseUrl}/portal/sign-in?next=%2Fportal%2Fkeys`]);
});

test('without a session every page sends to sign-in and every change is refused', async () => {
  const before = await keyStates();
  const client = new PortalClient();
  for (const route of routes.filter((r) => r.signedIn)) {
    const answer = seen(await client.request(urlOf(route), route.method === 'POST' ? formOf(route) : undefined));
    if (route.method === 'GET') {
      expect([route.path, answer.status, answer.location?.startsWith(`${app.baseUrl}/portal/sign-in?next=`)]).toEqual([
        route.path,
        303,
        true,
      ]);
    } else {
      expect([route.path, answer.status]).toEqual([route.path, 403]);
      expect(answer.text).toContain('nothing was changed');
    }
  }
  expect(await keyStates()).toEqual(before);
});

test('a forged or tampered session cookie is no session', async () => {
  const { client } = await signedIn(users.adminA);
  const origin = app.baseUrl;
  const cookies = client.cookies(origin);
  expect([...cookies.keys()].sort()).toEqual(['coi_portal_session', 'coi_portal_session.sig']);
  const forged = new PortalClient();
  forged.adopt(
    origin,
    new Map([...cookies].map(([k, v]) => [k, k === 'coi_portal_session' ? crypto.randomBytes(32).toString('base64url') : v])),
  );
  const answer = seen(await forged.request(`${app.baseUrl}/portal/keys`));
  expect(answer.status).toBe(303);
  const unsigned = new PortalClient();
  unsigned.adopt(origin, new Map([['coi_portal_session', cookies.get('coi_portal_session')!]]));
  expect(seen(await unsigned.request(`${app.baseUrl}/portal/keys`)).status).toBe(303);
  // The stolen pair itself is a session (that is what a cookie is): it shows only its own agency.
  const stolen = new PortalClient();
  stolen.adopt(origin, cookies);
  const page = seen(await stolen.request(`${app.baseUrl}/portal/keys?mode=test`));
  expect(page.status).toBe(200);
  expect(page.text).not.toContain(`B secret key ${tag}`);
});

test("every change without its CSRF token, or with another session's, is refused and changes nothing", async () => {
  const before = await keyStates();
  const a = await signedIn(users.adminA);
  const b = await signedIn(users.adminB);
  for (const route of routes.filter((r) => r.method === 'POST' && r.signedIn)) {
    for (const token of [undefined, 'x'.repeat(36), b.token]) {
      const form = { ...formOf(route), ...(token ? { _csrf: token } : {}) };
      const answer = seen(await a.client.request(urlOf(route), form));
      expect([route.path, token === b.token ? 'other' : String(token).slice(0, 3), answer.status]).toEqual([
        route.path,
        token === b.token ? 'other' : String(token).slice(0, 3),
        403,
      ]);
      expect(answer.text).toContain('This form expired or did not come from this portal, so nothing was changed.');
    }
  }
  expect(await keyStates()).toEqual(before);
});

test('a viewer reads but every change, and the delete page, is refused', async () => {
  const before = await keyStates();
  const { client, token } = await signedIn(users.viewerA);
  for (const route of routes.filter((r) => r.signedIn && (r.method === 'POST' || r.path.endsWith('/delete')))) {
    const answer = seen(await client.request(urlOf(route), route.method === 'POST' ? { ...formOf(route), _csrf: token } : undefined));
    expect([route.method, route.path, answer.status]).toEqual([route.method, route.path, 403]);
    expect(answer.text).toContain('Your role (viewer) can only read.');
  }
  for (const path of ['/portal/keys?mode=test', '/portal/keys?mode=live', '/portal/audit', '/portal/account']) {
    expect([path, seen(await client.request(`${app.baseUrl}${path}`)).status]).toEqual([path, 200]);
  }
  expect(await keyStates()).toEqual(before);
});

test("another agency's admin naming this agency's key gets the page of a key that does not exist", async () => {
  const before = await keyStates();
  const { client, token } = await signedIn(users.adminB);
  for (const route of routes.filter((r) => r.signedIn && r.path.includes(':id'))) {
    const form = route.method === 'POST' ? { ...formOf(route), _csrf: token } : undefined;
    const foreign = seen(await client.request(urlOf(route), form));
    const nowhere = seen(await client.request(urlOf(route, 999_999_999), form));
    expect([route.method, route.path, foreign.status, nowhere.status]).toEqual([route.method, route.path, 404, 404]);
    // The same page, but for the CSRF token (a fresh one per page): no oracle of which ids exist.
    const plain = (html: string) => html.replace(/name="_csrf" value="[^"]+"/g, '');
    expect(plain(foreign.text)).toBe(plain(nowhere.text));
    expect(foreign.text).not.toContain(`A secret key ${tag}`);
  }
  expect(await keyStates()).toEqual(before);
});

test('a replayed authorization code signs nobody in, even inside a sign-in of its own', async () => {
  const first = new PortalClient();
  let answer = await first.follow(`${app.baseUrl}/portal/sign-in`);
  const action = /<form method="post" action="([^"]+)"/.exec(answer.text)![1]!;
  answer = await first.request(new URL(action, answer.url).href, { email: users.adminA.email, password: users.adminA.password });
  let callback = '';
  while (answer.location) {
    if (answer.location.startsWith(`${app.baseUrl}/portal/callback`)) {
      callback = answer.location;
      break;
    }
    answer = await first.request(answer.location);
  }
  expect(callback).toContain('code=');
  expect(seen(await first.follow(callback)).url).toBe(`${app.baseUrl}/portal`);
  // The code again, with the state of a sign-in the attacker started: the provider refuses the spent code.
  const attacker = new PortalClient();
  const started = seen(await attacker.request(`${app.baseUrl}/portal/sign-in`));
  const state = new URL(started.location!).searchParams.get('state')!;
  const replay = new URL(callback);
  replay.searchParams.set('state', state);
  const refused = seen(await attacker.request(replay.href));
  expect(refused.status).toBe(400);
  expect(refused.text).toContain("The identity provider's answer was refused");
  expect(seen(await attacker.request(`${app.baseUrl}/portal/keys`)).status).toBe(303);
});

test("an ID token whose nonce is not the sign-in's signs nobody in", async () => {
  const client = new PortalClient();
  let answer = await client.follow(`${app.baseUrl}/portal/sign-in`);
  const action = /<form method="post" action="([^"]+)"/.exec(answer.text)![1]!;
  answer = await client.request(new URL(action, answer.url).href, { email: users.adminA.email, password: users.adminA.password });
  while (answer.location && !answer.location.startsWith(`${app.baseUrl}/portal/callback`)) answer = await client.request(answer.location);
  const callback = answer.location!;
  const state = new URL(callback).searchParams.get('state')!;
  // The provider signed the nonce of this sign-in; the session now expects another one.
  const changed = await app.container.db.raw(
    `update portal_sessions set data = jsonb_set(data, '{pending,nonce}', '"tampered-nonce"') where data->'pending'->>'state' = ?`,
    [state],
  );
  expect(changed.rowCount).toBe(1);
  const refused = seen(await client.request(callback));
  expect(refused.status).toBe(400);
  expect(refused.text).toContain("The identity provider's answer was refused");
  expect(seen(await client.request(`${app.baseUrl}/portal/keys`)).status).toBe(303);
});

test('with the identity provider unreachable, sign-in says so (503) instead of failing', async () => {
  const down = await startTestApp({
    PORTAL_OIDC_ISSUER: `http://127.0.0.1:${await freePort()}`,
    PORTAL_OIDC_CLIENT_SECRET: 'secret-of-an-unreachable-provider',
    PORTAL_SESSION_KEYS: crypto.randomBytes(32).toString('base64url'),
  });
  try {
    const answer = await new PortalClient().request(`${down.baseUrl}/portal/sign-in`);
    expect(answer.status).toBe(503);
    expect(answer.text).toContain('The identity provider cannot be reached right now.');
  } finally {
    await down.close();
  }
});

test('next cannot lead off the portal', async () => {
  for (const next of ['https://evil.example/', '//evil.example/', '/portal/../../evil', 'javascript:alert(1)']) {
    const client = new PortalClient();
    const landed = seen(await client.signIn(app.baseUrl, users.adminA.email, users.adminA.password, next));
    expect([next, landed.url]).toEqual([next, `${app.baseUrl}/portal`]);
  }
});

test('markup in every text field is shown as text', async () => {
  const { client, token } = await signedIn(users.adminA);
  const markup = `<script>alert("${tag}")</script><img src=x onerror=alert(1)>`;
  const created = seen(
    await client.request(`${app.baseUrl}/portal/keys`, {
      _csrf: token,
      mode: 'test',
      name: `n${markup}`,
      description: `d${markup}`,
      platform_fee_bps: markup,
    }),
  );
  expect(created.status).toBe(400); // the fee is not a number: the form comes back with the values
  // Created: a redirect to the key's page, which shows its value once (issue 53).
  const created2 = seen(
    await client.follow(`${app.baseUrl}/portal/keys`, { _csrf: token, mode: 'test', name: `n${markup}`, description: `d${markup}` }),
    true,
  );
  expect([created2.status, created2.url]).toEqual([200, expect.stringMatching(/\/portal\/keys\/\d+\/issued$/)]);
  for (const page of [
    created,
    created2,
    seen(await client.request(`${app.baseUrl}/portal/keys?mode=test`)),
    seen(await client.request(`${app.baseUrl}/portal/audit`)),
  ]) {
    expect(page.text).not.toContain(`<script>alert("${tag}")`);
    expect(page.text).not.toContain('<img src=x');
  }
  expect(created.text).toContain(`&lt;script>alert(&quot;${tag}&quot;)&lt;/script>`);
});

test('no page of the run shows a key value, except the page that issues it', () => {
  const values = /ik_(?:test|live)_[A-Za-z0-9_-]{20,}/g;
  const leaks = answers
    .filter(({ answer, issues }) => !issues && values.test(answer.text))
    .map(({ answer }) => `${answer.status} ${answer.url}`);
  expect(leaks).toEqual([]);
  expect(answers.some(({ answer }) => answer.text.includes(keyA.key) || answer.text.includes(keyB.key))).toBe(false);
  expect(answers.length).toBeGreaterThan(50);
});
