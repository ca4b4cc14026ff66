/**
 * The agency portal in a real browser (puppeteer-core, Debian's Chromium) against the local
 * OpenID Provider (scripts/local-idp.mjs), the real API and PostgreSQL: an admin signs in,
 * creates a key and uses it on the API, rotates it (both values work until the expiry), freezes
 * it (the gateway answers 403), unfreezes and deletes it; adds a webhook endpoint and sees a
 * purchase's events delivered to it (and sends one again); finds the purchase and downloads its
 * certificate; the audit log shows each change with who and from where; a viewer is refused
 * every change; the attacks of the portal's threat list change nothing. axe-core finds no
 * violation on any page.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import { type TestApp } from '../helpers/app';
import { type LocalIdp } from '../helpers/local-idp';
import { createAccountsRepository } from '../../src/accounts/repository';
import { eventually } from '../helpers/worker';
import { buyAndPay, eventSelection, tripSelection, waitIssued, type Agency } from '../helpers/certificates';
import {
  checkAxe as axeAndShot,
  signIn,
  startPortalStack,
  withCookies as withPortalCookies,
  type PortalStack,
  type PortalUser,
} from '../helpers/portal-stack';
import { safeNext } from '../../src/portal/routes';

let stack: PortalStack;
let app: TestApp;
let idp: LocalIdp;
let browser: Browser;
let agency: Agency;
let slug: string;
let admin: PortalUser;
let viewer: PortalUser;
/** What the agency's webhook endpoint received: the events' ids and types, in order. */
const received: { id: string; type: string }[] = [];
let receiver: http.Server;
let otherAccountKeyId: number;
/** Pages checked with axe, by title, and their violations (expected empty). */
const axeResults: Record<string, string[]> = {};

beforeAll(async () => {
  // An agency that sells (products, a key of its own for the purchases), with a portal admin and viewer.
  stack = await startPortalStack('portal');
  ({ app, idp, browser, agency, admin, viewer } = stack);
  slug = agency.slug;
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const event = JSON.parse(body) as { id: string; type: string };
      received.push({ id: event.id, type: event.type });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const other = await createAccountsRepository(app.container.db).upsertBySlug({
    slug: `${slug}-other`,
    name: 'Another Agency',
    kind: 'agency',
  });
  otherAccountKeyId = (await app.container.services.apiKeys.create({ rootAccountId: other.id, name: 'theirs', mode: 'test' })).id;
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await new Promise((r) => receiver?.close(r));
});

/** The API with a key value: the status of GET /api/v1/account. */
async function apiStatus(key: string): Promise<number> {
  return (await fetch(`${app.baseUrl}/api/v1/account`, { headers: { 'x-api-key': key } })).status;
}

/** Submits the page's main form and answers the response the navigation it starts ends on. */
async function submit(tab: Page) {
  const [res] = await Promise.all([tab.waitForNavigation(), tab.click('main form button[type="submit"]')]);
  return res;
}

/** Fills the endorse page's `kind` form (`add`: days; `trip`): its item, its start and, given one, its end (values set directly). */
async function fillEndorseForm(tab: Page, kind: 'add' | 'trip', item: string, start: string, end?: string): Promise<void> {
  await tab.select(`#endorse-${kind}-item`, item);
  await tab.$eval(`#endorse-${kind}-start`, (e, value) => ((e as HTMLInputElement).value = value), start);
  if (end !== undefined) await tab.$eval(`#endorse-${kind}-end`, (e, value) => ((e as HTMLInputElement).value = value), end);
}

/** The audit log's entries matching `where` (and, given `actions`, of those actions), oldest first, as `<action> <outcome>`. */
async function auditOutcomes(where: Record<string, string>, actions?: string[]): Promise<string[]> {
  const query = app.container.db('operator_audit_log').where(where);
  if (actions) query.whereIn('action', actions);
  return (await query.orderBy('id').select('action', 'outcome')).map((o) => `${o.action} ${o.outcome}`);
}

/** axe-core's check of the page, recorded by name and expected clean (a screenshot with PORTAL_SCREENSHOTS_DIR). */
async function checkAxe(tab: Page, name: string): Promise<void> {
  axeResults[name] = await axeAndShot(tab, name);
  expect(axeResults[name]).toEqual([]);
}

async function keyRow(tab: Page, name: string) {
  return tab.$$eval(
    'tbody tr',
    (rows, n) =>
      rows.map((r) => ({ name: r.querySelector('th')!.childNodes[0]!.textContent, text: r.textContent })).find((r) => r.name === n) ?? null,
    name,
  );
}

/**
 * A hand-made request with the browser's portal cookies (the pages' Content-Security-Policy lets
 * no script on them call fetch): the status, the redirect target and the text of the answer.
 */
const withCookies = (context: BrowserContext, url: string, fields?: Record<string, string>) =>
  withPortalCookies(app.baseUrl, context, url, fields);

describe('an admin', () => {
  let context: BrowserContext;
  let tab: Page;
  let firstValue: string;
  let rotatedValue: string;

  beforeAll(async () => {
    context = await browser.createBrowserContext();
    tab = await context.newPage();
  });
  afterAll(() => context.close());

  test('is sent to the identity provider, refused with a wrong password, and lands where they were going', async () => {
    await tab.goto(`${app.baseUrl}/portal/keys?mode=live`);
    expect(tab.url().startsWith(idp.issuer)).toBe(true);
    await checkAxe(tab, 'idp-sign-in');
    const wrong = await Promise.all([
      tab.waitForNavigation(),
      (async () => {
        await tab.type('#email', admin.email);
        await tab.type('#password', 'not the password');
        await tab.click('button[type="submit"]');
      })(),
    ]);
    expect(wrong[0]!.status()).toBe(401);
    expect(await tab.$eval('#login-error', (e) => e.textContent)).toBe('Wrong email or password.');
    await tab.$eval('#email', (e) => ((e as HTMLInputElement).value = ''));
    await signIn(tab, admin);
    expect(tab.url()).toBe(`${app.baseUrl}/portal/keys?mode=live`);
    expect(await tab.$eval('h1', (e) => e.textContent)).toBe('API keys');
    expect(await tab.$eval('header', (e) => e.textContent)).toContain('Ada Admin (admin)');
    const cookie = (await context.cookies()).find((c) => c.name === 'coi_portal_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
    // The cookie holds a random id; the session itself is in the database, keyed by the id's hash.
    const rows = await app.container.db('portal_sessions').select('id_hash', 'data');
    expect(rows.some((r) => r.id_hash === cookie.value)).toBe(false);
    expect(rows.some((r) => (r.data as { teammateSub?: string }).teammateSub === admin.sub)).toBe(true);
    await checkAxe(tab, 'keys-live');
  });

  test('creates a test key whose value (shown once) works on the API', async () => {
    await tab.goto(`${app.baseUrl}/portal/keys?mode=test`);
    // A bad fee is answered next to its field, nothing is created.
    await tab.type('#key-name', 'Website checkout');
    await tab.type('#key-fee', '12.5');
    await Promise.all([tab.waitForNavigation(), tab.click('fieldset button[type="submit"]')]);
    expect(await tab.$eval('#key-fee-error', (e) => e.textContent)).toBe('Enter a whole number from 0 to 10000, or leave it empty.');
    expect(await tab.$eval('#key-fee', (e) => e.getAttribute('aria-describedby'))).toBe('key-fee-hint key-fee-error');
    expect(await tab.$eval('#key-name', (e) => (e as HTMLInputElement).value)).toBe('Website checkout');
    await checkAxe(tab, 'keys-form-error');
    await tab.$eval('#key-fee', (e) => ((e as HTMLInputElement).value = '150'));
    await tab.type('#key-description', 'the agency site');
    const [created] = await Promise.all([tab.waitForNavigation(), tab.click('fieldset button[type="submit"]')]);
    // The POST answered with a redirect (issue 53): the browser lands on the key's page, shown once.
    expect(created!.url()).toMatch(/\/portal\/keys\/\d+\/issued$/);
    expect(created!.headers()['cache-control']).toBe('no-store');
    firstValue = (await tab.$eval('#key-value', (e) => e.textContent))!.trim();
    expect(firstValue).toMatch(/^ik_test_/);
    await checkAxe(tab, 'key-created');
    expect(await apiStatus(firstValue)).toBe(200);
    // The list never shows the value again, only its prefix.
    await tab.goto(`${app.baseUrl}/portal/keys?mode=test`);
    const row = await keyRow(tab, 'Website checkout');
    expect(row!.text).toContain('150 bps');
    expect(row!.text).not.toContain(firstValue);
    expect(await tab.content()).not.toContain(firstValue);
  });

  test('rotates it: the new and the old value both work until the expiry shown', async () => {
    await tab.goto(`${app.baseUrl}/portal/keys?mode=test`);
    const id = await tab.$eval('button[aria-label="Rotate Website checkout"]', (b) => b.closest('form')!.getAttribute('action'));
    await tab.select(`#grace-${id!.split('/')[3]}`, '1');
    await Promise.all([tab.waitForNavigation(), tab.click('button[aria-label="Rotate Website checkout"]')]);
    rotatedValue = (await tab.$eval('#key-value', (e) => e.textContent))!.trim();
    expect(rotatedValue).not.toBe(firstValue);
    const expiry = await tab.$eval('main', (e) => /works until (\d{4}-\d\d-\d\d \d\d:\d\d) UTC/.exec(e.textContent ?? '')?.[1]);
    const expected = new Date(Date.now() + 3600_000).toISOString().slice(0, 16).replace('T', ' ');
    expect([expiry, expected].map((s) => Date.parse(`${s!.replace(' ', 'T')}:00Z`)).reduce((a, b) => Math.abs(a - b))).toBeLessThanOrEqual(
      60_000,
    );
    expect(await apiStatus(rotatedValue)).toBe(200);
    expect(await apiStatus(firstValue)).toBe(200);
    expect(id).toMatch(/^\/portal\/keys\/\d+\/rotate$/);
  });

  test('freezes it (the gateway refuses both values), unfreezes it, then deletes it after confirming', async () => {
    await tab.goto(`${app.baseUrl}/portal/keys?mode=test`);
    await Promise.all([tab.waitForNavigation(), tab.click('button[aria-label="Freeze Website checkout"]')]);
    expect(await tab.$eval('.notice', (e) => e.textContent)).toBe('Key "Website checkout" is now frozen.');
    expect(await apiStatus(rotatedValue)).toBe(403);
    expect(await apiStatus(firstValue)).toBe(403);
    await Promise.all([tab.waitForNavigation(), tab.click('button[aria-label="Unfreeze Website checkout"]')]);
    expect(await apiStatus(rotatedValue)).toBe(200);
    await Promise.all([tab.waitForNavigation(), tab.click('a[aria-label="Delete Website checkout"]')]);
    await checkAxe(tab, 'key-delete-confirm');
    const [unconfirmed] = await Promise.all([tab.waitForNavigation(), tab.click('button.danger')]);
    expect(unconfirmed!.status()).toBe(400);
    expect(await tab.$eval('#confirm-delete-error', (e) => e.textContent)).toBe('Tick the box to confirm, or keep the key.');
    expect(await apiStatus(rotatedValue)).toBe(200);
    await tab.click('#confirm-delete');
    await Promise.all([tab.waitForNavigation(), tab.click('button.danger')]);
    expect(await tab.$eval('.notice', (e) => e.textContent)).toBe('Key "Website checkout" is deleted.');
    expect(await apiStatus(rotatedValue)).toBe(403);
    expect(await keyRow(tab, 'Website checkout')).toBeNull();
  });

  test('HTML typed into a field is shown as text', async () => {
    await tab.goto(`${app.baseUrl}/portal/keys?mode=test`);
    const name = '<img src=x id=injected onerror="document.title=1">';
    await tab.type('#key-name', name);
    await Promise.all([tab.waitForNavigation(), tab.click('fieldset button[type="submit"]')]);
    await tab.goto(`${app.baseUrl}/portal/keys?mode=test`);
    expect(await tab.$('#injected')).toBeNull();
    expect((await keyRow(tab, name))?.name).toBe(name);
  });

  test('the audit log lists every change with who made it and from where', async () => {
    await tab.goto(`${app.baseUrl}/portal/audit`);
    const rows = await tab.$$eval('tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    const actions = rows.map((r) => r[3]).reverse();
    expect(actions).toEqual(['create key', 'rotate key', 'freeze key', 'unfreeze key', 'delete key', 'create key']);
    expect(rows.map((r) => r[4]).every((t) => /^api key \d+ “.+”$/.test(t!))).toBe(true); // each key by its name too
    for (const r of rows) {
      expect(r[1]).toBe(admin.email);
      expect(r[2]).toBe('portal');
      expect(r[5]).toBe('succeeded');
      expect(r[6]).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    }
    await checkAxe(tab, 'audit');
    // No key value is ever written to the audit log.
    const details = await app.container.db('operator_audit_log').where({ actor: admin.email }).select('details');
    expect(JSON.stringify(details)).not.toMatch(/ik_(test|live)_/);
  });

  test('the account page shows the slug, the ids and the teammates with their roles', async () => {
    await tab.goto(`${app.baseUrl}/portal/account`);
    const text = await tab.$eval('main', (e) => e.textContent);
    expect(text).toContain(slug);
    expect(text).toContain(admin.sub);
    const roles = await tab.$$eval('tbody tr', (trs) =>
      trs.map((tr) => [tr.children[1]!.textContent, tr.querySelector('select')?.value ?? tr.lastElementChild!.textContent]),
    );
    expect(roles.filter(([email]) => email === admin.email || email === viewer.email)).toEqual([
      [admin.email, 'admin'],
      [viewer.email, 'viewer'],
    ]);
    await checkAxe(tab, 'account');
  });

  test('changes the checkout return URLs and roles; a bad URL is answered next to its field; the last admin stays one', async () => {
    const accountId = (await app.container.db('root_accounts').where({ slug }).first()).id as number;
    const before = (await app.container.services.apiKeys.account(accountId))!;
    await tab.goto(`${app.baseUrl}/portal/account`);
    await tab.$eval('#success-url', (e) => ((e as HTMLInputElement).value = ''));
    await tab.type('#success-url', 'ftp://agency.example/paid');
    const [bad] = await Promise.all([tab.waitForNavigation(), tab.click('fieldset button[type="submit"]')]);
    expect(bad!.status()).toBe(400);
    expect(await tab.$eval('#success-url-error', (e) => e.textContent)).toBe('The success URL must be an absolute http or https URL.');
    await checkAxe(tab, 'account-form-error');
    await tab.$eval('#success-url', (e) => ((e as HTMLInputElement).value = 'https://agency.example/paid'));
    await Promise.all([tab.waitForNavigation(), tab.click('fieldset button[type="submit"]')]);
    expect(await tab.$eval('.notice', (e) => e.textContent)).toBe('The checkout return URLs are saved.');
    // The cancel URL field came filled with the stored one and was left as it was.
    expect(await app.container.services.apiKeys.account(accountId)).toMatchObject({
      checkoutSuccessUrl: 'https://agency.example/paid',
      checkoutCancelUrl: before.checkoutCancelUrl,
    });
    // The only admin cannot make themselves a viewer.
    const adminId = (await app.container.db('agents').where({ email: admin.email }).first()).id as number;
    await tab.select(`#role-${adminId}`, 'viewer');
    await Promise.all([tab.waitForNavigation(), tab.click(`button[aria-label="Save the role of ${admin.name}"]`)]);
    expect(await tab.$eval('.notice', (e) => e.textContent)).toBe('The role was not changed: the account must keep at least one admin.');
    // The viewer becomes an admin, then a viewer again.
    const viewerId = (await app.container.db('agents').where({ email: viewer.email }).first()).id as number;
    for (const role of ['admin', 'viewer'] as const) {
      await tab.select(`#role-${viewerId}`, role);
      await Promise.all([tab.waitForNavigation(), tab.click(`button[aria-label="Save the role of ${viewer.name}"]`)]);
      expect(await tab.$eval('.notice', (e) => e.textContent)).toBe(`${viewer.name} is now ${role === 'admin' ? 'an admin' : 'a viewer'}.`);
    }
    expect(await auditOutcomes({ actor: admin.email }, ['set_account_return_urls', 'set_teammate_role'])).toEqual([
      'set_account_return_urls succeeded',
      'set_teammate_role refused',
      'set_teammate_role succeeded',
      'set_teammate_role succeeded',
    ]);
  });

  test("a form without its CSRF token, or another agency's key, changes nothing", async () => {
    await tab.goto(`${app.baseUrl}/portal/keys?mode=test`);
    const keyId = (await app.container.services.apiKeys.list((await app.container.db('root_accounts').where({ slug }).first()).id)).find(
      (k) => k.status === 'active',
    )!.id;
    const noToken = await withCookies(context, `/portal/keys/${keyId}/freeze`, {});
    expect(noToken.status).toBe(403);
    expect(noToken.text).toContain('This form expired or did not come from this portal, so nothing was changed.');
    const wrongToken = await withCookies(context, `/portal/keys/${keyId}/freeze`, { _csrf: 'x'.repeat(40) });
    expect(wrongToken.status).toBe(403);
    expect((await app.container.services.apiKeys.get(keyId))!.status).toBe('active');
    const token = await tab.$eval('input[name="_csrf"]', (e) => e.getAttribute('value')!);
    const foreign = await withCookies(context, `/portal/keys/${otherAccountKeyId}/freeze`, { _csrf: token });
    expect(foreign.status).toBe(404);
    expect((await app.container.services.apiKeys.get(otherAccountKeyId))!.status).toBe('active');
  });

  test('an idle or too old session ends: the next page goes through the identity provider again', async () => {
    const seen: string[] = [];
    tab.on('request', (r) => void seen.push(r.url()));
    const viaProvider = () => seen.some((u) => u.startsWith(`${idp.issuer}/auth`));
    // Idle: the session's expiry has passed.
    await app.container.db('portal_sessions').update({ expires_at: new Date(Date.now() - 1000) });
    await tab.goto(`${app.baseUrl}/portal/account`);
    expect(viaProvider()).toBe(true);
    // The provider's own session still stands, so it signs the admin straight back in.
    expect(tab.url()).toBe(`${app.baseUrl}/portal/account`);
    // Absolute: signed in 13 hours ago (the limit is 12), however active since.
    seen.length = 0;
    await tab.goto(`${app.baseUrl}/portal/keys`);
    expect(viaProvider()).toBe(false);
    await app.container.db.raw(
      `update portal_sessions set data = jsonb_set(data, '{signedInAt}', to_jsonb(?::bigint)) where data->>'teammateSub' = ?`,
      [Date.now() - 13 * 3600_000, admin.sub],
    );
    await tab.goto(`${app.baseUrl}/portal/keys`);
    expect(viaProvider()).toBe(true);
    expect(tab.url()).toBe(`${app.baseUrl}/portal/keys`);
    tab.removeAllListeners('request');
  });

  test("adds a webhook endpoint, sees a purchase's events delivered there and sends one again", async () => {
    await tab.goto(`${app.baseUrl}/portal/webhooks?mode=test`);
    await checkAxe(tab, 'webhooks');
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    await tab.type('#endpoint-url', url);
    expect(await tab.$eval('#event-all', (e) => (e as HTMLInputElement).checked)).toBe(true);
    const [created] = await Promise.all([tab.waitForNavigation(), tab.click('fieldset > button[type="submit"]')]);
    expect(created!.url()).toMatch(/\/portal\/webhooks\/\d+\/created\?mode=test$/);
    expect((await tab.$eval('#endpoint-secret', (e) => e.textContent))!.trim()).toMatch(/^whsec_/);
    await checkAxe(tab, 'webhook-created');

    const paid = await buyAndPay(agency, eventSelection(agency, { start: '2027-09-10', end: '2027-09-11' }));
    await waitIssued(agency, paid.paymentIntent);
    const issued = (await eventually(async () => received.find((e) => e.type === 'certificates.issued') ?? null, 30_000))!;

    await tab.goto(`${app.baseUrl}/portal/events?mode=test`);
    await checkAxe(tab, 'events');
    await Promise.all([tab.waitForNavigation(), tab.click(`a[href="/portal/events/${issued.id}?mode=test"]`)]);
    // The delivery is recorded once the endpoint's answer is: reload until it is.
    const caption = await eventually(async () => {
      await tab.reload();
      const text = await tab.$eval('caption', (e) => e.textContent).catch(() => null);
      return text?.includes('succeeded') ? text : null;
    });
    expect(caption).toContain(`To ${url}: succeeded, 1 attempt`);
    expect(await tab.$eval('tbody td:nth-child(2)', (e) => e.textContent)).toBe('200');
    await checkAxe(tab, 'event');
    await submit(tab);
    expect(await tab.$eval('.notice', (e) => e.textContent)).toBe('The event is being sent again to 1 endpoint.');
    await eventually(async () => (received.filter((e) => e.id === issued.id).length === 2 ? true : null), 30_000);
  });

  test('finds the purchase and downloads its certificate, with the verification link and its QR code', async () => {
    await tab.goto(`${app.baseUrl}/portal/purchases?mode=test&q=${encodeURIComponent('Special Event Liability')}`);
    await checkAxe(tab, 'purchases');
    const links = await tab.$$eval('tbody th a', (as) => as.map((a) => a.getAttribute('href')));
    expect(links).toHaveLength(1);
    await Promise.all([tab.waitForNavigation(), tab.click('tbody th a')]);
    expect(await tab.$eval('h1', (e) => e.textContent)).toMatch(/^Purchase #\d+$/);
    const certificates = await tab.$$eval('main table', (tables) => {
      const t = tables.find((x) => x.getAttribute('aria-label') === null && x.closest('[aria-label="Certificates"]'))!;
      return [...t.querySelectorAll('tbody tr')].map((tr) => ({
        number: tr.querySelector('th')!.textContent,
        pdf: tr.querySelector('a[href]')!.getAttribute('href')!,
        verify: tr.querySelectorAll('a[href]')[1]!.getAttribute('href')!,
        qr: tr.querySelector('img')?.getAttribute('src') ?? '',
      }));
    });
    expect(certificates).toHaveLength(2); // two covered days
    const pdf = await fetch(certificates[0]!.pdf);
    expect(pdf.status).toBe(200);
    expect(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
    // The verification link carries the certificate's signed proof (a compact JWS of its facts).
    expect(certificates[0]!.verify).toMatch(
      new RegExp(`^${app.baseUrl}/verify/${certificates[0]!.number}\\?proof=[\\w-]+\\.[\\w-]+\\.[\\w-]+$`),
    );
    expect(certificates[0]!.qr).toMatch(/^data:image\/png;base64,/);
    await checkAxe(tab, 'purchase');
  });

  test('cancels one covered day after previewing its refund; the refund and the cancellation follow', async () => {
    // The purchase page of the previous test.
    await Promise.all([tab.waitForNavigation(), tab.click('a[href$="/cancel?mode=test"]')]);
    const purchaseId = Number(/purchases\/(\d+)\/cancel/.exec(tab.url())![1]);
    const units = await tab.$$eval('input[name="units"]', (inputs) => inputs.map((i) => (i as HTMLInputElement).value));
    expect(units).toHaveLength(2);
    await checkAxe(tab, 'cancel-form');
    // Nothing chosen (the form starts with none ticked, issue 53): answered on the form.
    expect(await tab.$$eval('input[name="units"]:checked', (inputs) => inputs.length)).toBe(0);
    const none = await submit(tab);
    expect(none!.status()).toBe(400);
    expect(await tab.$eval('.error-summary li', (e) => e.textContent)).toBe('Choose at least one covered unit to cancel.');
    await tab.click(`#unit-${units[1]}`);
    await tab.type('#cancel-reason', 'Second day called off');
    await submit(tab);
    const shown = (await tab.$eval('#refund-total', (e) => e.textContent))!;
    expect(shown).toMatch(/^\$\d+\.\d\d$/);
    await checkAxe(tab, 'cancel-preview');
    await Promise.all([tab.waitForNavigation(), tab.click('button.danger')]);
    expect(await tab.$eval('.notice', (e) => e.textContent)).toMatch(/^Cancellation \d+ is (accepted|pending|completed): the refund/);
    // Carried out by the purchase's workflow at the previewed price.
    const done = (await eventually(async () => {
      const res = await fetch(`${app.baseUrl}/api/v1/purchases/${purchaseId}`, { headers: { 'x-api-key': agency.key } });
      const body = (await res.json()) as { data: { cancellations: { status: string; refund: { total: number }; reason: string }[] } };
      return body.data.cancellations[0]?.status === 'completed' ? body.data : null;
    }, 30_000))!;
    expect(done.cancellations).toHaveLength(1);
    expect(`$${(done.cancellations[0]!.refund.total / 100).toFixed(2)}`).toBe(shown);
    expect(done.cancellations[0]!.reason).toBe('Second day called off');
    const audit = await app.container.db('operator_audit_log').where({ actor: admin.email, action: 'cancel_purchase_units' }).first();
    expect([audit.target_id, audit.outcome]).toEqual([String(purchaseId), 'succeeded']);
  });

  test('adds a certificate holder, corrects the named insured through a previewed endorsement, and opens a checkout link for a day added', async () => {
    const purchaseUrl = tab.url(); // the purchase page the cancellation came back to
    expect(purchaseUrl).toMatch(/\/portal\/purchases\/\d+\?mode=test$/);
    const purchaseId = Number(/purchases\/(\d+)/.exec(purchaseUrl)![1]);
    await Promise.all([tab.waitForNavigation(), tab.click('a[href*="/holders/new"]')]);
    // Missing fields are answered next to each.
    const missing = await submit(tab);
    expect(missing!.status()).toBe(400);
    expect(await tab.$eval('#holder-name-error', (e) => e.textContent)).toBe('Enter the name.');
    expect(await tab.$eval('#holder-line1-error', (e) => e.textContent)).toBe('Enter the first address line.');
    await checkAxe(tab, 'holder-form');
    await tab.type('#holder-name', 'Riverside Hall LLC');
    await tab.type('#holder-line1', '200 River Rd');
    await tab.type('#holder-city', 'Springfield');
    await tab.type('#holder-region', 'IL');
    await tab.type('#holder-postal', '62701');
    await tab.click('#holder-additional_insured');
    await submit(tab);
    expect(await tab.$eval('.notice', (e) => e.textContent)).toBe('Riverside Hall LLC is added: 1 certificate is being issued.');
    const holders = async () =>
      (
        (await (
          await fetch(`${app.baseUrl}/api/v1/purchases/${purchaseId}/certificate_holders`, { headers: { 'x-api-key': agency.key } })
        ).json()) as {
          data: { name: string; additional_insured: boolean; certificates: { status: string }[] }[];
        }
      ).data;
    await eventually(
      async () => ((await holders()).find((h) => h.name === 'Riverside Hall LLC')?.certificates[0]?.status === 'issued' ? true : null),
      30_000,
    );
    expect((await holders()).find((h) => h.name === 'Riverside Hall LLC')!.additional_insured).toBe(true);

    await tab.goto(purchaseUrl);
    await Promise.all([tab.waitForNavigation(), tab.click('a[href*="/endorse?"]')]);
    await checkAxe(tab, 'endorse-form');
    const nothing = await submit(tab);
    expect(nothing!.status()).toBe(400);
    expect(await tab.$eval('.error-summary li', (e) => e.textContent)).toBe(
      'Nothing to change: correct the name, move a day or a trip, add days or add a trip.',
    );
    await tab.type('#endorse-name', 'Jordan Lee Events LLC');
    await submit(tab);
    expect(await tab.$eval('#premium-difference', (e) => e.textContent)).toBe('$0.00');
    const reissued = await tab.$eval('main', (e) => /reissued as a new version: ([^.]+)\./.exec(e.textContent ?? '')?.[1] ?? '');
    expect(reissued.split(', ').length).toBeGreaterThanOrEqual(1);
    await checkAxe(tab, 'endorse-preview');
    await submit(tab);
    expect(await tab.$eval('.notice', (e) => e.textContent)).toMatch(
      /^The change is applied: \d+ certificates? (is|are) reissued as a new version\.$/,
    );
    // Adding a day: priced, previewed, then a checkout link for the difference (the day is added once the buyer pays).
    await tab.goto(purchaseUrl);
    await Promise.all([tab.waitForNavigation(), tab.click('a[href*="/endorse?"]')]);
    const itemId = await tab.$eval('#endorse-add-item option:nth-child(2)', (o) => (o as HTMLOptionElement).value);
    await fillEndorseForm(tab, 'add', itemId, '2027-12-30');
    const noEnd = await submit(tab);
    expect(noEnd!.status()).toBe(400);
    expect(await tab.$eval('#endorse-add-end-error', (e) => e.textContent)).toBe('Enter the last day to add.');
    await fillEndorseForm(tab, 'add', itemId, '2027-12-30', '2027-12-30');
    await submit(tab);
    const premium = (await tab.$eval('#premium-difference', (e) => e.textContent))!;
    expect(premium).toMatch(/^\$\d+\.\d\d$/);
    expect(premium).not.toBe('$0.00');
    expect(await tab.$eval('main', (e) => e.textContent)).toContain('Covered units added: 2027-12-30');
    await checkAxe(tab, 'endorse-preview-priced');
    expect(await tab.$eval('main form button[type="submit"]', (e) => e.textContent)).toMatch(/^Open a checkout link for \$\d+\.\d\d$/);
    await submit(tab);
    expect(await tab.$eval('.notice', (e) => e.textContent)).toMatch(
      /^A checkout link for \$\d+\.\d\d is open until \S+: https?:\/\/\S+ — send it to the buyer/,
    );
    const link = await app.container.db('endorsements').where({ purchase_id: purchaseId, payment_method: 'checkout_link' }).first();
    expect(link).toMatchObject({ status: 'awaiting_payment' });
    expect(link.checkout_url).toEqual(expect.any(String));

    expect(await auditOutcomes({ actor: admin.email, target_kind: 'purchase', target_id: String(purchaseId) })).toEqual([
      'cancel_purchase_units succeeded',
      'add_certificate_holder succeeded',
      'endorse_purchase succeeded',
      'endorse_purchase succeeded',
    ]);
  });

  test('opens a checkout link for a trip added to a per-trip item, previewed with its premium, after saying what is missing', async () => {
    const paid = await buyAndPay(agency, [eventSelection(agency, { start: '2027-10-01', end: '2027-10-01' }), tripSelection(agency)]);
    await waitIssued(agency, paid.paymentIntent);
    await tab.goto(`${app.baseUrl}/portal/purchases/${paid.purchaseId}/endorse?mode=test`);
    const tripItem = await tab.$eval('#endorse-trip-item option:nth-child(2)', (o) => (o as HTMLOptionElement).value);
    await fillEndorseForm(tab, 'trip', tripItem, '2027-08-01T09:00');
    const noEnd = await submit(tab);
    expect(noEnd!.status()).toBe(400);
    expect(await tab.$eval('#endorse-trip-end-error', (e) => e.textContent)).toBe('Enter when the trip ends.');
    await checkAxe(tab, 'endorse-form-trip');
    await fillEndorseForm(tab, 'trip', tripItem, '2027-08-01T09:00', '2027-08-03T18:00');
    await submit(tab);
    expect(await tab.$eval('main', (e) => e.textContent)).toContain('Covered units added: 2027-08-01');
    const premium = (await tab.$eval('#premium-difference', (e) => e.textContent))!;
    expect(premium).toMatch(/^\$\d+\.\d\d$/);
    expect(premium).not.toBe('$0.00');
    await submit(tab);
    expect(await tab.$eval('.notice', (e) => e.textContent)).toMatch(
      /^A checkout link for \$\d+\.\d\d is open until \S+: https?:\/\/\S+ — send it to the buyer; the change takes effect once it is paid\.$/,
    );
    const link = await app.container.db('endorsements').where({ purchase_id: paid.purchaseId, payment_method: 'checkout_link' }).first();
    expect(link).toMatchObject({ status: 'awaiting_payment' });
    expect(link.additions).toEqual([
      { itemId: Number(tripItem), units: [expect.objectContaining({ kind: 'trip', timeZone: 'Europe/Lisbon' })] },
    ]);
  });

  test('is usable by keyboard and at a phone width (the width of a laptop at 400 % zoom): no page scrolls sideways', async () => {
    await tab.goto(`${app.baseUrl}/portal/keys?mode=test`);
    await tab.keyboard.press('Tab');
    expect(await tab.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    // The focused element is drawn with a visible outline.
    expect(await tab.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).toBe('solid');
    await tab.keyboard.press('Enter');
    expect(await tab.evaluate(() => document.activeElement?.id)).toBe('main');
    // Every form control of the page is reached by Tab, in order.
    const controls = await tab.$$eval('main input:not([type="hidden"]), main select, main button, main a[href]', (els) => els.length);
    const reached = new Set<string>();
    for (let i = 0; i < controls + 5; i++) {
      await tab.keyboard.press('Tab');
      reached.add(await tab.evaluate(() => document.activeElement!.outerHTML.slice(0, 120)));
    }
    expect(reached.size).toBeGreaterThanOrEqual(controls);
    await tab.setViewport({ width: 320, height: 640 });
    try {
      for (const path of [
        '/portal/keys?mode=test',
        '/portal/webhooks?mode=test',
        '/portal/purchases?mode=test',
        '/portal/audit',
        '/portal/account',
      ]) {
        await tab.goto(`${app.baseUrl}${path}`);
        const overflow = await tab.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect([path, overflow]).toEqual([path, 0]);
      }
      await checkAxe(tab, 'account-phone');
    } finally {
      await tab.setViewport({ width: 800, height: 600 });
    }
  });

  test('signs out: the session is gone and the portal asks to sign in', async () => {
    await tab.goto(`${app.baseUrl}/portal/keys`);
    // Through the provider's sign-out (RP-initiated logout, no question asked) to the signed-out page.
    await tab.click('header button[type="submit"]');
    await tab.waitForFunction((u) => location.href === u, {}, `${app.baseUrl}/portal/signed-out`);
    await checkAxe(tab, 'signed-out');
    await tab.goto(`${app.baseUrl}/portal/keys`);
    expect(tab.url().startsWith(idp.issuer)).toBe(true);
    expect(await tab.$('#password')).not.toBeNull();
  });
});

describe('a viewer', () => {
  test('reads the keys but is refused every change', async () => {
    const context = await browser.createBrowserContext();
    try {
      const tab = await context.newPage();
      await tab.goto(`${app.baseUrl}/portal/keys`);
      await signIn(tab, viewer);
      expect(tab.url()).toBe(`${app.baseUrl}/portal/keys`);
      expect(await tab.$('#key-name')).toBeNull();
      expect(await tab.$('button[aria-label^="Rotate"]')).toBeNull();
      expect(await tab.$eval('main', (e) => e.textContent)).toContain('Your role (viewer) can read keys');
      await checkAxe(tab, 'keys-viewer');
      const accountId = (await app.container.db('root_accounts').where({ slug }).first()).id as number;
      const keysBefore = await app.container.services.apiKeys.list(accountId);
      const activeKey = keysBefore.find((k) => k.status === 'active')!;
      const token = await tab.$eval('input[name="_csrf"]', (e) => e.getAttribute('value')!);
      for (const [url, fields] of [
        ['/portal/keys', { name: 'viewer key', mode: 'test' }],
        [`/portal/keys/${activeKey.id}/rotate`, { grace_hours: '0' }],
        [`/portal/keys/${activeKey.id}/freeze`, {}],
        [`/portal/keys/${activeKey.id}/delete`, { confirm: 'yes' }],
      ] as const) {
        const res = await withCookies(context, url, { ...fields, _csrf: token });
        expect([url, res.status]).toEqual([url, 403]);
        expect(res.text).toContain('Your role (viewer) can only read.');
      }
      const keysAfter = await app.container.services.apiKeys.list(accountId);
      expect(keysAfter.map((k) => [k.id, k.status, k.values.length])).toEqual(keysBefore.map((k) => [k.id, k.status, k.values.length]));
    } finally {
      await context.close();
    }
  });
});

describe('sign-in attacks', () => {
  test('a callback with a tampered state, or an old code replayed, signs nobody in', async () => {
    const context = await browser.createBrowserContext();
    try {
      const tab = await context.newPage();
      let callback = '';
      tab.on('request', (r) => {
        if (r.url().startsWith(`${app.baseUrl}/portal/callback`)) callback = r.url();
      });
      await tab.goto(`${app.baseUrl}/portal/keys`);
      await signIn(tab, admin);
      expect(callback).toContain('code=');
      // Replayed: the code was spent and this browser has no sign-in pending.
      const replay = await tab.goto(callback);
      expect(replay!.status()).toBe(400);
      expect(await tab.$eval('main', (e) => e.textContent)).toContain('This sign-in was not started in this browser, or it has expired.');
      await checkAxe(tab, 'sign-in-failed');
      // A sign-in pending in a new browser, the provider's answer tampered with: refused by the client library.
      const other = await browser.createBrowserContext();
      try {
        const fresh = await other.newPage();
        let nextCallback = '';
        await fresh.setRequestInterception(true);
        fresh.on('request', (r) => {
          if (r.url().startsWith(`${app.baseUrl}/portal/callback`)) {
            nextCallback = r.url();
            void r.abort();
          } else void r.continue();
        });
        await fresh.goto(`${app.baseUrl}/portal/sign-in?next=/portal/account`);
        await fresh.type('#email', admin.email);
        await fresh.type('#password', admin.password);
        await fresh.click('button[type="submit"]');
        await fresh.waitForFunction(() => true);
        await eventually(async () => nextCallback || null, 5_000);
        expect(nextCallback).toContain('state=');
        fresh.removeAllListeners('request');
        await fresh.setRequestInterception(false);
        const tampered = new URL(nextCallback);
        tampered.searchParams.set('state', 'tampered-state');
        const res = await fresh.goto(tampered.href);
        expect(res!.status()).toBe(400);
        expect(await fresh.$eval('main', (e) => e.textContent)).toContain("The identity provider's answer was refused");
        // Not signed in: the portal still sends this browser to sign in.
        const after = await withCookies(other, '/portal/account');
        expect([after.status, after.location]).toEqual([303, `/portal/sign-in?next=${encodeURIComponent('/portal/account')}`]);
      } finally {
        await other.close();
      }
    } finally {
      await context.close();
    }
  });

  test('next never leads outside the portal', () => {
    expect(safeNext('/portal/account')).toBe('/portal/account');
    expect(safeNext('/portal/keys?mode=live')).toBe('/portal/keys?mode=live');
    for (const bad of [
      'https://evil.example/',
      '//evil.example/portal',
      '/portal/../api/v1',
      '/\\evil.example',
      'javascript:alert(1)',
      '/portalx',
      '/portal//evil.example',
    ]) {
      expect([bad, safeNext(bad)]).toEqual([bad, '/portal']);
    }
  });
});

afterAll(() => {
  // The figures the closing note quotes: every page checked, every list of violations empty.
  console.log(`portal axe: ${Object.keys(axeResults).length} pages, ${Object.values(axeResults).flat().length} violations`);
});
