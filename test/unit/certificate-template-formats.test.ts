/**
 * The certificate template's money and time zone checks (src/pdf/certificate-template.ts), which
 * keep the formats they make: the same answers on every call, and a bad currency or zone refused
 * every time, not only the first.
 */
import { renderCertificateHtml, type CertificateData } from '../../src/pdf/certificate-template';
import { CertificateTemplateError, formatMoneyMinor } from '../../src/pdf/certificate-format';
import { certificateData } from '../helpers/certificate-data';

/** The shared certificate on `timeZone`. */
function certificate(timeZone: string): CertificateData {
  const d = certificateData();
  return certificateData({ coverage: { ...d.coverage, timeZone } });
}

describe('certificate template formats', () => {
  test('money in minor units, with each currency’s own minor digits, the same on every call', () => {
    for (let i = 0; i < 3; i++) {
      expect(formatMoneyMinor({ amount_minor: 100_000_000, currency: 'USD' })).toBe('$1,000,000.00');
      expect(formatMoneyMinor({ amount_minor: 5000, currency: 'JPY' })).toBe('¥5,000');
      expect(formatMoneyMinor({ amount_minor: 1234, currency: 'KWD' })).toBe('KWD\u00a01.234');
      expect(formatMoneyMinor({ amount_minor: 1999, currency: 'EUR' }, 'de-DE')).toBe('19,99\u00a0€');
      expect(formatMoneyMinor({ amount_minor: 1999, currency: 'EUR' })).toBe('€19.99');
    }
  });

  test('an unknown currency or a non-integer amount is refused on every call', () => {
    for (let i = 0; i < 2; i++) {
      expect(() => formatMoneyMinor({ amount_minor: 100, currency: 'DOLLARS' })).toThrow(CertificateTemplateError);
      expect(() => formatMoneyMinor({ amount_minor: 100, currency: 'DOLLARS' })).toThrow('unknown currency "DOLLARS"');
      expect(() => formatMoneyMinor({ amount_minor: 1.5, currency: 'USD' })).toThrow('amount_minor must be an integer');
    }
  });

  test('a known time zone prints on every call; an unknown one is refused on every call', async () => {
    for (let i = 0; i < 2; i++) {
      await expect(renderCertificateHtml(certificate('America/New_York'))).resolves.toContain('America/New_York');
      await expect(renderCertificateHtml(certificate('Mars/Olympus_Mons'))).rejects.toThrow('unknown IANA time zone "Mars/Olympus_Mons"');
    }
  });
});
