/**
 * The certificate template's pure helpers (src/pdf/certificate-template.ts): HTML escaping and
 * the `html` tagged template that escapes every interpolated value, free text with its line
 * breaks, money in minor units, IANA time zone checks, local date-times, and the error all of
 * them throw for data that cannot make a certificate. No markup of the certificate itself here.
 */

/** A money amount in integer minor units of an ISO 4217 currency (e.g. 150000 USD = $1,500.00). */
export interface MoneyMinor {
  /** Integer amount in the currency's minor units (cents for USD, yen for JPY). */
  amount_minor: number;
  /** ISO 4217 code, e.g. `USD`. */
  currency: string;
}

/**
 * The data cannot make a certificate (unknown currency, non-integer amount, unknown time zone,
 * no insurer). A template error is not worth retrying (issue 6: "a template error is not").
 */
export class CertificateTemplateError extends Error {
  override name = 'CertificateTemplateError';
}

/** Markup that is already safe; only the `html` tag and `raw` of constants create it. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/**
 * Escapes `value` for HTML text and double- or single-quoted attribute values: `& < > " '`.
 * Numbers are converted with `String`. This is the one escaping function of the template.
 */
export function escapeHtml(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

type HtmlValue = string | number | SafeHtml | HtmlValue[] | undefined;

/** Tagged template: every interpolation is escaped unless it is itself `html` output. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}

function render(value: HtmlValue): string {
  if (value === undefined) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(value);
}

/** Free text with its line breaks kept as `<br>` (each line escaped). */
export function lines(text: string | undefined): SafeHtml {
  if (!text) return html``;
  return html`${text.split(/\r\n|\r|\n/).map((line, i) => (i === 0 ? html`${line}` : html`<br>${line}`))}`;
}

/**
 * Currency formats by locale and currency code, made once each: a certificate formats each of
 * its limits and its deductible, and constructing an `Intl.NumberFormat` is about 40 µs against
 * under 1 µs to format with one (the worker's profile at 8 purchases/s: 0.7 ms per purchase in
 * these constructors and the time zone check's). Bounded: a currency code is three letters, and
 * only codes that format are kept.
 */
const moneyFormats = new Map<string, { format: Intl.NumberFormat; digits: number }>();

/**
 * Formats integer minor units as money, e.g. `{ amount_minor: 100000000, currency: 'USD' }` →
 * `$1,000,000.00`, `{ amount_minor: 5000, currency: 'JPY' }` → `¥5,000`. Uses the currency's
 * own number of minor digits. Throws `CertificateTemplateError` for a non-integer amount or an
 * unknown currency code.
 */
export function formatMoneyMinor(money: MoneyMinor, locale = 'en-US'): string {
  if (!Number.isSafeInteger(money.amount_minor)) {
    throw new CertificateTemplateError(`amount_minor must be an integer, got ${money.amount_minor}`);
  }
  const key = `${locale}\u0000${money.currency}`;
  let entry = moneyFormats.get(key);
  if (!entry) {
    let format: Intl.NumberFormat;
    try {
      format = new Intl.NumberFormat(locale, { style: 'currency', currency: money.currency });
    } catch {
      throw new CertificateTemplateError(`unknown currency ${JSON.stringify(money.currency)}`);
    }
    entry = { format, digits: format.resolvedOptions().maximumFractionDigits ?? 2 };
    moneyFormats.set(key, entry);
  }
  return entry.format.format(money.amount_minor / 10 ** entry.digits);
}

/** IANA time zones already found valid (a bounded set: only names the runtime knows are kept). */
const knownTimeZones = new Set<string>();

/** Throws `CertificateTemplateError` unless `zone` is an IANA time zone the runtime knows. */
export function assertTimeZone(zone: string): void {
  if (knownTimeZones.has(zone)) return;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    throw new CertificateTemplateError(`unknown IANA time zone ${JSON.stringify(zone)}`);
  }
  knownTimeZones.add(zone);
}

/** `2026-03-07T00:00` → `2026-03-07 00:00` (seconds dropped); other text is printed as given. */
export function localDateTime(value: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(value);
  return m ? `${m[1]} ${m[2]}` : value;
}

/** `text` cut into its lines, at `\n`, `\r\n` or `\r`. */
export function splitLines(text: string): string[] {
  return text.split(/\r\n|\r|\n/);
}

/** How a certificate prints its dates (see `CertificateData.dateOrder`). */
export type DateOrder = 'mdy' | 'dmy' | 'iso';

/** `YYYY-MM-DD…` with its date part reordered for `order` (other text as given); the time, if any, kept after a space. */
export function orderedDate(value: string, order: DateOrder | undefined): string {
  const text = localDateTime(value);
  const m = /^(\d{4})-(\d{2})-(\d{2})(.*)$/.exec(text);
  if (!m || !order || order === 'iso') return text;
  const [, y, mo, d, rest] = m;
  return `${order === 'mdy' ? `${mo}/${d}` : `${d}/${mo}`}/${y}${rest}`;
}
