/**
 * The buyer's own withdrawal (issue 24, item 6) on the real servers: a purchase is checked out
 * through the API, paid with the test helper and issued by a worker (Temporal dev server,
 * stripe-mock, PostgreSQL, fake-gcs, Chromium); its checkout return page and the proof-of-coverage
 * email to the buyer (an SMTP server in this process) carry the signed link; the page is opened
 * and confirmed in a real Chromium (puppeteer-core, Debian's /usr/bin/chromium) and checked with
 * axe-core; the refund, the cancelled units and `purchase.cancelled` with `requested_by: buyer`
 * follow once, however often the form is sent again. Also: forged links, a product that does not
 * allow it, an unpaid purchase, a cross-site POST, a form that is not the page's and a stale quote.
 */
import PostalMime from 'postal-mime';
import { axeViolations, launchBrowser } from '../helpers/browser';
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call } from '../helpers/fixtures';
import { checkout, createQuotingAccount, type QuotingAccount, issuedPurchase, unitStatesAndVoided } from '../helpers/purchases';
import { eventually } from '../helpers/worker';
import type { TestSmtp } from '../helpers/smtp';
import { createSaleRepository } from '../../src/purchases/sale-repository';
import { signWithdrawalToken } from '../../src/withdrawals/token';

jest.setTimeout(120_000);

const stack = useStack({ smtp: true, app: { RATE_LIMIT_PER_MINUTE: '100000', VERIFY_RATE_LIMIT_PER_MINUTE: '100000' } });
let smtp: TestSmtp;
let app: TestApp;
let account: QuotingAccount;

const api = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) =>
  call(app.baseUrl, `/api/v1${path}`, { key: account.key, ...init });
const purchase = async (id: number, key = account.key) => (await call(app.baseUrl, `/api/v1/purchases/${id}`, { key })).body.data;
/** The link's path on this test app (links carry PUBLIC_BASE_URL; the app listens on its own port). */
const pathOf = (url: string) => new URL(url).pathname;
const open = (path: string) => call(app.baseUrl, path, { headers: { accept: 'text/html' } });
const confirm = (path: string, quote: string, headers: Record<string, string> = {}) =>
  call(app.baseUrl, path, {
    method: 'POST',
    rawBody: new URLSearchParams({ quote }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
const quoteOf = (html: string) => /name="quote" value="(cq_[0-9a-f]{24})"/.exec(html)?.[1];
const cancellationRows = async (id: number) =>
  Number((await app.container.db('policy_transactions').where({ purchase_id: id }).count({ n: '*' }).first())!.n);

/** The complete page's JSON view (the buyer's return page after checkout). */
async function completePage(id: number) {
  const p = await createSaleRepository(app.container.db).findById(id);
  return (
    await call(app.baseUrl, `/checkout/complete?purchase=${id}&token=${encodeURIComponent(p!.returnToken!)}`, {
      headers: { accept: 'application/json' },
    })
  ).body;
}

beforeAll(async () => {
  ({ app, smtp } = stack);
  account = await createQuotingAccount(app);
});

test('when the buyer opens the link from the return page and the email and confirms in a browser, then the refund and cancellation happen once, the agency gets purchase.cancelled by the buyer, and the link answers it was used', async () => {
  const id = await issuedPurchase(app, account);
  const buyerEmail = (await purchase(id)).buyer_email as string;

  // The checkout return page carries the signed link.
  const link = (await completePage(id)).withdrawal_url as string;
  expect(link).toMatch(new RegExp(`^${app.container.config.PUBLIC_BASE_URL}/withdraw/w1\\.${id}\\.[A-Za-z0-9_-]{43}$`));
  const path = pathOf(link);

  // So does the proof-of-coverage email to the buyer, and only to the buyer.
  const rootUuid = (await app.container.db('root_accounts').where({ id: account.accountId }).first('idp_root_account_uuid'))
    .idp_root_account_uuid as string;
  const emailed = await call(app.baseUrl, '/platform-agency-root-certs/teamEmailProofofCoverage', {
    method: 'POST',
    key: account.key,
    body: { idp_root_account_uuid: rootUuid, purchase_id: id, email_addresses: [buyerEmail.toUpperCase(), 'venue@lakehouse.example'] },
  });
  expect(emailed.status).toBe(200);
  const mails = await eventually(async () => {
    const got = smtp.messages.filter((m) => m.to.some((t) => [buyerEmail, 'venue@lakehouse.example'].includes(t.toLowerCase())));
    // Three: the buyer's own email after payment (sent by default), and the two asked for here.
    return got.length === 3
      ? Promise.all(got.map(async (m) => ({ to: m.to[0]!.toLowerCase(), text: (await PostalMime.parse(m.raw)).text ?? '' })))
      : null;
  }, 60_000);
  for (const m of mails!.filter((x) => x.to === buyerEmail)) expect(m.text).toContain(`Withdraw from contract here: ${link}`);
  expect(mails!.filter((x) => x.to === buyerEmail)).toHaveLength(2);
  expect(mails!.find((m) => m.to === 'venue@lakehouse.example')!.text).not.toContain('/withdraw/');

  // Before confirming: a cross-site POST, a form the page never showed and a quote that expired do nothing.
  const first = await open(path);
  expect(first.status).toBe(200);
  expect(first.headers.get('cache-control')).toBe('no-store');
  expect(first.headers.get('referrer-policy')).toBe('no-referrer');
  expect(first.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  const shown = quoteOf(first.text)!;
  expect(shown).toBeDefined();
  expect((await confirm(path, shown, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
  const foreign = await confirm(path, 'cq_0123456789abcdef01234567');
  expect([foreign.status, foreign.text.includes('was not sent from this page')]).toEqual([400, true]);
  await app.container
    .db('cancellation_quotes')
    .where({ id: shown })
    .update({ expires_at: new Date(Date.now() - 1000) });
  const stale = await confirm(path, shown);
  expect([stale.status, stale.text.includes('The amount changed')]).toEqual([409, true]);
  expect(quoteOf(stale.text)).not.toBe(shown);
  expect(await cancellationRows(id)).toBe(0);

  // The buyer opens the link in a browser, sees the quote, and confirms.
  const browser = await launchBrowser(app.container.config.CHROMIUM_PATH);
  let confirmedQuote: string;
  try {
    const tab = await browser.newPage();
    const res = await tab.goto(`${app.baseUrl}${path}`);
    expect(res!.status()).toBe(200);
    // Within the 14-day free look with no day started, everything comes back: 2 days at 20.00.
    expect(await tab.$eval('#refund-total', (e) => e.textContent)).toBe('$40.00');
    expect(await tab.$$eval('#units tbody tr', (rows) => rows.length)).toBe(2);
    expect(await axeViolations(tab)).toEqual([]);
    confirmedQuote = (await tab.$eval('input[name="quote"]', (e) => e.getAttribute('value')))!;
    expect(await cancellationRows(id)).toBe(0); // opening the page cancelled nothing
    const [answer] = await Promise.all([tab.waitForNavigation(), tab.click('#confirm')]);
    expect(answer!.status()).toBe(200);
    expect(await tab.$eval('h1', (e) => e.textContent)).toBe('Withdrawal received');
    expect(await axeViolations(tab)).toEqual([]);
  } finally {
    await browser.close();
  }

  // Carried out through the policy workflow like the agency's cancel: refund, units cancelled, certificates voided.
  const done = await eventually(async () => {
    const p = await purchase(id);
    return p.cancellations[0]?.status === 'completed' ? p : null;
  });
  expect(done.cancellations).toHaveLength(1);
  expect(done.cancellations[0]).toMatchObject({ quote_id: confirmedQuote, requested_by: 'buyer', refund: { total: 4000 } });
  expect(done.cancellations[0].refund.id).toMatch(/^re_/);
  expect(done.amount_refunded).toBe(4000);
  expect(unitStatesAndVoided(done)).toEqual([
    ['cancelled', true],
    ['cancelled', true],
  ]);
  const ofPurchase = async (type: string) =>
    ((await api(`/events?type=${type}`)).body.data as Array<{ data: { object: Record<string, any> } }>)
      .filter((e) => (e.data.object.purchase_id ?? e.data.object.id) === id)
      .map((e) => e.data.object);
  const cancelled = await ofPurchase('purchase.cancelled');
  expect(cancelled).toHaveLength(1);
  expect(cancelled[0]!.cancellation).toMatchObject({ requested_by: 'buyer', refund: { total: 4000 } });
  expect(await ofPurchase('refund.succeeded')).toHaveLength(1);

  // The same form again answers the same withdrawal; another quote, or opening the link, does nothing more.
  const again = await confirm(path, confirmedQuote!);
  expect([again.status, again.text.includes('Withdrawal received')]).toEqual([200, true]);
  const reused = await confirm(path, shown);
  expect([reused.status, reused.text.includes('This withdrawal link was already used')]).toEqual([409, true]);
  const reopened = await open(path);
  expect([reopened.status, reopened.text.includes('Withdrawal received'), reopened.text.includes('<form')]).toEqual([200, true, false]);
  expect(reopened.text).toContain('$40.00 was refunded');
  expect(await cancellationRows(id)).toBe(1);
  expect((await purchase(id)).amount_refunded).toBe(4000);
  expect(await ofPurchase('refund.succeeded')).toHaveLength(1);
});

test('when the link is forged, damaged or names no purchase, then one 404 page that names nothing, for GET and POST', async () => {
  const { purchaseId } = await checkout(app, account);
  const real = signWithdrawalToken(app.container.config.WITHDRAWAL_LINK_KEY, purchaseId);
  const otherKey = signWithdrawalToken('another-deployment-withdrawal-key-000000', purchaseId);
  const paths = [
    `/withdraw/w1.${purchaseId}.${'A'.repeat(43)}`,
    `/withdraw/${otherKey}`,
    `/withdraw/${real.slice(0, -2)}`,
    '/withdraw/nonsense',
    `/withdraw/${signWithdrawalToken(app.container.config.WITHDRAWAL_LINK_KEY, 2_147_483_000)}`,
  ];
  const answers = await Promise.all(paths.map((p) => open(p)));
  expect(answers.map((a) => a.status)).toEqual(paths.map(() => 404));
  expect(new Set(answers.map((a) => a.text)).size).toBe(1);
  expect(answers[0]!.text).toContain('This withdrawal link is not valid');
  expect(answers[0]!.text).not.toMatch(/[Pp]urchase/);
  expect((await confirm(paths[0]!, 'cq_0123456789abcdef01234567')).status).toBe(404);
  // The real link of that unpaid purchase says there is nothing to withdraw from yet.
  const unpaid = await open(`/withdraw/${real}`);
  expect([unpaid.status, unpaid.text.includes('has not been paid')]).toEqual([200, true]);
});

test("when the product does not allow the buyer's withdrawal, then no link is offered and a signed link confirms nothing", async () => {
  const closed = await createQuotingAccount(app);
  const patched = await call(app.baseUrl, `/api/v1/products/${closed.productId}/cancellation_terms`, {
    method: 'PATCH',
    key: closed.key,
    body: { buyer_withdrawal: false },
  });
  expect(patched.body.data).toMatchObject({ buyer_withdrawal: false, is_default: false });
  const id = await issuedPurchase(app, closed);
  expect(
    (await app.container.db('purchase_items').where({ purchase_id: id }).first('cancellation_terms')).cancellation_terms,
  ).toMatchObject({ buyerWithdrawal: false });
  expect((await completePage(id)).withdrawal_url).toBeNull();
  const path = `/withdraw/${signWithdrawalToken(app.container.config.WITHDRAWAL_LINK_KEY, id)}`;
  const page = await open(path);
  expect([page.status, page.text.includes('Online withdrawal is not offered')]).toEqual([200, true]);
  expect((await confirm(path, 'cq_0123456789abcdef01234567')).status).toBe(409);
  expect(await cancellationRows(id)).toBe(0);
  expect(await app.container.db('cancellation_quotes').where({ purchase_id: id }).count({ n: '*' }).first()).toEqual({ n: '0' });
});
