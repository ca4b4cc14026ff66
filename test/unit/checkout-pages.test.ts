/**
 * The buyer's return pages without servers: the wording of every state, escaping, what a page
 * never shows, the query rules (one answer for every bad link), the token comparison, and the
 * rules of configured return URLs.
 */
import { renderCancelledPage, renderCompletePage, renderNotFoundPage } from '../../src/checkout-pages/page';
import {
  createCheckoutPageService,
  parseReturnQuery,
  tokensMatch,
  type ReturnPageState,
  type ReturnPageView,
} from '../../src/checkout-pages/service';
import { CANCELLED_PAGE_PATH, COMPLETE_PAGE_PATH, checkoutReturnUrls, returnPageUrl } from '../../src/purchases/return-urls';
import { returnUrlProblem } from '../../src/shared/return-url';
import type { PurchaseRecord } from '../../src/purchases/purchase-record';

const TOKEN = 'q3Vt1m0cY8nK2pZr5LwX7aBdE9fGhJkM4sTuVxYz1Ac';

function view(state: ReturnPageState, over: Partial<ReturnPageView> = {}): ReturnPageView {
  const final = ['issued', 'refunded', 'expired', 'failed'].includes(state);
  return {
    purchase_id: 42,
    state,
    purchase_status: 'issued',
    final,
    refresh_after_seconds: final ? null : 3,
    test_mode: false,
    paid_at: null,
    certificates_issued_at: null,
    certificates: [],
    proofs_of_coverage: [],
    withdrawal_url: null,
    checked_at: '2027-01-01T00:00:00.000Z',
    ...over,
  };
}

describe('the complete page', () => {
  test.each([
    ['awaiting_payment', 'Waiting for payment confirmation', true],
    ['issuing', 'Paid: certificates being issued', true],
    ['issued', 'Paid: certificates ready', false],
    ['refunded', 'Refunded: certificates voided', false],
    ['expired', 'Checkout expired', false],
    ['failed', 'Payment not completed', false],
  ] as const)('when the state is %s, then it says "%s" and refreshes itself: %s', (state, title, refreshes) => {
    const html = renderCompletePage(view(state));
    expect(html).toContain(`data-state="${state}"`);
    expect(html).toContain(`>${title}</div>`);
    expect(html.includes('<meta http-equiv="refresh" content="3">')).toBe(refreshes);
    expect(html).toContain('<meta name="referrer" content="no-referrer">');
    expect(html).not.toContain('Test mode');
  });

  test('when names hold HTML, then every value is escaped and test mode is said', () => {
    const html = renderCompletePage(
      view('issued', {
        test_mode: true,
        certificates: [
          {
            certificate_number: 'COI-1-1-1-AAAAAAAAAA',
            product_name: '<script>alert(1)</script>',
            coverage_label: '2027-05-01',
            named_insured_name: '"><img src=x>',
            verification_url: 'http://x/verify/COI-1-1-1-AAAAAAAAAA?a=1&b=2',
          },
        ],
        proofs_of_coverage: [{ product_name: '<b>P</b>', certificate_count: 1, proof_of_coverage_url: 'http://x/verify/POC-1' }],
      }),
    );
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('"><img');
    expect(html).not.toContain('<b>P</b>');
    expect(html).toContain('&lt;script&gt;');
    expect(html).toContain('href="http://x/verify/COI-1-1-1-AAAAAAAAAA?a=1&amp;b=2"');
    expect(html).toContain('(1 certificate)');
    expect(html).toContain('Test mode');
  });
});

describe('the cancelled page', () => {
  test.each([
    ['awaiting_payment', 'Payment cancelled', 'not paid', true],
    ['expired', 'Payment cancelled', 'not paid, checkout expired', true],
    ['failed', 'Payment cancelled', 'not paid, purchase not completed', true],
    ['issuing', 'Paid after all', 'paid, certificates being issued', false],
    ['issued', 'Paid after all', 'paid, certificates ready', false],
    ['refunded', 'Refunded', 'refunded, certificates voided', false],
  ] as const)('when the state is %s, then it says "%s" with status "%s" (nothing charged: %s)', (state, title, status, nothingCharged) => {
    const html = renderCancelledPage(view(state), 'https://svc.example/checkout/complete?purchase=42&token=t');
    expect(html).toContain(`>${title}</div>`);
    expect(html).toContain(`<span id="status">${status}</span>`);
    expect(html.includes('nothing was charged')).toBe(nothingCharged);
    expect(html).toContain('href="https://svc.example/checkout/complete?purchase=42&amp;token=t"');
    expect(html).not.toContain('http-equiv="refresh"');
  });
});

test('when the not-found page is rendered, then it names nothing', () => {
  expect(renderNotFoundPage()).toContain('Purchase not found');
  expect(renderNotFoundPage()).toBe(renderNotFoundPage());
});

describe('the return link query', () => {
  test.each([
    [{ purchase: '42', token: TOKEN }, true],
    [{ purchase: '42', token: 'ab'.repeat(32) }, true],
    [{ purchase: '2147483647', token: TOKEN }, true],
    [{ purchase: '2147483648', token: TOKEN }, false],
    [{ purchase: '0', token: TOKEN }, false],
    [{ purchase: '042', token: TOKEN }, false],
    [{ purchase: '1e3', token: TOKEN }, false],
    [{ purchase: '42', token: TOKEN.slice(1) }, false],
    [{ purchase: '42', token: `${'ab'.repeat(32)}c` }, false],
    [{ purchase: '42', token: `${TOKEN.slice(1)}=` }, false],
    [{ purchase: ['42', '42'], token: TOKEN }, false],
    [{ purchase: '42', token: [TOKEN, TOKEN] }, false],
    [{ purchase: '42' }, false],
    [{ token: TOKEN }, false],
  ])('when it is %p, then it is accepted: %p', (query, ok) => {
    expect(parseReturnQuery(query) !== null).toBe(ok);
  });

  test('when tokens are compared, then only the same token matches, whatever the lengths', () => {
    expect(tokensMatch(TOKEN, TOKEN)).toBe(true);
    expect(tokensMatch(TOKEN, `${TOKEN.slice(0, -1)}B`)).toBe(false);
    expect(tokensMatch(TOKEN, TOKEN.slice(0, 10))).toBe(false);
    expect(tokensMatch('ab'.repeat(32), TOKEN)).toBe(false);
  });

  test('when the purchase is unknown, has no token or another token, then the view is null, and the certificates are not read', async () => {
    const reads: number[] = [];
    const purchases = new Map<number, Partial<PurchaseRecord>>([
      [1, { id: 1, status: 'issued', returnToken: TOKEN, mode: 'live', paidAt: new Date(), certificatesIssuedAt: new Date() }],
      [2, { id: 2, status: 'issued', returnToken: null, mode: 'live', paidAt: new Date(), certificatesIssuedAt: new Date() }],
    ]);
    const service = createCheckoutPageService({
      sales: { findById: async (id) => purchases.get(id) as PurchaseRecord | undefined },
      certificates: {
        listForPurchase: async (id) => (reads.push(id), []),
        archives: async () => [],
      },
      publicBaseUrl: 'https://svc.example',
    });
    expect(await service.view({ purchase: '3', token: TOKEN })).toBeNull();
    expect(await service.view({ purchase: '2', token: TOKEN })).toBeNull();
    expect(await service.view({ purchase: '1', token: 'ab'.repeat(32) })).toBeNull();
    expect(reads).toEqual([]);
    expect(await service.view({ purchase: '1', token: TOKEN })).toMatchObject({ purchase_id: 1, state: 'issued', final: true });
    expect(reads).toEqual([1]);
    expect(service.completePageUrl(1, TOKEN)).toBe(`https://svc.example/checkout/complete?purchase=1&token=${TOKEN}`);
  });
});

describe('a configured return URL', () => {
  test.each([
    ['https://agency.example/thanks', null, 'https://agency.example/thanks'],
    ['http://127.0.0.1:8080/done?x=1', null, 'http://127.0.0.1:8080/done?x=1'],
    ['https://agency.example/thanks?session={CHECKOUT_SESSION_ID}', null, 'https://agency.example/thanks?session={CHECKOUT_SESSION_ID}'],
    ['a URL of 2048 characters', null, `https://a.example/${'p'.repeat(2048 - 'https://a.example/'.length)}`],
    [
      'a URL of 2049 characters',
      'must be at most 2048 characters (got 2049)',
      `https://a.example/${'p'.repeat(2049 - 'https://a.example/'.length)}`,
    ],
    ['an empty string', 'must not be empty', ''],
    ['/checkout/done', 'must be an absolute http or https URL', '/checkout/done'],
    ['agency.example/thanks', 'must be an absolute http or https URL', 'agency.example/thanks'],
    ['ftp://agency.example/x', 'must be an absolute http or https URL', 'ftp://agency.example/x'],
    ['javascript:alert(1)', 'must be an absolute http or https URL', 'javascript:alert(1)'],
    ['http:agency.example', 'must be an absolute http or https URL', 'http:agency.example'],
    ['https:///path', 'must be an absolute http or https URL', 'https:///path'],
    ['https://agency.example/a b', 'must not contain spaces or control characters', 'https://agency.example/a b'],
    [' https://agency.example/', 'must not contain spaces or control characters', ' https://agency.example/'],
    ['https://user:pw@agency.example/', 'must not contain a user name or password', 'https://user:pw@agency.example/'],
  ])('when it is %s, then the problem is %p', (_label, problem, url) => {
    expect(returnUrlProblem(url)).toBe(problem);
  });
});

describe('the service return page URL', () => {
  test('when PUBLIC_BASE_URL has a path, then the page URL keeps it and carries the purchase and its token', () => {
    const url = new URL(returnPageUrl('https://coi.example.com/insurance/', COMPLETE_PAGE_PATH, 42, 'tok_abc-_'));
    expect(url.pathname).toBe('/insurance/checkout/complete');
    expect(Object.fromEntries(url.searchParams)).toEqual({ purchase: '42', token: 'tok_abc-_' });
    expect(returnPageUrl('http://127.0.0.1:3000', CANCELLED_PAGE_PATH, 7, 't')).toBe(
      'http://127.0.0.1:3000/checkout/cancelled?purchase=7&token=t',
    );
  });

  test('when no return URL is configured, then checkoutReturnUrls gives the service pages; configured ones win', () => {
    const own = checkoutReturnUrls({
      publicBaseUrl: 'https://coi.example.com',
      purchaseId: 3,
      returnToken: 'x',
      configured: { successUrl: null, cancelUrl: 'https://agent.example/cancel' },
    });
    expect(own).toEqual({
      successUrl: 'https://coi.example.com/checkout/complete?purchase=3&token=x',
      cancelUrl: 'https://agent.example/cancel',
    });
  });
});
