/**
 * The checkout-link email of spec §4.4 step 3 (b): who sells, what is bought, the amount, the
 * link and until when it can be paid. Pure (no I/O), so it is cheap to test and to change.
 * Amounts arrive in minor units and are shown in the currency's major units ("$40.00").
 */
import type { MailMessage } from '../mail/mailer';

export interface CheckoutLinkEmailInput {
  to: string;
  buyerFirstName: string;
  sellerName: string;
  purchaseId: number;
  lines: { name: string; units: number; isTripExcess: boolean }[];
  amountMinor: number;
  currency: string;
  url: string;
  /** ISO 8601. */
  expiresAt: string;
}

/** Minor units → a display amount in `currency` (1250, 'usd' → "$12.50"; zero-decimal currencies too). */
export function formatMinorUnits(minor: number, currency: string): string {
  const format = new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(minor / 10 ** digits);
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const unitsLabel = (l: CheckoutLinkEmailInput['lines'][number]) =>
  `${l.units} ${l.isTripExcess ? 'trip' : 'day'}${l.units === 1 ? '' : 's'}`;

/** Builds the message: plain text and HTML with the same content. */
export function checkoutLinkEmail(i: CheckoutLinkEmailInput): MailMessage {
  const amount = formatMinorUnits(i.amountMinor, i.currency);
  const expires = new Date(i.expiresAt).toUTCString();
  const items = i.lines.map((l) => `${l.name} (${unitsLabel(l)})`);
  const text = [
    `Hello ${i.buyerFirstName},`,
    '',
    `${i.sellerName} has prepared your insurance purchase #${i.purchaseId}:`,
    ...items.map((x) => `  - ${x}`),
    '',
    `Total: ${amount}`,
    '',
    `Pay securely here: ${i.url}`,
    '',
    `The link can be paid until ${expires}. Your certificates of insurance are issued once the payment is confirmed.`,
  ].join('\n');
  const html = [
    `<p>Hello ${escapeHtml(i.buyerFirstName)},</p>`,
    `<p>${escapeHtml(i.sellerName)} has prepared your insurance purchase #${i.purchaseId}:</p>`,
    `<ul>${items.map((x) => `<li>${escapeHtml(x)}</li>`).join('')}</ul>`,
    `<p><strong>Total: ${escapeHtml(amount)}</strong></p>`,
    `<p><a href="${escapeHtml(i.url)}">Pay securely</a></p>`,
    `<p>The link can be paid until ${escapeHtml(expires)}. Your certificates of insurance are issued once the payment is confirmed.</p>`,
  ].join('\n');
  return { to: i.to, subject: `Complete your insurance purchase: ${amount}`, text, html };
}
