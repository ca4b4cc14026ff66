/**
 * The checkout-link email (spec §4.4 step 3 (b)): amounts from minor units, HTML escaping.
 */
import { checkoutLinkEmail, formatMinorUnits } from '../../src/payments/checkout-link-email';

describe('checkout link email', () => {
  test('when amounts are minor units, then they are shown in the currency’s major units', () => {
    expect(formatMinorUnits(4000, 'usd')).toBe('$40.00');
    expect(formatMinorUnits(1250, 'eur')).toBe('€12.50');
    expect(formatMinorUnits(500, 'jpy')).toBe('¥500'); // zero-decimal currency
  });

  test('when names contain markup, then the HTML part escapes them and the text part keeps them', () => {
    const mail = checkoutLinkEmail({
      to: 'a@example.com',
      buyerFirstName: '<b>Ann</b>',
      sellerName: 'Smith & Co',
      purchaseId: 7,
      lines: [{ name: 'Trip cover', units: 1, isTripExcess: true }],
      amountMinor: 999,
      currency: 'usd',
      url: 'https://pay.example/c/cs_1?a=1&b=2',
      expiresAt: '2027-01-01T00:00:00.000Z',
    });
    expect(mail.subject).toBe('Complete your insurance purchase: $9.99');
    expect(mail.text).toContain('Hello <b>Ann</b>,');
    expect(mail.text).toContain('Trip cover (1 trip)');
    expect(mail.html).toContain('Hello &lt;b&gt;Ann&lt;/b&gt;,');
    expect(mail.html).toContain('Smith &amp; Co');
    expect(mail.html).toContain('href="https://pay.example/c/cs_1?a=1&amp;b=2"');
  });
});
