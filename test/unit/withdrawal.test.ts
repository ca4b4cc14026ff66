/**
 * The buyer's withdrawal link and page without servers: signing and verifying the token (any
 * change, another key, another id or a malformed token reads as no purchase), the link URL, when a
 * purchase offers the link, and what the page says in each state (amounts in major units, the
 * confirm form, escaping) and the complete page's link.
 */
import { signWithdrawalToken, verifyWithdrawalToken, withdrawalUrl, WITHDRAWAL_TOKEN_PATTERN } from '../../src/withdrawals/token';
import { withdrawalOffered } from '../../src/withdrawals/links';
import { renderWithdrawalNotFound, renderWithdrawalPage } from '../../src/withdrawals/page';
import type { WithdrawalView } from '../../src/withdrawals/service';
import { renderCompletePage } from '../../src/checkout-pages/page';
import type { ReturnPageView } from '../../src/checkout-pages/service';
import { DEFAULT_CANCELLATION_TERMS } from '../../src/products/cancellation-terms';

const KEY = 'unit-test-withdrawal-link-key-0123456789';

describe('the withdrawal token', () => {
  test('when a token is signed, then it names the purchase, has the documented shape and verifies with the same key', () => {
    const token = signWithdrawalToken(KEY, 42);
    expect(token).toMatch(WITHDRAWAL_TOKEN_PATTERN);
    expect(token.startsWith('w1.42.')).toBe(true);
    expect(verifyWithdrawalToken(KEY, token)).toBe(42);
    expect(signWithdrawalToken(KEY, 42)).toBe(token); // deterministic: the same link in every email
    expect(verifyWithdrawalToken(KEY, signWithdrawalToken(KEY, 2_147_483_647))).toBe(2_147_483_647);
  });

  test('when the key, the id or any character of the signature differs, then it verifies as nothing', () => {
    const token = signWithdrawalToken(KEY, 42);
    expect(verifyWithdrawalToken(`${KEY}x`, token)).toBeNull();
    const [, , mac] = token.split('.');
    expect(verifyWithdrawalToken(KEY, `w1.43.${mac}`)).toBeNull();
    for (let i = 0; i < mac!.length; i++) {
      const flipped = mac!.slice(0, i) + (mac![i] === 'A' ? 'B' : 'A') + mac!.slice(i + 1);
      expect(verifyWithdrawalToken(KEY, `w1.42.${flipped}`)).toBeNull();
    }
  });

  test.each([
    ['empty', ''],
    ['another version', (t: string) => t.replace(/^w1/, 'w2')],
    ['id 0', (t: string) => t.replace('.42.', '.0.')],
    ['a leading zero', (t: string) => t.replace('.42.', '.042.')],
    ['an id above 32 bits', (t: string) => t.replace('.42.', '.2147483648.')],
    ['a short signature', (t: string) => t.slice(0, -1)],
    ['a long signature', (t: string) => `${t}A`],
    ['padding', (t: string) => `${t}=`],
    ['a path', (t: string) => `${t}/x`],
    ['spaces', (t: string) => ` ${t}`],
  ])('when the token is malformed (%s), then it verifies as nothing', (_what, change) => {
    const token = typeof change === 'string' ? change : change(signWithdrawalToken(KEY, 42));
    expect(verifyWithdrawalToken(KEY, token)).toBeNull();
  });

  test('when an id is not a positive 32-bit integer, then signing refuses it', () => {
    for (const id of [0, -1, 1.5, 2_147_483_648]) expect(() => signWithdrawalToken(KEY, id)).toThrow(RangeError);
  });

  test('when the link is built, then it is the page under PUBLIC_BASE_URL, a base path kept', () => {
    const token = signWithdrawalToken(KEY, 7);
    expect(withdrawalUrl('https://coi.example', KEY, 7)).toBe(`https://coi.example/withdraw/${token}`);
    expect(withdrawalUrl('https://x.example/insurance/', KEY, 7)).toBe(`https://x.example/insurance/withdraw/${token}`);
  });
});

describe('whether a purchase offers the link', () => {
  const item = (buyerWithdrawal: boolean) => ({ cancellationTerms: { ...DEFAULT_CANCELLATION_TERMS, buyerWithdrawal } });
  test('when every item allows it, then yes; one that does not, or no item, then no', () => {
    expect(DEFAULT_CANCELLATION_TERMS.buyerWithdrawal).toBe(true);
    expect(withdrawalOffered([item(true), item(true)])).toBe(true);
    expect(withdrawalOffered([item(true), item(false)])).toBe(false);
    expect(withdrawalOffered([])).toBe(false);
  });
});

describe('the withdrawal page', () => {
  const offer: Extract<WithdrawalView, { kind: 'offer' }> = {
    kind: 'offer',
    purchaseId: 42,
    testMode: true,
    freeLookDays: 14,
    quote: {
      id: 'cq_0123456789abcdef01234567',
      method: 'pro_rata',
      currency: 'usd',
      premiumMinor: 4000,
      taxMinor: 480,
      platformFeeMinor: 0,
      totalMinor: 4480,
      expiresAt: new Date('2027-01-01T10:15:00Z'),
      endsPolicy: false,
      units: [
        {
          productName: 'Event <Liability>',
          kind: 'day',
          label: '2027-05-02',
          certificateNumber: 'COI-42-1-2-abcdef0123',
          premiumMinor: 2000,
          earnedMinor: 0,
          refundableMinor: 2240,
        },
      ],
    },
  };

  test('when the quote is shown, then the amount is in major units, each unit is listed, the form posts the quote to the page itself, and values are escaped', () => {
    const html = renderWithdrawalPage(offer);
    expect(html).toContain('<p class="total" id="refund-total" data-minor="4480">$44.80</p>');
    expect(html).toContain('premium $40.00, tax $4.80');
    expect(html).toContain('Event &lt;Liability&gt;');
    expect(html).not.toContain('<Liability>');
    expect(html).toContain('<td class="n">$22.40</td>');
    expect(html).toMatch(
      /<form method="post" id="withdraw-form">\s*<input type="hidden" name="quote" value="cq_0123456789abcdef01234567">/,
    );
    expect(html).not.toMatch(/<form[^>]*action=/);
    expect(html).toContain('<button type="submit" id="confirm">Confirm withdrawal</button>');
    expect(html).toContain('2027-01-01 10:15 UTC');
    expect(html).toContain('Test mode');
    expect(html).not.toContain('<script');
  });

  test("when the quote changed or the form was not the page's, then the page says so above the current quote", () => {
    expect(renderWithdrawalPage({ ...offer, notice: 'quote_changed' })).toContain('The amount changed since the page was opened');
    expect(renderWithdrawalPage({ ...offer, notice: 'form_invalid' })).toContain('was not sent from this page, so nothing was done');
    expect(renderWithdrawalPage({ ...offer, quote: { ...offer.quote, method: 'free_look' } })).toContain(
      'within the 14-day withdrawal period',
    );
    // A withdrawal within its period: everything of the cover not started, with no charge.
    expect(renderWithdrawalPage({ ...offer, quote: { ...offer.quote, method: 'withdrawal' } })).toContain(
      'You are within the 14-day withdrawal period: everything you paid for the cover that has not started comes back, with no charge.',
    );
  });

  test('when the withdrawal was made, then the page says received (or already used) with the refund and how it stands, and no form', () => {
    const c = {
      id: 7,
      status: 'refund_pending' as const,
      currency: 'usd',
      totalMinor: 4000,
      unitCount: 2,
      createdAt: new Date('2027-01-01T10:00:00Z'),
      completedAt: null,
    };
    const received = renderWithdrawalPage({ kind: 'withdrawn', purchaseId: 42, testMode: false, outcome: 'confirmed', cancellation: c });
    expect(received).toContain('<h1>Withdrawal received</h1>');
    expect(received).toContain('The refund of $40.00 is on its way');
    expect(received).not.toContain('<form');
    const used = renderWithdrawalPage({
      kind: 'withdrawn',
      purchaseId: 42,
      testMode: false,
      outcome: 'already_used',
      cancellation: { ...c, status: 'completed' },
    });
    expect(used).toContain('This withdrawal link was already used');
    expect(used).toContain('$40.00 was refunded');
  });

  test.each([
    [{ kind: 'nothing_left', purchaseId: 1, testMode: false, refundedInFull: false }, 'Nothing left to withdraw from'],
    [{ kind: 'nothing_left', purchaseId: 1, testMode: false, refundedInFull: true }, 'refunded in full'],
    [{ kind: 'not_offered', purchaseId: 1, testMode: false }, 'Online withdrawal is not offered for this purchase'],
    [{ kind: 'not_cancellable', purchaseId: 1, testMode: false }, 'has not been paid'],
    [{ kind: 'busy', purchaseId: 1, testMode: false }, 'taking longer than usual'],
  ] as [WithdrawalView, string][])('when the state is %o, then the page says "%s" and offers no form', (v, text) => {
    const html = renderWithdrawalPage(v);
    expect(html).toContain(text);
    expect(html).not.toContain('<form');
  });

  test('when the link is not valid, then the page names no purchase', () => {
    expect(renderWithdrawalPage({ kind: 'not_found' })).toBe(renderWithdrawalNotFound());
    expect(renderWithdrawalNotFound()).not.toMatch(/[Pp]urchase \d/);
  });

  test('when the complete page has a withdrawal link, then it shows it labelled as the withdrawal function; without one, nothing', () => {
    const base: ReturnPageView = {
      purchase_id: 42,
      state: 'issued',
      purchase_status: 'issued',
      final: true,
      refresh_after_seconds: null,
      test_mode: false,
      paid_at: null,
      certificates_issued_at: null,
      certificates: [],
      proofs_of_coverage: [],
      withdrawal_url: 'https://coi.example/withdraw/w1.42.x&y',
      checked_at: '2027-01-01T00:00:00.000Z',
    };
    expect(renderCompletePage(base)).toContain(
      '<a id="withdrawal-link" href="https://coi.example/withdraw/w1.42.x&amp;y">Withdraw from contract here</a>',
    );
    expect(renderCompletePage({ ...base, withdrawal_url: null })).not.toContain('withdrawal-link');
  });
});
