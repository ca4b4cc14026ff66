/**
 * The agency portal's everyday surprises (issue 53), continued from portal-everyday.test.ts: in
 * Chromium (puppeteer-core) against the local OpenID provider, the real API, Temporal worker and
 * PostgreSQL; axe-core finds no violation on any page state.
 *
 * Item 11 (landing page): sign-in without `next` lands on an overview of the mode: the newest
 * purchases, the webhook endpoints whose deliveries fail, and the keys to check (an old value
 * about to stop working, a key never used); a `next` inside the portal is still honoured, and one
 * pointing off-site leads to the overview.
 * Item 7 (the purchase page tells the story): the named insured, each cancellation with who asked
 * and why, holders added and removed in the timeline, holder summaries counting only certificates
 * in force, a void certificate marked so without its PDF link or QR code; removing a holder from
 * the portal after a page naming it; moving a trip to another window through a previewed
 * endorsement.
 * Item 5 (deliveries belong to their endpoint): each endpoint's page lists its newest deliveries
 * (event, status, attempts, last response code, next retry); "send a test event" sends a new
 * `webhook_endpoint.test` event naming that endpoint, signed with its secret, to it alone (not to
 * an endpoint taking every event), listed among its deliveries and left out of the events list;
 * an event's page sends it again to one endpoint alone.
 * Item 8 (an audit log you can search): 50 entries a page with newer and older links, filters by
 * who, what and when (a wrong day answered in the error summary), and a CSV export of what the
 * filters match, a spreadsheet formula in it made text; targets named (a key by its name), and
 * refused attempts recorded (a viewer's change, a URL naming what the account does not have).
 */
import http from 'node:http';
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'puppeteer-core';
import { checkAxe, portalSuite, portalTab, signIn, submit, type PortalStack } from '../helpers/portal-stack';
import { buyAndPay, eventSelection, tripSelection, waitIssued } from '../helpers/certificates';
import { call } from '../helpers/fixtures';
import { eventually } from '../helpers/worker';
import { freePort } from '../helpers/ports';

let stack: PortalStack;

portalSuite('everyday-more', (s) => (stack = s));

/** The app's address. */
const base = () => stack.app.baseUrl;

/** The agency's API (its test key): status and body. */
const api = (path: string, init: { method?: string; body?: unknown } = {}) =>
  call(stack.app.baseUrl, `/api/v1${path}`, { key: stack.agency.key, ...init });

/** The text of the page's element `selector`, or '' when there is none. */
const textOf = (tab: Page, selector: string) => tab.$eval(selector, (e) => (e as HTMLElement).innerText).catch(() => '');

describe('item 11: a landing page after sign-in', () => {
  let tab: Page;
  portalTab({ stack: () => stack, each: true }, (t) => (tab = t));

  test('sign-in without next lands on the overview: recent purchases, failing endpoints, keys to check', async () => {
    const { apiKeys, webhookEndpoints } = stack.app.container.portal!;
    const view = { rootAccountId: stack.accountId, mode: 'test' as const, agentId: null };
    // A key never used, and one rotated with a day's grace (its old value stops working in 24 h).
    await apiKeys.create({ rootAccountId: stack.accountId, name: 'Idle key', mode: 'test' });
    const rotated = await apiKeys.create({ rootAccountId: stack.accountId, name: 'Rotated key', mode: 'test' });
    await apiKeys.rotate(rotated.id, 24);
    // An endpoint nothing listens on (connections refused), and a purchase whose events go to it.
    const endpoint = await webhookEndpoints.create(view, { url: `http://127.0.0.1:${await freePort()}/hooks`, enabled_events: ['*'] });
    const paid = await buyAndPay(stack.agency, eventSelection(stack.agency, { start: '2027-10-01', end: '2027-10-02' }, 'Morgan Overview'));

    await tab.goto(`${base()}/portal/sign-in`);
    await signIn(tab, stack.admin);
    expect(tab.url()).toBe(`${base()}/portal`);
    expect(await textOf(tab, 'h1')).toBe('Overview');
    expect(await tab.$eval('nav[aria-label="Portal"] a[aria-current="page"]', (e) => e.textContent)).toBe('Overview');

    // The delivery's first attempt is refused within seconds; the page shows it once it is recorded.
    const failing = await eventually(async () => {
      await tab.reload();
      const text = await textOf(tab, '[aria-label="Failing test webhook endpoints"]');
      return text.includes(endpoint.url) ? text : null;
    }, 30_000);
    expect(failing).toMatch(/enabled/);
    expect(failing).toMatch(/purchase\.|certificate/);
    expect(failing).not.toMatch(/HTTP 2\d\d/);

    const purchases = await textOf(tab, '[aria-label="Recent test purchases"]');
    expect(purchases).toContain(`#${paid.purchaseId}`);
    expect(await tab.$(`a[href="/portal/purchases/${paid.purchaseId}?mode=test"]`)).not.toBeNull();

    const keys = await textOf(tab, '[aria-label="test keys to check"]');
    expect(keys).toMatch(/Idle key\s+Never used/);
    expect(keys).toMatch(/Rotated key\s+Its old value stops working at \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    // The agency's own key signed the purchase's calls: used, so not listed.
    expect(keys.split('\n').filter((l) => /Never used/.test(l))).toHaveLength(1);
    expect(await checkAxe(tab, 'overview')).toEqual([]);

    // Live has none of these: each section says so.
    await tab.goto(`${base()}/portal?mode=live`);
    expect(await textOf(tab, 'main')).toContain('No paid live purchases yet.');
    expect(await textOf(tab, 'main')).toContain('No live endpoint is failing');
    expect(await checkAxe(tab, 'overview-live-empty')).toEqual([]);
  }, 60_000);

  test('a next inside the portal is still honoured; one pointing off-site leads to the overview', async () => {
    await tab.goto(`${base()}/portal/purchases?mode=test`);
    await signIn(tab, stack.viewer);
    expect(tab.url()).toBe(`${base()}/portal/purchases?mode=test`);

    for (const next of ['https://evil.example/portal', '//evil.example/portal', '/portal/../api/v1/products']) {
      const context = await stack.browser.createBrowserContext();
      try {
        const fresh = await context.newPage();
        await fresh.goto(`${base()}/portal/sign-in?next=${encodeURIComponent(next)}`);
        await signIn(fresh, stack.viewer);
        expect([next, fresh.url()]).toEqual([next, `${base()}/portal`]);
        expect(await textOf(fresh, 'h1')).toBe('Overview');
      } finally {
        await context.close();
      }
    }
  });
});

describe('item 7: the purchase page tells the story', () => {
  let tab: Page;
  portalTab({ stack: () => stack }, (t) => (tab = t));

  test('named insured, a cancellation with who asked and why, holders added and removed, void certificates marked; a holder removed in the portal', async () => {
    const paid = await buyAndPay(stack.agency, eventSelection(stack.agency, { start: '2027-11-05', end: '2027-11-06' }, 'Casey Story'));
    const id = paid.purchaseId;
    await waitIssued(stack.agency, paid.paymentIntent);
    const added = await api(`/purchases/${id}/certificate_holders`, {
      method: 'POST',
      body: {
        name: 'Lakeside Caterers',
        address: { line1: '5 Shore Dr', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
      },
    });
    expect(added.status).toBe(201);
    const holders = async () =>
      (await api(`/purchases/${id}/certificate_holders`)).body.data as Array<{ name: string; certificates: Array<{ status: string }> }>;
    await eventually(async () => (await holders()).every((h) => h.certificates.every((c) => c.status === 'issued')), 60_000);
    // The buyer calls off the first day.
    const firstDay = (await api(`/purchases/${id}`)).body.data.items[0].covered_units[0].id as number;
    const cancelled = await api(`/purchases/${id}/cancel`, {
      method: 'POST',
      body: { covered_unit_ids: [firstDay], requested_by: 'buyer', reason: 'Rain forecast' },
    });
    expect(cancelled.status).toBe(200);
    await eventually(async () => (await api(`/purchases/${id}`)).body.data.cancellations[0]?.status === 'completed', 60_000);
    await eventually(async () => (await holders()).every((h) => h.certificates.filter((c) => c.status === 'voided').length === 1), 60_000);

    await tab.goto(`${base()}/portal/purchases/${id}?mode=test`);
    await signIn(tab, stack.admin);
    expect(tab.url()).toBe(`${base()}/portal/purchases/${id}?mode=test`);
    expect(await textOf(tab, 'main dl')).toMatch(/Named insured\s+Casey Story/);
    const buyer = (await api(`/purchases/${id}`)).body.data.buyer_email as string;
    const searched = await stack.app.container.portal!.purchaseSearch.searchAccount(
      { rootAccountId: stack.accountId, mode: 'test' },
      { search_text: buyer, page_size: 1, page_index: 0 },
    );
    const escaped = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    expect(await textOf(tab, 'main dl')).toMatch(new RegExp(`Buyer\\s+${escaped(searched.purchases[0]!.buyer.name)}\\s+${escaped(buyer)}`));
    // Venue and event type, as answered.
    const answered = await tab.$eval('h2 + dl', (dl) => (dl as HTMLElement).innerText).catch(() => '');
    expect(await tab.$$eval('h2', (hs) => hs.map((h) => h.textContent))).toContain('What the buyer answered: Special Event Liability');
    expect(answered).toMatch(/Venue name\s+Grand Hall/);
    expect(answered).toMatch(/Event type\s+wedding/);
    const cancellations = await textOf(tab, '[aria-label="Cancellations"]');
    expect(cancellations).toMatch(/buyer\s+Rain forecast\s+1\s/);
    const timeline = await textOf(tab, 'main ol');
    expect(timeline).toContain('certificate holder added: Lakeside Caterers');
    expect(timeline).toMatch(/cancellation accepted \(by buyer\): “Rain forecast”/);
    // Two days, one cancelled: each holder has one certificate in force.
    const summaries = await tab.$$eval('main h2 + ul li', (lis) =>
      lis.map((li) => (li as HTMLElement).innerText.replace(/\s+/g, ' ').trim()),
    );
    expect(summaries).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Grand Hall LLC: active, 1 certificate in force/),
        expect.stringMatching(/^Lakeside Caterers: active, 1 certificate in force/),
      ]),
    );
    // The void certificates: marked, no PDF link, no QR code; the others keep theirs.
    const rows = await tab.$$eval('[aria-label="Certificates"] tbody tr', (trs) =>
      trs.map((tr) => ({
        text: (tr as HTMLElement).innerText,
        pdf: tr.querySelector('a[aria-label^="PDF of certificate"]') !== null,
        qr: tr.querySelector('img') !== null,
      })),
    );
    const voided = rows.filter((r) => /\bVOID\b/.test(r.text));
    expect(voided).toHaveLength(2);
    expect(voided.every((r) => !r.pdf && !r.qr && /Void: not valid/.test(r.text))).toBe(true);
    const valid = rows.filter((r) => !/\bVOID\b/.test(r.text));
    expect(valid).toHaveLength(2);
    expect(valid.every((r) => r.pdf && r.qr)).toBe(true);
    expect(await checkAxe(tab, 'purchase-story')).toEqual([]);

    // Removing a holder: asked first, naming it; then its certificates are void and the timeline says so.
    await Promise.all([tab.waitForNavigation(), tab.click('a[aria-label="Remove Lakeside Caterers"]')]);
    expect(await textOf(tab, 'h1')).toBe(`Remove Lakeside Caterers from purchase #${id}?`);
    expect(await textOf(tab, 'main')).toContain('voids its 1 certificate in force');
    expect(await checkAxe(tab, 'remove-holder')).toEqual([]);
    const answer = await submit(tab, 'main form');
    expect([answer.status, answer.location]).toEqual([303, `/portal/purchases/${id}?mode=test`]);
    expect(await textOf(tab, '.notice')).toBe('Lakeside Caterers is removed: its certificates on this purchase are void.');
    expect(await textOf(tab, 'main ol')).toContain('certificate holder removed: Lakeside Caterers');
    const after = await tab.$$eval('main h2 + ul li', (lis) => lis.map((li) => (li as HTMLElement).innerText.replace(/\s+/g, ' ').trim()));
    expect(after).toEqual(expect.arrayContaining([expect.stringMatching(/^Lakeside Caterers: removed, 0 certificates in force$/)]));
    expect(await tab.$('a[aria-label="Remove Lakeside Caterers"]')).toBeNull();
    expect((await holders()).find((h) => h.name === 'Lakeside Caterers')!.certificates.every((c) => c.status === 'voided')).toBe(true);
    expect(await checkAxe(tab, 'purchase-holder-removed')).toEqual([]);
  }, 180_000);
});

describe('item 7: moving a trip window', () => {
  test('a trip not started moves to another window after its preview; the purchase page shows the new window', async () => {
    const paid = await buyAndPay(stack.agency, tripSelection(stack.agency, 'Robin Trip'));
    await waitIssued(stack.agency, paid.paymentIntent);
    const context = await stack.browser.createBrowserContext();
    try {
      const tab = await context.newPage();
      await tab.goto(`${stack.app.baseUrl}/portal/purchases/${paid.purchaseId}/endorse?mode=test`);
      await signIn(tab, stack.admin);
      const trips = await tab.$$eval('#endorse-move-trip option', (os) => os.map((o) => [(o as HTMLOptionElement).value, o.textContent]));
      expect(trips).toHaveLength(3); // "No trip moves" and the two trips
      const second = trips[2]![0]!;
      await tab.select('#endorse-move-trip', second);
      await tab.$eval('#endorse-move-trip-start', (e) => ((e as HTMLInputElement).value = '2027-07-08T08:30'));
      const [noEnd] = await Promise.all([tab.waitForNavigation(), tab.click('main form button[type="submit"]')]);
      expect(noEnd!.status()).toBe(400);
      expect(await tab.$eval('#error-summary a', (a) => [a.getAttribute('href'), a.textContent])).toEqual([
        '#endorse-move-trip-end',
        'Enter when the trip ends.',
      ]);
      expect(await checkAxe(tab, 'endorse-move-trip-error')).toEqual([]);
      await tab.select('#endorse-move-trip', second);
      await tab.$eval('#endorse-move-trip-start', (e) => ((e as HTMLInputElement).value = '2027-07-08T08:30'));
      await tab.$eval('#endorse-move-trip-end', (e) => ((e as HTMLInputElement).value = '2027-07-10T20:00'));
      await Promise.all([tab.waitForNavigation(), tab.click('main form button[type="submit"]')]);
      expect(await textOf(tab, 'main')).toContain(`Covered unit ${second} moves to 2027-07-08 08:30 – 2027-07-10 20:00`);
      expect(await tab.$eval('#premium-difference', (e) => e.textContent)).toBe('$0.00');
      expect(await checkAxe(tab, 'endorse-move-trip-preview')).toEqual([]);
      await Promise.all([tab.waitForNavigation(), tab.click('main form button[type="submit"]')]);
      expect(await textOf(tab, '.notice')).toMatch(/^The change is applied: \d+ certificates? (is|are) reissued as a new version\.$/);
      const units = await eventually(async () => {
        await tab.goto(`${stack.app.baseUrl}/portal/purchases/${paid.purchaseId}?mode=test`);
        const text = await textOf(tab, '[aria-label^="Covered units of"]');
        return text.includes('2027-07-08') ? text : null;
      });
      expect(units).not.toContain('2027-07-01');
    } finally {
      await context.close();
    }
  }, 120_000);
});

describe('item 5: deliveries belong to their endpoint', () => {
  let tab: Page;
  let receiver: http.Server;
  /** Events received per path, with their raw body and Signature header: /down answers 500, the others 200. */
  type Received = { id: string; type: string; data: { object: Record<string, unknown> }; body: string; signature: string };
  const received = new Map<string, Received[]>();
  const got = (path: string) => received.get(path) ?? [];

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const event = JSON.parse(body) as Received;
        received.set(req.url!, [...got(req.url!), { ...event, body, signature: String(req.headers.signature) }]);
        res.writeHead(req.url === '/down' ? 500 : 200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise((resolve) => receiver.close(resolve)));
  portalTab({ stack: () => stack }, (t) => (tab = t));

  test("an endpoint's page lists its deliveries; a test event and a resend reach one endpoint alone", async () => {
    const at = (path: string) => `http://127.0.0.1:${(receiver.address() as AddressInfo).port}${path}`;
    const { webhookEndpoints } = stack.app.container.portal!;
    const view = { rootAccountId: stack.accountId, mode: 'test' as const, agentId: null };
    const paidOnly = { enabled_events: ['purchase.paid'] as ['purchase.paid'] };
    const down = await webhookEndpoints.create(view, { url: at('/down'), ...paidOnly });
    const up = await webhookEndpoints.create(view, { url: at('/up'), ...paidOnly });
    const other = await webhookEndpoints.create(view, { url: at('/other'), ...paidOnly });
    await webhookEndpoints.create(view, { url: at('/all'), enabled_events: ['*'] }); // takes every event
    await buyAndPay(stack.agency, eventSelection(stack.agency, { start: '2027-12-01', end: '2027-12-01' }, 'Drew Deliveries'));
    await eventually(
      async () => got('/down').length >= 1 && got('/up').length === 1 && got('/other').length === 1 && got('/all').length >= 2,
      30_000,
    );
    const paidEvent = got('/up')[0]!;
    expect(paidEvent.type).toBe('purchase.paid');

    await tab.goto(`${base()}/portal/webhooks?mode=test`);
    await signIn(tab, stack.admin);
    await Promise.all([tab.waitForNavigation(), tab.click(`a[aria-label="Deliveries to ${down.url}"]`)]);
    expect(tab.url()).toBe(`${base()}/portal/webhooks/${down.id}?mode=test`);
    /** The deliveries table's rows as their cells' text. */
    const rows = () =>
      tab.$$eval('[aria-label^="Deliveries to"] tbody tr', (trs) =>
        trs.map((tr) => [...tr.children].map((c) => (c as HTMLElement).innerText.trim())),
      );
    // Event, status, attempts, last response, last attempt, next retry (the first retry waits a minute).
    const failing = (await eventually(async () => {
      await tab.reload();
      const r = await rows();
      return r.length === 1 && r[0]![3] === 'HTTP 500' ? r[0]! : null;
    }))!;
    expect(failing.slice(0, 4)).toEqual(['purchase.paid', 'pending', '1', 'HTTP 500']);
    expect(failing[5]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    expect(Date.parse(failing[5]!.replace(' UTC', ':00Z'))).toBeGreaterThan(Date.parse(failing[4]!.replace(' UTC', ':00Z')));
    expect(await tab.$('a[href="/portal/webhooks/' + down.id + '?mode=test"]')).not.toBeNull(); // the refresh link
    expect(await checkAxe(tab, 'endpoint-deliveries')).toEqual([]);

    await tab.goto(`${base()}/portal/webhooks/${up.id}?mode=test`);
    expect((await rows())[0]).toEqual(['purchase.paid', 'succeeded', '1', 'HTTP 200', expect.any(String), '—']);
    // A test event: a webhook_endpoint.test event naming this endpoint, signed with its secret, to it
    // alone (it takes only purchase.paid; the endpoint taking every event gets nothing).
    const allBefore = got('/all').length;
    const answer = await submit(tab, `form[action="/portal/webhooks/${up.id}/test?mode=test"]`);
    expect([answer.status, answer.location]).toEqual([303, `/portal/webhooks/${up.id}?mode=test`]);
    const notice = await textOf(tab, '.notice');
    expect(notice).toMatch(/^Test event webhook_endpoint\.test \(evt_[0-9a-f]{32}\) is being sent to this endpoint alone\.$/);
    await eventually(async () => got('/up').length === 2, 30_000);
    const test = got('/up')[1]!;
    expect([test.type, test.id]).toEqual(['webhook_endpoint.test', notice.match(/evt_[0-9a-f]{32}/)![0]]);
    expect(test.data.object).toEqual({ object: 'webhook_endpoint_test', endpoint_id: up.id, url: up.url, requested_via: 'portal' });
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(test.signature)!;
    expect(v1).toBe(createHmac('sha256', up.secret).update(`${t}.${test.body}`).digest('hex'));
    // Listed among the endpoint's deliveries, newest first, once delivered.
    expect(
      await eventually(async () => {
        await tab.reload();
        const [first] = await rows();
        return first?.[1] === 'succeeded' ? first : null;
      }),
    ).toEqual(['webhook_endpoint.test', 'succeeded', '1', 'HTTP 200', expect.any(String), '—']);
    expect(await checkAxe(tab, 'endpoint-test-event-sent')).toEqual([]);
    // Nothing else received it: not the endpoint taking every event, not the others.
    expect(got('/other')).toHaveLength(1);
    expect(got('/all')).toHaveLength(allBefore);
    for (const path of ['/down', '/other', '/all']) expect(got(path).map((e) => e.type)).not.toContain('webhook_endpoint.test');
    // Not a business event: the events list (API and portal) leaves it out; it is read by its id.
    const listed = await api('/events?pageSize=100');
    expect((listed.body.data as Array<{ id: string }>).map((e) => e.id)).not.toContain(test.id);
    const read = await api(`/events/${test.id}`);
    expect(read.status).toBe(200);
    expect((read.body.data as { deliveries: Array<{ endpoint_id: number }> }).deliveries.map((d) => d.endpoint_id)).toEqual([up.id]);

    // The event's page: sent again to one endpoint only.
    await tab.goto(`${base()}/portal/events/${paidEvent.id}?mode=test`);
    expect(await checkAxe(tab, 'event-resend-one')).toEqual([]);
    const again = await submit(tab, `form:has(button[aria-label="Send again to ${other.url} only"])`);
    expect(again.status).toBe(303);
    expect(await textOf(tab, '.notice')).toBe('The event is being sent again to 1 endpoint.');
    await eventually(async () => got('/other').length === 2, 30_000);
    expect(got('/up')).toHaveLength(2);

    // The deliveries refresh in place: a resend made elsewhere shows up without a reload.
    await tab.goto(`${base()}/portal/webhooks/${other.id}?mode=test`);
    // The page refreshes only while it is visible (a hidden tab waits): this tab in front.
    await tab.bringToFront();
    await tab.waitForFunction(() => document.querySelector('[aria-label^="Deliveries to"] tbody td:nth-child(3)')?.textContent === '2');
    await tab.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    await stack.app.container.portal!.events.resend(view, paidEvent.id, { endpointId: other.id });
    await eventually(async () => got('/other').length === 3, 30_000);
    // The page refreshes every 5 s; a loaded CI machine once needed more than four refreshes (20 s).
    await tab.waitForFunction(() => document.querySelector('[aria-label^="Deliveries to"] tbody td:nth-child(3)')?.textContent === '3', {
      timeout: 45_000,
    });
    expect(await tab.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    expect(await textOf(tab, '#endpoint-deliveries-status')).toMatch(/^Deliveries updated at \d\d:\d\d UTC\.$/);
    expect(await checkAxe(tab, 'endpoint-deliveries-refreshed')).toEqual([]);
  }, 120_000);
});

describe('item 8: an audit log you can search', () => {
  let context: BrowserContext;
  let tab: Page;
  const today = new Date().toISOString().slice(0, 10);
  const tomorrow = new Date(Date.now() + 24 * 3600_000).toISOString().slice(0, 10);

  beforeAll(async () => {
    const { audit } = stack.app.container.portal!;
    const entry = (actor: string, action: string, target: number, reason: string | null = null) =>
      audit.record(
        {
          actorKind: 'portal',
          actor,
          action,
          targetKind: 'api_key',
          targetId: String(target),
          rootAccountId: stack.accountId,
          reason,
          clientAddress: '127.0.0.1',
        },
        async () => ({}),
        { details: () => ({}), isRefusal: () => false },
      );
    for (let i = 1; i <= 55; i++) await entry('pager@item8.example', 'rotate_api_key', 10_000 + i);
    for (let i = 1; i <= 3; i++)
      await entry('other.person@item8.example', 'freeze_api_key', 20_100 + i, '=HYPERLINK("http://evil.example")');
  });
  portalTab({ stack: () => stack, path: '/portal/audit' }, (t, c) => ([tab, context] = [t, c]));

  /** The audit table's rows: who, what, target. */
  const rows = () =>
    tab.$$eval('[aria-label="Audit log"] tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => (td as HTMLElement).innerText.trim())).map((c) => [c[1], c[3], c[4]]),
    );

  test('50 a page, newest first, with links to older and newer pages that keep the filters', async () => {
    await tab.goto(`${base()}/portal/audit?who=pager%40item8`);
    const first = await rows();
    expect(first).toHaveLength(50);
    expect(first[0]).toEqual(['pager@item8.example', 'rotate api key', 'api key 10055']);
    expect(first[49]![2]).toBe('api key 10006');
    expect(await textOf(tab, 'caption')).toBe('Changes 1 to 50 to this account matching the filters, newest first.');
    expect(await tab.$('a[href*="page=1"]')).toBeNull();
    await Promise.all([tab.waitForNavigation(), tab.click('a[href="/portal/audit?who=pager%40item8&page=2"]')]);
    const second = await rows();
    expect(second.map((r) => r[2])).toEqual(['api key 10005', 'api key 10004', 'api key 10003', 'api key 10002', 'api key 10001']);
    expect(await textOf(tab, 'caption')).toBe('Changes 51 to 55 to this account matching the filters, newest first.');
    expect(await tab.$('a[href*="page=3"]')).toBeNull();
    expect(await tab.$('a[href="/portal/audit?who=pager%40item8"]')).not.toBeNull(); // newer
    expect(await checkAxe(tab, 'audit-page-2')).toEqual([]);
  });

  test('filters by who, what and when; a wrong day is answered in the error summary', async () => {
    await tab.goto(`${base()}/portal/audit`);
    await tab.type('#audit-who', 'Other.Person');
    await tab.type('#audit-what', 'freeze');
    await tab.type('#audit-from', today);
    await tab.type('#audit-to', today);
    await Promise.all([tab.waitForNavigation(), tab.click('form[role="search"] button[type="submit"]')]);
    const found = await rows();
    expect(found).toEqual([
      ['other.person@item8.example', expect.stringMatching(/^freeze api key/), 'api key 20103'],
      ['other.person@item8.example', expect.stringMatching(/^freeze api key/), 'api key 20102'],
      ['other.person@item8.example', expect.stringMatching(/^freeze api key/), 'api key 20101'],
    ]);
    expect(await tab.$eval('#audit-who', (e) => (e as HTMLInputElement).value)).toBe('Other.Person');
    expect(await checkAxe(tab, 'audit-filtered')).toEqual([]);

    await tab.goto(`${base()}/portal/audit?who=other.person&from=${tomorrow}`);
    expect(await rows()).toEqual([]);
    expect(await textOf(tab, 'main')).toContain('No change to this account matches the filters.');

    const wrong = await tab.goto(`${base()}/portal/audit?from=2026-02-30`);
    expect(wrong!.status()).toBe(400);
    await tab.waitForFunction(() => document.activeElement?.id === 'error-summary');
    expect(await tab.$eval('#error-summary a', (a) => [a.getAttribute('href'), a.textContent])).toEqual([
      '#audit-from',
      'Enter the first day as YYYY-MM-DD, e.g. 2026-11-28.',
    ]);
    expect(await checkAxe(tab, 'audit-filter-error')).toEqual([]);
  });

  test("targets by name; a viewer's change and an unknown purchase's URL are recorded as refused", async () => {
    const { apiKeys, audit } = stack.app.container.portal!;
    const key = await apiKeys.create({ rootAccountId: stack.accountId, name: 'Named target key', mode: 'test' });
    await audit.record(
      {
        actorKind: 'portal',
        actor: 'namer@item8.example',
        action: 'freeze_api_key',
        targetKind: 'api_key',
        targetId: String(key.id),
        rootAccountId: stack.accountId,
        reason: null,
        clientAddress: '127.0.0.1',
      },
      async () => ({}),
      { details: () => ({}), isRefusal: () => false },
    );
    await tab.goto(`${base()}/portal/audit?who=namer%40item8`);
    expect((await rows())[0]).toEqual(['namer@item8.example', 'freeze api key', `api key ${key.id} “Named target key”`]);

    const viewerContext = await stack.browser.createBrowserContext();
    try {
      const viewerTab = await viewerContext.newPage();
      await viewerTab.goto(`${base()}/portal/keys/${key.id}/delete`);
      await signIn(viewerTab, stack.viewer);
      expect(await textOf(viewerTab, 'h1')).toBe('Not allowed');
      const missing = await viewerTab.goto(`${base()}/portal/purchases/999999?mode=test`);
      expect(missing!.status()).toBe(404);
    } finally {
      await viewerContext.close();
    }
    const refused = (await eventually(async () => {
      await tab.goto(`${base()}/portal/audit?who=${encodeURIComponent(stack.viewer.email)}&what=refused`);
      const r = await tab.$$eval('[aria-label="Audit log"] tbody tr', (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => (td as HTMLElement).innerText.trim())),
      );
      return r.length === 2 ? r : null;
    }))!;
    // Newest first: the unknown purchase, then the viewer's change.
    expect(refused.map((r) => [r[1], r[3], r[4], r[5]!.split('\n')[0]])).toEqual([
      [stack.viewer.email, 'refused unknown target', 'portal page GET /portal/purchases/999999', 'refused'],
      [stack.viewer.email, 'refused change', `portal page GET /portal/keys/${key.id}/delete`, 'refused'],
    ]);
    expect(refused[1]![5]).toContain('the viewer role can only read');
    expect(await checkAxe(tab, 'audit-refused')).toEqual([]);
  });

  test('the CSV export holds what the filters match, a formula made text', async () => {
    await tab.goto(`${base()}/portal/audit?who=other.person&what=freeze`);
    const href = await tab.$eval('a[download]', (a) => a.getAttribute('href'));
    expect(href).toBe('/portal/audit.csv?who=other.person&what=freeze');
    const cookie = (await context.cookies())
      .filter((c) => c.name.startsWith('coi_portal_session'))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
    const res = await fetch(`${base()}${href}`, { headers: { cookie }, redirect: 'manual' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="audit-.+-\d{4}-\d\d-\d\d\.csv"$/);
    const lines = (await res.text()).split('\r\n').filter(Boolean);
    expect(lines[0]).toBe('started_at,actor,through,action,target_kind,target_id,target,reason,outcome,outcome_detail,client_address');
    expect(lines.slice(1)).toHaveLength(3);
    expect(lines[1]).toMatch(
      /^"\d{4}-\d\d-\d\dT[\d:.]+Z","other\.person@item8\.example","portal","freeze_api_key","api_key","20103","api key 20103","'=HYPERLINK\(""http:\/\/evil\.example""\)","succeeded","","127\.0\.0\.1"$/,
    );
  });
});
