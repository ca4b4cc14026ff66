/**
 * The HTML of the buyer's withdrawal page (`/withdraw/<token>`), in the checkout return pages'
 * style: small documents that load nothing (inline CSS; CSP `default-src 'none'`), run no script
 * and escape every value. The offer shows the quote (each covered unit with what the insurer
 * keeps and what comes back, and the total in the currency's major units, e.g. "$40.00", from
 * integer minor units) and one form, posted to the page's own URL, whose button is the
 * confirmation ("Confirm withdrawal"); the wording follows the EU withdrawal function's labels.
 */
import { escapeHtml } from '../pdf/certificate-format';
import { formatMinorUnits } from '../payments/checkout-link-email';
import type { WithdrawalView } from './service';

const STYLE = `body{font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d1f23}
main{max-width:42rem;margin:2rem auto;background:#fff;border:1px solid #d9dce1;border-radius:8px;padding:1.5rem}
h1{font-size:1.25rem;margin:0 0 .5rem}h2{font-size:1rem;margin:1.25rem 0 .5rem}
.state{font-size:1.2rem;font-weight:700;margin:.75rem 0}
table{border-collapse:collapse;width:100%;font-size:.92rem}th,td{text-align:left;padding:.35rem .4rem;border-top:1px solid #e4e6ea}td.n,th.n{text-align:right}
.total{font-size:1.35rem;font-weight:700;margin:.5rem 0}
.notice{background:#fff3cd;border:1px solid #e0c46c;padding:.5rem .7rem;border-radius:4px;margin:0 0 1rem}
.specimen{background:#fff3cd;border:1px solid #e0c46c;padding:.4rem .6rem;border-radius:4px;margin-bottom:1rem}
button{font:inherit;font-weight:700;background:#b3261e;color:#fff;border:0;border-radius:6px;padding:.7rem 1.2rem;cursor:pointer}
button:focus{outline:3px solid #1d1f23;outline-offset:2px}
small{color:#5b6270}`;

/**
 * A whole buyer page (this one, and the claim page of src/claims/buyer-page.ts): `title`, `body`
 * (HTML, escaped by the caller) in the pages' one column, and `extraStyle` (CSS) after the shared style.
 */
export function page(title: string, body: string, extraStyle = ''): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title><style>${STYLE}${extraStyle}</style></head>
<body><main>${body}</main></body></html>
`;
}

const money = (minor: number, currency: string) => escapeHtml(formatMinorUnits(minor, currency));
const utc = (d: Date) => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** The test-mode notice at the top of a buyer page of a test purchase ('' otherwise). */
export function testModeBanner(v: { testMode: boolean }): string {
  return v.testMode
    ? '<div class="specimen" id="test-mode">Test mode: no real money moves and the cover is a specimen, not real insurance.</div>'
    : '';
}

/** How the refund was worked out, in a sentence. */
function methodText(method: string, freeLookDays: number): string {
  switch (method) {
    case 'withdrawal':
      return 'You are within the 14-day withdrawal period: everything you paid for the cover that has not started comes back, with no charge. Cover that has already started, at your request, stays in force and is not refunded.';
    case 'free_look':
      return `You are within the ${freeLookDays}-day withdrawal period and no cover has started yet: everything you paid for it comes back.`;
    case 'pro_rata':
      return 'Each day or trip whose cover has not started comes back at its share of the premium. Cover that has already started is not refunded and stays in force.';
    case 'short_rate':
      return 'Each day or trip whose cover has not started comes back at its share of the premium, less the short-rate charge of your policy terms. Cover that has already started is not refunded and stays in force.';
    default:
      return 'Your policy terms give no refund outside the withdrawal period: withdrawing ends the cover that has not started, and nothing comes back.';
  }
}

function offerPage(v: Extract<WithdrawalView, { kind: 'offer' }>): string {
  const q = v.quote;
  const notice =
    v.notice === 'quote_changed'
      ? '<p class="notice" id="notice" role="status">The amount changed since the page was opened (the quote expired, or some cover started or was cancelled). Here is the current one: check it and confirm again.</p>'
      : v.notice === 'form_invalid'
        ? '<p class="notice" id="notice" role="status">That confirmation was not sent from this page, so nothing was done. Check the amount below and confirm here.</p>'
        : '';
  const rows = q.units
    .map(
      (u) =>
        `<tr><td>${escapeHtml(u.productName)}</td><td>${escapeHtml(u.label)}</td><td>${escapeHtml(u.certificateNumber ?? '—')}</td><td class="n">${money(u.premiumMinor, q.currency)}</td><td class="n">${money(u.refundableMinor, q.currency)}</td></tr>`,
    )
    .join('');
  const split = [
    `premium ${money(q.premiumMinor, q.currency)}`,
    ...(q.taxMinor > 0 ? [`tax ${money(q.taxMinor, q.currency)}`] : []),
    ...(q.platformFeeMinor > 0 ? [`fee ${money(q.platformFeeMinor, q.currency)}`] : []),
  ].join(', ');
  return page(
    `Withdraw from your insurance – purchase ${v.purchaseId}`,
    `${testModeBanner(v)}${notice}<h1>Withdraw from your insurance contract</h1>
<p>Purchase ${v.purchaseId}. Withdrawing cancels the cover listed below, which has not started yet. Nothing changes until you press the button.</p>
<h2>What you get back</h2>
<p class="total" id="refund-total" data-minor="${q.totalMinor}">${money(q.totalMinor, q.currency)}</p>
<p><small>(${split}), paid back to the card you paid with.</small></p>
<p>${escapeHtml(methodText(q.method, v.freeLookDays))}</p>
<h2>Cover you withdraw from</h2>
<table id="units"><thead><tr><th scope="col">Product</th><th scope="col">Cover</th><th scope="col">Certificate</th><th scope="col" class="n">Price</th><th scope="col" class="n">Back to you</th></tr></thead><tbody>${rows}</tbody></table>
<p>${q.endsPolicy ? 'No cover of this purchase stays in force afterwards.' : 'Cover that has started stays in force.'} The certificates of the cover you withdraw from become void.</p>
<form method="post" id="withdraw-form">
<input type="hidden" name="quote" value="${escapeHtml(q.id)}">
<p><button type="submit" id="confirm">Confirm withdrawal</button></p>
</form>
<p><small>This amount holds until ${escapeHtml(utc(q.expiresAt))}; after that this page shows the current one.</small></p>`,
  );
}

/** What the withdrawal's status means for the buyer. */
function statusText(c: Extract<WithdrawalView, { kind: 'withdrawn' }>['cancellation']): string {
  const amount = formatMinorUnits(c.totalMinor, c.currency);
  if (c.status === 'refund_failed')
    return `The refund of ${amount} could not be made automatically. Your agent has been told and will arrange it; your withdrawal stands.`;
  if (c.totalMinor === 0)
    return c.status === 'completed'
      ? 'Your policy terms gave nothing back. The cover is cancelled and its certificates are void.'
      : 'Your policy terms give nothing back. The cover is being cancelled.';
  if (c.status === 'completed')
    return `${amount} was refunded to the card you paid with. The cover is cancelled and its certificates are void.`;
  return `The refund of ${amount} is on its way to the card you paid with. Once the payment processor confirms it, the cover is cancelled and its certificates become void.`;
}

function withdrawnPage(v: Extract<WithdrawalView, { kind: 'withdrawn' }>): string {
  const c = v.cancellation;
  const heading = v.outcome === 'already_used' ? 'This withdrawal link was already used' : 'Withdrawal received';
  const intro =
    v.outcome === 'already_used'
      ? 'You already withdrew from this contract through this link, so nothing more was done.'
      : `You withdrew from this contract on ${utc(c.createdAt)} (${c.unitCount} ${c.unitCount === 1 ? 'day or trip' : 'days or trips'} of cover). Your agent has been told.`;
  return page(
    `${heading} – purchase ${v.purchaseId}`,
    `${testModeBanner(v)}<h1>${escapeHtml(heading)}</h1>
<div class="state" id="state" data-state="withdrawn" data-status="${escapeHtml(c.status)}">Purchase ${v.purchaseId}: withdrawn</div>
<p id="intro">${escapeHtml(intro)}</p>
<p id="status">${escapeHtml(statusText(c))}</p>
<p><small>Keep this page or its link: it always shows how your withdrawal stands.</small></p>`,
  );
}

const INFO: Record<'not_offered' | 'not_cancellable' | 'busy', { title: string; text: string }> = {
  not_offered: {
    title: 'Online withdrawal is not offered for this purchase',
    text: 'The terms of this insurance do not provide for withdrawing online. To cancel, contact your agent.',
  },
  not_cancellable: {
    title: 'Nothing to withdraw from yet',
    text: 'This purchase has not been paid, so there is no contract to withdraw from. Nothing was charged.',
  },
  busy: {
    title: 'Your withdrawal is taking longer than usual',
    text: 'We could not confirm it yet. Reload this page in a minute to see whether it went through; a withdrawal is never made twice.',
  },
};

/** The HTML of view `v` (the 404 page for `not_found`). */
export function renderWithdrawalPage(v: WithdrawalView): string {
  switch (v.kind) {
    case 'offer':
      return offerPage(v);
    case 'withdrawn':
      return withdrawnPage(v);
    case 'nothing_left': {
      const text = v.refundedInFull
        ? 'This purchase was refunded in full: nothing is left to withdraw from.'
        : 'Nothing is left to withdraw from: the cover of this purchase has started or was already cancelled. Cover that has started cannot be withdrawn from online; contact your agent.';
      return page(
        `Nothing left to withdraw from – purchase ${v.purchaseId}`,
        `${testModeBanner(v)}<h1>Nothing left to withdraw from</h1><p id="state" data-state="nothing_left">${escapeHtml(text)}</p>`,
      );
    }
    case 'not_offered':
    case 'not_cancellable':
    case 'busy': {
      const w = INFO[v.kind];
      return page(
        `${w.title} – purchase ${v.purchaseId}`,
        `${testModeBanner(v)}<h1>${escapeHtml(w.title)}</h1><p id="state" data-state="${v.kind}">${escapeHtml(w.text)}</p>`,
      );
    }
    case 'not_found':
      return renderWithdrawalNotFound();
  }
}

/** The one answer for a forged, damaged or unknown link: says nothing about any purchase. */
export function renderWithdrawalNotFound(): string {
  return page(
    'Link not valid',
    '<h1>This withdrawal link is not valid</h1><p id="state" data-state="not_found">Check that the whole link was opened, or ask your agent.</p>',
  );
}

/** The answer to a confirmation sent from another site (no purchase is looked at). */
export function renderCrossSiteRefusal(): string {
  return page(
    'Confirmation refused',
    '<h1>Confirmation refused</h1><p id="state" data-state="refused">A withdrawal can only be confirmed on its own page. Open your withdrawal link again and confirm there.</p>',
  );
}
