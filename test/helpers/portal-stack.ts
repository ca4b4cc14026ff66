/**
 * Test helper: the agency portal's stack for a Chromium suite: the app with the portal on (a
 * session key, the local OpenID provider as issuer), a Temporal worker on a queue of its own, an
 * agency that sells (createAgency) with a portal admin and viewer, the local provider knowing
 * both, and Chromium. Also the suites' helpers: the stack in a suite's hooks, the app's portal
 * settings, a signed-in tab per describe block, submitting a form, signing in at the provider,
 * axe-core's check (with a screenshot when PORTAL_SCREENSHOTS_DIR is set), a hand-made request
 * with the browser's portal cookies, and a page's CSRF token.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import { startTestApp, type TestApp } from './app';
import { startLocalIdp, type LocalIdp } from './local-idp';
import { freePort } from './ports';
import { axeViolations, launchBrowser } from './browser';
import { createAccountsRepository } from '../../src/accounts/repository';
import { startTestWorker, uniqueTaskQueue, type TestWorker } from './worker';
import { createAgency, type Agency } from './certificates';
import { WEBHOOK_SECRET } from './purchases';

export interface PortalUser {
  email: string;
  name: string;
  password: string;
  /** The teammate's `idp_teammate_uuid`, the provider's `sub`. */
  sub: string;
}

export interface PortalStack {
  app: TestApp;
  idp: LocalIdp;
  browser: Browser;
  agency: Agency;
  /** The agency's root account id. */
  accountId: number;
  admin: PortalUser;
  viewer: PortalUser;
  /** The users `more` made (teammates of other accounts), also known to the provider. */
  others: PortalUser[];
  close(): Promise<void>;
}

/**
 * The app's settings for a portal suite: listening on `appPort` (its public base URL there), the
 * portal on with the local OpenID provider at `idpPort` as issuer (client secret
 * `clientSecret`), a fresh session key, and no rate limit in the way.
 */
export function portalAppSettings(appPort: number, idpPort: number, clientSecret: string) {
  return {
    PORT: String(appPort),
    PUBLIC_BASE_URL: `http://127.0.0.1:${appPort}`,
    PORTAL_OIDC_ISSUER: `http://127.0.0.1:${idpPort}`,
    PORTAL_OIDC_CLIENT_SECRET: clientSecret,
    PORTAL_SESSION_KEYS: crypto.randomBytes(32).toString('base64url'),
    RATE_LIMIT_PER_MINUTE: '100000',
  };
}

/** Makes more portal users (teammates of other accounts, say) once the app and the agency exist; their `sub` set. */
export type MoreTeammates = (app: TestApp, agency: Agency) => Promise<PortalUser[]>;

/**
 * Starts the stack (about 10 s); `label` names the agency, `more` makes more users for the
 * provider. Call `close` in afterAll.
 */
export async function startPortalStack(label: string, more?: MoreTeammates): Promise<PortalStack> {
  const tag = crypto.randomUUID().slice(0, 8);
  const admin: PortalUser = {
    email: `admin@${label}-${tag}.example`,
    name: 'Ada Admin',
    password: 'correct horse battery staple',
    sub: '',
  };
  const viewer: PortalUser = { email: `viewer@${label}-${tag}.example`, name: 'Vic Viewer', password: 'viewer pass phrase 42', sub: '' };
  const appPort = await freePort();
  const appUrl = `http://127.0.0.1:${appPort}`;
  const idpPort = await freePort();
  const clientSecret = `test-secret-${crypto.randomUUID()}`;
  const taskQueue = uniqueTaskQueue();
  const worker: TestWorker = await startTestWorker(taskQueue);
  const app = await startTestApp({
    ...portalAppSettings(appPort, idpPort, clientSecret),
    TEMPORAL_TASK_QUEUE: taskQueue,
    PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET,
  });
  const agency = await createAgency(app, `Portal ${label} ${tag}`);
  const accounts = createAccountsRepository(app.container.db);
  const account = (await accounts.findBySlug(agency.slug))!;
  await accounts.upsertAgent({ rootAccountId: account.id, name: admin.name, email: admin.email, portalRole: 'admin' });
  await accounts.upsertAgent({ rootAccountId: account.id, name: viewer.name, email: viewer.email });
  const teammates = await accounts.listTeammates(account.id);
  admin.sub = teammates.find((t) => t.email === admin.email)!.idpTeammateUuid;
  viewer.sub = teammates.find((t) => t.email === viewer.email)!.idpTeammateUuid;
  const others = more ? await more(app, agency) : [];
  const idp = await startLocalIdp({ users: [admin, viewer, ...others], appUrl, port: idpPort, clientSecret });
  const browser = await launchBrowser(app.container.config.CHROMIUM_PATH);
  return {
    app,
    idp,
    browser,
    agency,
    accountId: account.id,
    admin,
    viewer,
    others,
    async close() {
      await browser.close();
      await idp.stop();
      await app.close();
      await worker.shutdown();
    },
  };
}

/** Signs in at the local provider from a portal page that redirected there. */
export async function signIn(tab: Page, user: { email: string; password: string }): Promise<void> {
  await tab.waitForSelector('#email');
  await tab.type('#email', user.email);
  await tab.type('#password', user.password);
  await Promise.all([tab.waitForNavigation(), tab.click('button[type="submit"]')]);
}

/**
 * A suite's stack: started in a beforeAll (60 s allowed) and handed to `use`, closed in the
 * afterAll. `label` names the agency, `more` makes more users (as startPortalStack).
 */
export function portalSuite(label: string, use: (stack: PortalStack) => void, more?: MoreTeammates): void {
  let stack: PortalStack | undefined;
  beforeAll(async () => {
    stack = await startPortalStack(label, more);
    use(stack);
  }, 60_000);
  afterAll(() => stack?.close());
}

/** Submits the page's form `selector`: the POST's own response (before any redirect): its status and where it redirects. */
export async function submit(tab: Page, selector: string): Promise<{ status: number; location: string | undefined }> {
  const [res] = await Promise.all([
    tab.waitForResponse((r) => r.request().method() === 'POST' && r.request().isNavigationRequest()),
    tab.waitForNavigation(),
    tab.$eval(selector, (f) => (f as HTMLFormElement).requestSubmit()),
  ]);
  return { status: res.status(), location: res.headers().location };
}

/**
 * A browser tab for the tests of one describe block, in a context of its own (no cookies shared
 * with other blocks): opened in a beforeAll (a beforeEach with `each`), at `path` signed in as
 * `as` (the stack's admin unless named) when a path is given, then sized to `viewport` if given,
 * and handed to `use`; its context is closed in the matching afterAll (afterEach). `stack` is
 * read when the hook runs.
 */
export function portalTab(
  opts: {
    stack: () => PortalStack;
    path?: string;
    /** The stack's admin or viewer, or another user (one of `others`). */
    as?: 'admin' | 'viewer' | PortalUser;
    viewport?: { width: number; height: number };
    each?: boolean;
  },
  use: (tab: Page, context: BrowserContext) => void,
): void {
  let context: BrowserContext | undefined;
  (opts.each ? beforeEach : beforeAll)(async () => {
    const s = opts.stack();
    context = await s.browser.createBrowserContext();
    const tab = await context.newPage();
    if (opts.path !== undefined) {
      await tab.goto(`${s.app.baseUrl}${opts.path}`);
      await signIn(tab, typeof opts.as === 'object' ? opts.as : s[opts.as ?? 'admin']);
    }
    if (opts.viewport) await tab.setViewport(opts.viewport);
    use(tab, context);
  });
  (opts.each ? afterEach : afterAll)(() => context?.close());
}

/** axe-core's violations on the page (expected none); with PORTAL_SCREENSHOTS_DIR set, a full-page screenshot `portal-<name>.png` there. */
export async function checkAxe(tab: Page, name: string): Promise<string[]> {
  const violations = await axeViolations(tab);
  const dir = process.env.PORTAL_SCREENSHOTS_DIR;
  if (dir) {
    fs.mkdirSync(dir, { recursive: true });
    await tab.screenshot({ path: path.join(dir, `portal-${name}.png`) as `${string}.png`, fullPage: true });
  }
  return violations;
}

/**
 * A hand-made request to `baseUrl` + `url` with the browser's portal cookies (a form POST when
 * `fields` is given), no redirect followed: the status, the redirect target and the text.
 */
export async function withCookies(
  baseUrl: string,
  context: BrowserContext,
  url: string,
  fields?: Record<string, string>,
): Promise<{ status: number; location: string | null; text: string }> {
  const cookies = (await context.cookies())
    .filter((c) => c.name.startsWith('coi_portal_session'))
    .map((c) => `${c.name}=${c.value}`)
    .join('; ');
  const res = await fetch(`${baseUrl}${url}`, {
    method: fields ? 'POST' : 'GET',
    headers: { cookie: cookies, ...(fields ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    body: fields ? new URLSearchParams(fields).toString() : undefined,
    redirect: 'manual',
  });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

/** The fields a form of the page would send now (its inputs, checked boxes and selects), by the form's CSS selector. */
export async function formFields(tab: Page, selector: string): Promise<Record<string, string>> {
  return tab.$eval(selector, (form) => {
    const out: Record<string, string> = {};
    for (const [k, v] of new FormData(form as HTMLFormElement)) out[k] = String(v);
    return out;
  });
}
