/**
 * The agency portal's everyday surprises (issue 53), in Chromium (puppeteer-core) against the
 * local OpenID provider, the real API, Temporal worker and PostgreSQL; axe-core finds no
 * violation on any page state.
 *
 * Item 1 (post/redirect/get): a change answers with a 303 to a page showing its result; a reload
 * of it changes nothing; the same form sent again (same CSRF token, same action) changes nothing;
 * a one-time secret is shown once after the redirect, never in a URL.
 * Item 2 (error summary): a failed form starts with an alert region headed "There is a problem",
 * a link per mistake to its field, and takes focus; each field keeps its inline error.
 * Item 3 (cancel): the cancel form starts with nothing ticked, or only the unit chosen from its
 * row on the purchase page; the preview says which units are cancelled and which stay covered.
 * Item 10 (webhook URLs): a URL with spaces or quotes is refused with a clear message, in the
 * portal (next to the field and in the summary) and in the API (VALIDATION_ERROR on `url`).
 * Item 9 (small screens): at 320 px wide, the event page, the delete page of a key with a long
 * name, the refund preview and the public verification page do not scroll sideways, and no
 * word of their text is broken across two lines.
 * Item 6 (keys you can judge): each key shows when it was last used; rotating, freezing and
 * deleting a live key ask first, naming the key and the mode; live pages say they are live.
 * Item 4 (sign-out): signing out ends the portal session and, by RP-initiated logout, the
 * provider's, landing on a signed-out page without a question on the way; and even when the
 * provider's session outlives it (the tab closed on the provider), the next sign-in asks for the
 * password.
 */
import type { BrowserContext, Page } from 'puppeteer-core';
import { checkAxe, formFields, portalSuite, portalTab, signIn, submit, withCookies, type PortalStack } from '../helpers/portal-stack';
import { buyAndPay, eventSelection, waitIssued } from '../helpers/certificates';
import { eventually } from '../helpers/worker';

let stack: PortalStack;
let fourDays: Promise<number> | undefined;

/** A paid purchase of four event days, its certificates issued (bought once, on first use): its id. */
function fourDayPurchase(): Promise<number> {
  fourDays ??= (async () => {
    const paid = await buyAndPay(stack.agency, eventSelection(stack.agency, { start: '2027-09-10', end: '2027-09-13' }));
    await waitIssued(stack.agency, paid.paymentIntent);
    return paid.purchaseId;
  })();
  return fourDays;
}

portalSuite('everyday', (s) => (stack = s));

/** The app's address. */
const base = () => stack.app.baseUrl;

/** The account's keys that are not deleted, by name. */
async function keysNamed(name: string) {
  return (await stack.app.container.services.apiKeys.list(stack.accountId)).filter((k) => k.name === name && k.status !== 'deleted');
}

/** The session rows' data, as stored: a one-time secret must not stay in them once shown. */
async function sessionData(): Promise<string> {
  const rows = await stack.app.container.db('portal_sessions').select('data');
  return JSON.stringify(rows.map((r) => r.data as unknown));
}

describe('item 1: every change is a post, a redirect and a get', () => {
  let context: BrowserContext;
  let tab: Page;
  portalTab({ stack: () => stack, path: '/portal/keys?mode=test' }, (t, c) => ([tab, context] = [t, c]));

  test('a created key: 303 to its value shown once; a reload and the same form sent again create nothing', async () => {
    await tab.goto(`${base()}/portal/keys?mode=test`);
    await tab.type('#key-name', 'PRG key');
    const sent = await formFields(tab, 'form[action="/portal/keys"]');
    const answer = await submit(tab, 'form[action="/portal/keys"]');
    expect(answer.status).toBe(303);
    expect(answer.location).toMatch(/^\/portal\/keys\/\d+\/issued$/);
    expect(tab.url()).toBe(`${base()}${answer.location}`);
    const value = (await tab.$eval('#key-value', (e) => e.textContent))!.trim();
    expect(value).toMatch(/^ik_test_/);
    expect(tab.url()).not.toContain(value);
    expect(await checkAxe(tab, 'prg-key-created')).toEqual([]);
    // Shown: gone from the session store.
    expect(await sessionData()).not.toContain(value);
    expect(await keysNamed('PRG key')).toHaveLength(1);

    // A reload shows the result without the value and creates nothing.
    const reloaded = await tab.reload();
    expect(reloaded!.status()).toBe(200);
    expect(await tab.$eval('h1', (e) => e.textContent)).toBe('Key value not shown again');
    expect(await tab.$('#key-value')).toBeNull();
    expect(await tab.content()).not.toContain(value);
    expect(await checkAxe(tab, 'prg-key-not-shown-again')).toEqual([]);
    expect(await keysNamed('PRG key')).toHaveLength(1);

    // The same form again (its CSRF token, its action): led where the first went, nothing created.
    const again = await withCookies(base(), context, '/portal/keys', sent);
    expect([again.status, again.location]).toEqual([303, answer.location]);
    expect(await keysNamed('PRG key')).toHaveLength(1);
    await tab.goto(`${base()}${again.location}`);
    expect(await tab.$eval('.notice', (e) => e.textContent)).toBe('This form was already sent, so nothing was changed again.');
    expect(await tab.content()).not.toContain(value);
  });

  test('the same form sent twice at once (a double click) creates one key, and its value is shown once', async () => {
    await tab.goto(`${base()}/portal/keys?mode=test`);
    await tab.type('#key-name', 'Double click key');
    const sent = await formFields(tab, 'form[action="/portal/keys"]');
    const answers = await Promise.all([1, 2].map(() => withCookies(base(), context, '/portal/keys', sent)));
    expect(answers.map((a) => a.status)).toEqual([303, 303]);
    expect(answers[0]!.location).toBe(answers[1]!.location);
    expect(await keysNamed('Double click key')).toHaveLength(1);
    await tab.goto(`${base()}${answers[0]!.location}`);
    expect((await tab.$eval('#key-value', (e) => e.textContent))!.trim()).toMatch(/^ik_test_/);
  });

  test('a rotation: 303 to the new value shown once; a reload and the same form sent again rotate nothing', async () => {
    await tab.goto(`${base()}/portal/keys?mode=test`);
    const form = 'form:has(button[aria-label="Rotate PRG key"])';
    const sent = await formFields(tab, form);
    const rotateAction = (await tab.$eval(form, (f) => f.getAttribute('action')))!;
    const answer = await submit(tab, form);
    expect(answer.status).toBe(303);
    expect(answer.location).toMatch(/^\/portal\/keys\/\d+\/issued$/);
    const value = (await tab.$eval('#key-value', (e) => e.textContent))!.trim();
    expect(await tab.$eval('h1', (e) => e.textContent)).toBe('Key rotated');
    const valuesAfter = async () => (await keysNamed('PRG key'))[0]!.values.filter((v) => v.state !== 'expired').length;
    const once = await valuesAfter();
    await tab.reload();
    expect(await tab.$('#key-value')).toBeNull();
    const again = await withCookies(base(), context, rotateAction, sent);
    expect([again.status, again.location]).toEqual([303, answer.location]);
    expect(await valuesAfter()).toBe(once);
    // The value shown is the key's current one: it works on the API.
    expect((await fetch(`${base()}/api/v1/account`, { headers: { 'x-api-key': value } })).status).toBe(200);
  });

  test('an endpoint added: 303 to its signing secret shown once; a reload and the same form sent again add nothing', async () => {
    await tab.goto(`${base()}/portal/webhooks?mode=test`);
    await tab.type('#endpoint-url', 'http://127.0.0.1:9/prg-hook');
    // An event this suite never causes: no delivery to the closed port.
    await tab.click('#event-all');
    await tab.click('#event-subscription\\.renewed');
    const action = '/portal/webhooks?mode=test';
    const sent = await formFields(tab, `form[action="${action}"]`);
    const answer = await submit(tab, `form[action="${action}"]`);
    expect(answer.status).toBe(303);
    expect(answer.location).toMatch(/^\/portal\/webhooks\/\d+\/created\?mode=test$/);
    const secret = (await tab.$eval('#endpoint-secret', (e) => e.textContent))!.trim();
    expect(secret).toMatch(/^whsec_/);
    expect(tab.url()).not.toContain(secret);
    expect(await checkAxe(tab, 'prg-endpoint-created')).toEqual([]);
    expect(await sessionData()).not.toContain(secret);
    const count = async () =>
      (await stack.app.container.db('webhook_endpoints').where({ url: 'http://127.0.0.1:9/prg-hook' }).count<{ count: string }[]>())[0]!
        .count;
    expect(await count()).toBe('1');
    await tab.reload();
    expect(await tab.$('#endpoint-secret')).toBeNull();
    expect(await tab.$eval('h1', (e) => e.textContent)).toBe('Signing secret not shown again');
    expect(await checkAxe(tab, 'prg-endpoint-not-shown-again')).toEqual([]);
    const again = await withCookies(base(), context, action, sent);
    expect([again.status, again.location]).toEqual([303, answer.location]);
    expect(await count()).toBe('1');
  });

  test('a refund preview: 303 to the preview of its quote; a reload shows the same quote and prices nothing new', async () => {
    const purchaseId = await fourDayPurchase();
    await tab.goto(`${base()}/portal/purchases/${purchaseId}/cancel?mode=test`);
    const units = await tab.$$eval('input[name="units"]', (inputs) => inputs.map((i) => (i as HTMLInputElement).value));
    expect(units).toHaveLength(4);
    await tab.$eval(`#unit-${units[3]}`, (e) => ((e as HTMLInputElement).checked = true));
    for (const u of units.slice(0, 3)) await tab.$eval(`#unit-${u}`, (e) => ((e as HTMLInputElement).checked = false));
    const answer = await submit(tab, 'main form');
    expect(answer.status).toBe(303);
    expect(answer.location).toMatch(new RegExp(`^/portal/purchases/${purchaseId}/cancel/preview/cq_[0-9a-f]{24}\\?mode=test$`));
    const shown = async () => ({
      quote: await tab.$eval('input[name="quote_id"]', (e) => (e as HTMLInputElement).value),
      total: await tab.$eval('#refund-total', (e) => e.textContent),
    });
    const first = await shown();
    const quotes = async () =>
      Number(
        (await stack.app.container.db('cancellation_quotes').where({ purchase_id: purchaseId }).count<{ count: string }[]>())[0]!.count,
      );
    const before = await quotes();
    await tab.reload();
    expect(await shown()).toEqual(first);
    expect(await quotes()).toBe(before);
    expect(await checkAxe(tab, 'prg-cancel-preview')).toEqual([]);
  }, 90_000);
});

/** The error summary as the browser shows it: focused or not, in the viewport or not, its heading and links. */
async function summaryOf(tab: Page) {
  return tab.evaluate(() => {
    const s = document.querySelector('.error-summary');
    if (!s) return null;
    const box = s.getBoundingClientRect();
    return {
      role: s.getAttribute('role'),
      focused: document.activeElement === s,
      inViewport: box.top >= 0 && box.top < window.innerHeight,
      firstInForm: [...(s.closest('form')?.children ?? [])].find((c) => !(c instanceof HTMLInputElement && c.type === 'hidden')) === s,
      heading: s.querySelector('h2')?.textContent,
      links: [...s.querySelectorAll('a')].map((a) => ({
        href: a.getAttribute('href'),
        text: a.textContent,
        fieldExists: document.getElementById(a.getAttribute('href')!.slice(1)) !== null,
      })),
    };
  });
}

describe('item 2: a failed form says what is wrong at its top, with links to the fields, and takes focus', () => {
  let tab: Page;

  portalTab({ stack: () => stack, path: '/portal/keys?mode=test', viewport: { width: 1280, height: 800 } }, (t) => (tab = t));

  test('the create-key form, far down the page: the summary lists both mistakes, takes focus, and its links lead to the fields', async () => {
    // Enough keys that the form starts below the first screen.
    for (let i = 0; i < 12; i++)
      await stack.app.container.services.apiKeys.create({ rootAccountId: stack.accountId, name: `Filler ${i}`, mode: 'test' });
    await tab.goto(`${base()}/portal/keys?mode=test`);
    expect(await tab.$eval('#key-name', (e) => e.getBoundingClientRect().top > window.innerHeight)).toBe(true);
    await tab.type('#key-fee', '12.5');
    const answer = await submit(tab, 'form[action="/portal/keys"]');
    expect(answer.status).toBe(400);
    expect(await summaryOf(tab)).toEqual({
      role: 'alert',
      focused: true,
      inViewport: true,
      firstInForm: true,
      heading: 'There is a problem',
      links: [
        { href: '#key-name', text: 'Enter a name for the key.', fieldExists: true },
        { href: '#key-fee', text: 'Enter a whole number from 0 to 10000, or leave it empty.', fieldExists: true },
      ],
    });
    // Each field keeps its own error, read with it.
    expect(await tab.$eval('#key-name-error', (e) => e.textContent)).toBe('Enter a name for the key.');
    expect(await tab.$eval('#key-fee', (e) => [e.getAttribute('aria-invalid'), e.getAttribute('aria-describedby')])).toEqual([
      'true',
      'key-fee-hint key-fee-error',
    ]);
    expect(await checkAxe(tab, 'error-summary-keys')).toEqual([]);
    // A link of the summary puts the cursor in its field.
    await tab.click('.error-summary a[href="#key-fee"]');
    expect(await tab.evaluate(() => document.activeElement?.id)).toBe('key-fee');
  });

  test('the add-endpoint form and the refund form: a summary linked to the field, focused', async () => {
    await tab.goto(`${base()}/portal/webhooks?mode=test`);
    await submit(tab, 'form[action="/portal/webhooks?mode=test"]');
    expect(await summaryOf(tab)).toMatchObject({
      focused: true,
      links: [{ href: '#endpoint-url', text: 'Enter the URL events are sent to.', fieldExists: true }],
    });
    expect(await checkAxe(tab, 'error-summary-webhooks')).toEqual([]);

    const purchaseId = await fourDayPurchase();
    await tab.goto(`${base()}/portal/purchases/${purchaseId}/cancel?mode=test`);
    for (const box of await tab.$$('input[name="units"]:checked')) await box.click();
    await submit(tab, 'main form');
    const summary = await summaryOf(tab);
    expect(summary).toMatchObject({ focused: true, links: [{ text: 'Choose at least one covered unit to cancel.', fieldExists: true }] });
    expect(summary!.links[0]!.href).toMatch(/^#unit-\d+$/);
    expect(await tab.$eval('#cancel-units-error', (e) => e.textContent)).toBe('Choose at least one covered unit to cancel.');
    expect(await checkAxe(tab, 'error-summary-cancel')).toEqual([]);
  }, 90_000);
});

describe('item 3: cancelling starts from nothing ticked and the preview says plainly what is cancelled', () => {
  let tab: Page;

  portalTab({ stack: () => stack, path: '/portal/keys?mode=test' }, (t) => (tab = t));

  const ticked = () => tab.$$eval('input[name="units"]', (inputs) => inputs.map((i) => (i as HTMLInputElement).checked));

  test("the form opened from the purchase has no day ticked; from a day's row, only that day", async () => {
    const purchaseId = await fourDayPurchase();
    await tab.goto(`${base()}/portal/purchases/${purchaseId}?mode=test`);
    await Promise.all([tab.waitForNavigation(), tab.click(`a[href="/portal/purchases/${purchaseId}/cancel?mode=test"]`)]);
    expect(await ticked()).toEqual([false, false, false, false]);

    await tab.goto(`${base()}/portal/purchases/${purchaseId}?mode=test`);
    const rowLinks = await tab.$$eval('a[href*="/cancel?mode=test&unit="]', (as) => as.map((a) => a.getAttribute('aria-label')));
    expect(rowLinks).toHaveLength(4);
    expect(await checkAxe(tab, 'cancel-row-links')).toEqual([]);
    await Promise.all([tab.waitForNavigation(), tab.click('a[href*="/cancel?mode=test&unit="]')]);
    const chosen = new URL(tab.url()).searchParams.get('unit');
    expect(await ticked()).toEqual([true, false, false, false]);
    expect(await tab.$eval('input[name="units"]:checked', (e) => (e as HTMLInputElement).value)).toBe(chosen);
    expect(await checkAxe(tab, 'cancel-form-one-chosen')).toEqual([]);
  }, 90_000);

  test('the preview names the day cancelled and the three that stay covered', async () => {
    const purchaseId = await fourDayPurchase();
    await tab.goto(`${base()}/portal/purchases/${purchaseId}/cancel?mode=test`);
    const labels = await tab.$$eval('input[name="units"] + label', (ls) => ls.map((l) => l.textContent!));
    expect(labels).toHaveLength(4);
    const boxes = await tab.$$('input[name="units"]');
    await boxes[2]!.click();
    expect(await ticked()).toEqual([false, false, true, false]);
    await submit(tab, 'main form');
    const what = await tab.$$eval('#cancel-what p', (ps) => ps.map((p) => p.textContent!.replace(/\s+/g, ' ').trim()));
    expect(what).toEqual([
      `1 of the 4 covered units in force will be cancelled: ${labels[2]}.`,
      `These 3 stay covered: ${labels[0]}; ${labels[1]}; ${labels[3]}.`,
    ]);
    expect(await tab.$eval('button.danger', (e) => e.textContent)).toMatch(/^Cancel this unit and refund \$\d+\.\d\d$/);
    expect(await checkAxe(tab, 'cancel-preview-plain')).toEqual([]);
  }, 90_000);
});

describe('item 10: a webhook URL with spaces or quotes is refused, in the portal and the API', () => {
  let tab: Page;
  const bad = ['http://127.0.0.1:9/my hook', 'http://127.0.0.1:9/"hook"', "http://127.0.0.1:9/hook?o='1'", ' http://127.0.0.1:9/lead'];
  const stored = async () => (await stack.app.container.db('webhook_endpoints').whereIn('url', bad).count<{ count: string }[]>())[0]!.count;

  portalTab({ stack: () => stack, path: '/portal/webhooks?mode=test' }, (t) => (tab = t));

  test('the portal answers next to the field and in the summary, and adds nothing', async () => {
    const message = 'A URL cannot contain spaces or quotes. Remove them, or write a space as %20, " as %22 and \' as %27.';
    for (const url of bad.slice(0, 3)) {
      await tab.goto(`${base()}/portal/webhooks?mode=test`);
      await tab.type('#endpoint-url', url);
      const answer = await submit(tab, 'form[action="/portal/webhooks?mode=test"]');
      expect([url, answer.status]).toEqual([url, 400]);
      expect(await tab.$eval('#endpoint-url-error', (e) => e.textContent)).toBe(message);
      expect(await tab.$eval('.error-summary a[href="#endpoint-url"]', (e) => e.textContent)).toBe(message);
      expect(await tab.$eval('#endpoint-url', (e) => (e as HTMLInputElement).value)).toBe(url);
    }
    expect(await checkAxe(tab, 'webhook-url-quotes')).toEqual([]);
    expect(await stored()).toBe('0');
  });

  test('the API answers 400 VALIDATION_ERROR on url in its error envelope, for a new endpoint and a changed one', async () => {
    const api = (method: string, path: string, body: unknown) =>
      fetch(`${base()}/api/v1${path}`, {
        method,
        headers: { 'x-api-key': stack.agency.key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { error: { code: string; details: { path: string; message: string }[] } },
      }));
    for (const url of bad) {
      const res = await api('POST', '/webhook_endpoints', { url, enabled_events: ['subscription.renewed'] });
      expect([url, res.status, res.body.error.code, res.body.error.details]).toEqual([
        url,
        400,
        'VALIDATION_ERROR',
        [{ path: 'url', message: 'must not contain spaces or quotes (percent-encode them: a space is %20, " is %22, \' is %27)' }],
      ]);
    }
    expect(await stored()).toBe('0');
    const ok = await api('POST', '/webhook_endpoints', { url: 'http://127.0.0.1:9/my%20hook', enabled_events: ['subscription.renewed'] });
    expect(ok.status).toBe(201);
    const id = (ok.body as unknown as { data: { id: number } }).data.id;
    const patched = await api('PATCH', `/webhook_endpoints/${id}`, { url: 'http://127.0.0.1:9/my hook' });
    expect([patched.status, patched.body.error.details[0]!.path]).toEqual([400, 'url']);
  });
});

/**
 * At the tab's width: how far the page scrolls sideways (document.documentElement.scrollWidth)
 * and the words (letters only, 2 to 20 of them) of the main text laid out on more than one line.
 */
async function narrowLayout(tab: Page): Promise<{ scrollWidth: number; brokenWords: string[] }> {
  return tab.evaluate(() => {
    const broken: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? '';
      for (const m of text.matchAll(/[A-Za-z]{2,20}/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(m[0]);
      }
    }
    return { scrollWidth: document.documentElement.scrollWidth, brokenWords: broken };
  });
}

describe('item 9: at 320 px wide nothing scrolls sideways and no word is broken', () => {
  let tab: Page;

  portalTab({ stack: () => stack, path: '/portal/keys?mode=test', viewport: { width: 320, height: 640 } }, (t) => (tab = t));

  test('the event page', async () => {
    await fourDayPurchase();
    // The longest heading: "Event certificates.issued".
    const href = await eventually(async () => {
      await tab.goto(`${base()}/portal/events?mode=test`);
      return tab.$$eval(
        'tbody tr',
        (rows) =>
          rows
            .find((r) => r.querySelector('td')?.textContent === 'certificates.issued')
            ?.querySelector('a')
            ?.getAttribute('href') ?? null,
      );
    });
    await tab.goto(`${base()}${href}`);
    expect(await tab.$eval('h1', (e) => e.textContent)).toBe('Event certificates.issued');
    expect(await narrowLayout(tab)).toEqual({ scrollWidth: 320, brokenWords: [] });
    expect(await checkAxe(tab, 'narrow-event')).toEqual([]);
  }, 90_000);

  test('the delete page of a key with a long name', async () => {
    const key = await stack.app.container.services.apiKeys.create({
      rootAccountId: stack.accountId,
      name: 'agency_website_production_checkout_integration_2027',
      mode: 'test',
    });
    await tab.goto(`${base()}/portal/keys/${key.id}/delete?mode=test`);
    expect(await narrowLayout(tab)).toEqual({ scrollWidth: 320, brokenWords: [] });
    expect(await checkAxe(tab, 'narrow-key-delete')).toEqual([]);
  });

  test('the refund preview', async () => {
    const purchaseId = await fourDayPurchase();
    await tab.goto(`${base()}/portal/purchases/${purchaseId}/cancel?mode=test`);
    await tab.click('input[name="units"]');
    await submit(tab, 'main form');
    expect(await tab.$('#refund-total')).not.toBeNull();
    expect(await narrowLayout(tab)).toEqual({ scrollWidth: 320, brokenWords: [] });
    expect(await checkAxe(tab, 'narrow-cancel-preview')).toEqual([]);
  }, 90_000);

  test('the public verification page', async () => {
    const purchaseId = await fourDayPurchase();
    const row = (await stack.app.container.db('certificates').where({ purchase_id: purchaseId }).first('certificate_number')) as {
      certificate_number: string;
    };
    const res = await tab.goto(`${base()}/verify/${row.certificate_number}`);
    expect(res!.status()).toBe(200);
    expect(await narrowLayout(tab)).toEqual({ scrollWidth: 320, brokenWords: [] });
    expect(await checkAxe(tab, 'narrow-verify')).toEqual([]);
  }, 90_000);
});

describe('item 6: keys you can judge', () => {
  let context: BrowserContext;
  let tab: Page;
  const cell = (name: string, header: string) =>
    tab.evaluate(
      (n, h) => {
        const table = [...document.querySelectorAll('table')].find((t) =>
          [...t.querySelectorAll('thead th')].some((th) => th.textContent === h),
        );
        if (!table) return null;
        const column = [...table.querySelectorAll('thead th')].findIndex((th) => th.textContent === h);
        const row = [...table.querySelectorAll('tbody tr')].find((r) => r.querySelector('th')?.childNodes[0]?.textContent === n);
        return row ? (row.children[column]?.textContent ?? null) : null;
      },
      name,
      header,
    );

  portalTab({ stack: () => stack, path: '/portal/keys?mode=test' }, (t, c) => ([tab, context] = [t, c]));

  test('a key used on the API shows when it was last used; one never used says so', async () => {
    const used = await stack.app.container.services.apiKeys.create({ rootAccountId: stack.accountId, name: 'Used key', mode: 'test' });
    await stack.app.container.services.apiKeys.create({ rootAccountId: stack.accountId, name: 'Idle key', mode: 'test' });
    const before = new Date();
    expect((await fetch(`${base()}/api/v1/account`, { headers: { 'x-api-key': used.key } })).status).toBe(200);
    const shown = await eventually(async () => {
      await tab.goto(`${base()}/portal/keys?mode=test`);
      const text = await cell('Used key', 'Last used');
      return text && text !== 'never' ? text : null;
    });
    const at = Date.parse(`${shown!.replace(' UTC', '').replace(' ', 'T')}:00Z`);
    expect(Math.abs(at - before.getTime())).toBeLessThanOrEqual(61_000);
    expect(await cell('Idle key', 'Last used')).toBe('never');
    expect(await checkAxe(tab, 'keys-last-used')).toEqual([]);
  });

  test('rotating and freezing a live key ask first, naming the key and the mode; an unconfirmed post changes nothing', async () => {
    const live = await stack.app.container.services.apiKeys.create({ rootAccountId: stack.accountId, name: 'Shop live', mode: 'live' });
    await tab.goto(`${base()}/portal/keys?mode=live`);
    expect(await tab.$eval('#live-banner', (e) => e.textContent!.replace(/\s+/g, ' ').trim())).toMatch(/^Live data\. /);
    expect(await checkAxe(tab, 'keys-live-banner')).toEqual([]);
    // The list has no one-click rotate or freeze for a live key: links to a confirmation.
    expect(await tab.$(`form[action="/portal/keys/${live.id}/freeze"]`)).toBeNull();
    await Promise.all([tab.waitForNavigation(), tab.click('a[aria-label="Freeze Shop live"]')]);
    expect(await tab.$eval('h1', (e) => e.textContent)).toBe('Freeze the live key "Shop live"?');
    expect(await tab.$eval('main form button[type="submit"]', (e) => e.textContent)).toBe('Freeze the live key Shop live');
    expect(await checkAxe(tab, 'confirm-live-freeze')).toEqual([]);
    // A post without the confirmation (a form of another page, a script): nothing frozen, sent to the question.
    const token = (await formFields(tab, 'main form'))._csrf!;
    const unconfirmed = await withCookies(base(), context, `/portal/keys/${live.id}/freeze`, { _csrf: token });
    expect([unconfirmed.status, unconfirmed.location]).toEqual([303, `/portal/keys/${live.id}/freeze`]);
    const status = async () => (await stack.app.container.services.apiKeys.get(live.id))!.status;
    expect(await status()).toBe('active');
    await Promise.all([tab.waitForNavigation(), tab.click('main form button[type="submit"]')]);
    expect(await tab.$eval('.notice', (e) => e.textContent)).toBe('Key "Shop live" is now frozen.');
    expect(await status()).toBe('frozen');

    await Promise.all([tab.waitForNavigation(), tab.click('button[aria-label="Unfreeze Shop live"]')]);
    await Promise.all([tab.waitForNavigation(), tab.click('a[aria-label="Rotate Shop live"]')]);
    expect(await tab.$eval('h1', (e) => e.textContent)).toBe('Rotate the live key "Shop live"?');
    await tab.select('#confirm-grace', '24');
    await Promise.all([tab.waitForNavigation(), tab.click('main form button[type="submit"]')]);
    expect(await tab.$eval('h1', (e) => e.textContent)).toBe('Key rotated');

    await tab.goto(`${base()}/portal/keys/${live.id}/delete?mode=live`);
    expect(await tab.$eval('h1', (e) => e.textContent)).toBe('Delete the live key "Shop live"?');
    expect(await tab.$eval('main > p:not(.live-banner)', (e) => e.textContent)).toMatch(/^Deleting live key Shop live /);
    expect(await checkAxe(tab, 'confirm-live-delete')).toEqual([]);
  });
});

describe('item 4: signing out signs out', () => {
  let context: BrowserContext;
  let tab: Page;
  portalTab({ stack: () => stack, path: '/portal/keys', each: true }, (t, c) => ([tab, context] = [t, c]));

  test('sign-out lands on the signed-out page without a question; the next visit asks for the password', async () => {
    const visited: string[] = [];
    tab.on('framenavigated', (f) => {
      if (f === tab.mainFrame()) visited.push(f.url());
    });
    await tab.click('header button[type="submit"]');
    await tab.waitForFunction((u) => location.href === u, {}, `${base()}/portal/signed-out`);
    // Through the provider's end-session endpoint with the ID token as hint and the way back.
    const endSession = new URL(visited.find((u) => u.startsWith(stack.idp.issuer))!);
    expect(endSession.searchParams.get('id_token_hint')).toMatch(/^ey/);
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(`${base()}/portal/signed-out`);
    expect(await tab.$eval('h1', (e) => e.textContent)).toBe('Signed out');
    expect(await checkAxe(tab, 'signed-out')).toEqual([]);
    // The signed-out page stays there; its link leads to the provider's password form.
    await Promise.all([tab.waitForNavigation(), tab.click('main a[href="/portal/sign-in"]')]);
    expect(tab.url().startsWith(stack.idp.issuer)).toBe(true);
    expect(await tab.$('#password')).not.toBeNull();
    expect((await withCookies(base(), context, '/portal/keys')).status).toBe(303);
  });

  test("the provider's session outlives the sign-out (the tab closed on it): the next sign-in still asks for the password", async () => {
    // The portal's sign-out runs; the browser never reaches the provider.
    await tab.setRequestInterception(true);
    tab.on('request', (r) => void (r.url().startsWith(stack.idp.issuer) ? r.abort() : r.continue()));
    await tab.click('header button[type="submit"]').catch(() => undefined);
    await eventually(async () => ((await withCookies(base(), context, '/portal/keys')).status === 303 ? true : null));
    tab.removeAllListeners('request');
    await tab.setRequestInterception(false);
    // The next person opens the portal: the provider asks for the password, nobody is signed in by itself.
    await tab.goto(`${base()}/portal/keys`);
    expect(tab.url().startsWith(stack.idp.issuer)).toBe(true);
    expect(await tab.$('#password')).not.toBeNull();
    // Signing in again with the password works, and lands where the person was going.
    await signIn(tab, stack.admin);
    expect(tab.url()).toBe(`${base()}/portal/keys`);
  });
});
