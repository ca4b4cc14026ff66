/**
 * The agency portal's everyday surprises (issue 53), continued from portal-everyday.test.ts: in
 * Chromium (puppeteer-core) against the local OpenID provider, the real API, Temporal worker and
 * PostgreSQL; axe-core finds no violation on any page state.
 *
 * Item 11 (landing page): sign-in without `next` lands on an overview of the mode: the newest
 * purchases, the webhook endpoints whose deliveries fail, and the keys to check (an old value
 * about to stop working, a key never used); a `next` inside the portal is still honoured, and one
 * pointing off-site leads to the overview.
 */
import type { BrowserContext, Page } from 'puppeteer-core';
import { checkAxe, signIn, startPortalStack, type PortalStack } from '../helpers/portal-stack';
import { buyAndPay, eventSelection } from '../helpers/certificates';
import { eventually } from '../helpers/worker';
import { freePort } from '../helpers/ports';

let stack: PortalStack;

beforeAll(async () => {
  stack = await startPortalStack('everyday-more');
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

/** The text of the page's element `selector`, or '' when there is none. */
const textOf = (tab: Page, selector: string) => tab.$eval(selector, (e) => (e as HTMLElement).innerText).catch(() => '');

describe('item 11: a landing page after sign-in', () => {
  let context: BrowserContext;
  let tab: Page;
  const base = () => stack.app.baseUrl;

  beforeEach(async () => {
    context = await stack.browser.createBrowserContext();
    tab = await context.newPage();
  });
  afterEach(() => context.close());

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
    await context.close();

    for (const next of ['https://evil.example/portal', '//evil.example/portal', '/portal/../api/v1/products']) {
      context = await stack.browser.createBrowserContext();
      tab = await context.newPage();
      await tab.goto(`${base()}/portal/sign-in?next=${encodeURIComponent(next)}`);
      await signIn(tab, stack.viewer);
      expect([next, tab.url()]).toEqual([next, `${base()}/portal`]);
      expect(await textOf(tab, 'h1')).toBe('Overview');
      await context.close();
    }
    context = await stack.browser.createBrowserContext();
  });
});
