/**
 * The HTML of the buyer's return pages: small readable documents in the verification page's
 * style. Every value is HTML-escaped; the pages load nothing (inline CSS, CSP
 * `default-src 'none'`) and run no script: while the purchase can still move on, the complete
 * page reloads itself with `<meta http-equiv="refresh">`.
 */
import { escapeHtml } from '../pdf/certificate-format';
import { REFRESH_SECONDS, type ReturnPageState, type ReturnPageView } from './service';

const STYLE = `body{font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d1f23}
main{max-width:40rem;margin:2rem auto;background:#fff;border:1px solid #d9dce1;border-radius:8px;padding:1.5rem}
h1{font-size:1.2rem;margin:0 0 .25rem}.state{font-size:1.35rem;font-weight:700;margin:.75rem 0}
h2{font-size:1rem;margin:1.25rem 0 .5rem}
table{border-collapse:collapse;width:100%;font-size:.92rem}th,td{text-align:left;padding:.35rem .4rem;border-top:1px solid #e4e6ea}
ul{padding-left:1.2rem}.specimen{background:#fff3cd;border:1px solid #e0c46c;padding:.4rem .6rem;border-radius:4px;margin-bottom:1rem}
small{color:#5b6270}`;

/** Headline and explanation of each state on the complete page. */
const COMPLETE_WORDS: Record<ReturnPageState, { title: string; text: string; colour: string }> = {
  awaiting_payment: {
    title: 'Waiting for payment confirmation',
    text: 'Thank you. We are waiting for the payment processor to confirm your payment; this usually takes a few seconds. This page updates itself.',
    colour: '#8a6d00',
  },
  issuing: {
    title: 'Paid: certificates being issued',
    text: 'Your payment is confirmed. Your certificates of insurance are being issued; this page updates itself when they are ready.',
    colour: '#8a6d00',
  },
  issued: {
    title: 'Paid: certificates ready',
    text: 'Your payment is confirmed and your certificates of insurance are issued.',
    colour: '#1b7f3b',
  },
  refunded: {
    title: 'Refunded: certificates voided',
    text: 'This purchase was refunded. Its certificates are void and show as voided on their verification pages.',
    colour: '#b3261e',
  },
  expired: {
    title: 'Checkout expired',
    text: 'The checkout expired before a payment was confirmed; nothing was charged. Ask your agent for a new checkout link.',
    colour: '#6b6b6b',
  },
  failed: {
    title: 'Payment not completed',
    text: 'The payment processor did not complete this purchase; nothing was charged. Ask your agent for a new checkout link.',
    colour: '#b3261e',
  },
};

function page(title: string, body: string, refresh: boolean): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><meta name="referrer" content="no-referrer">${refresh ? `<meta http-equiv="refresh" content="${REFRESH_SECONDS}">` : ''}
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>
`;
}

const testModeBanner = (v: ReturnPageView) =>
  v.test_mode
    ? '<div class="specimen" id="test-mode">Test mode: no real payment was taken and the certificates are specimens, not real coverage.</div>'
    : '';

function certificateList(v: ReturnPageView): string {
  if (v.certificates.length === 0) return '';
  const rows = v.certificates
    .map(
      (c) =>
        `<tr><td><a href="${escapeHtml(c.verification_url)}">${escapeHtml(c.certificate_number)}</a></td><td>${escapeHtml(c.product_name)}</td><td>${escapeHtml(c.coverage_label)}</td><td>${escapeHtml(c.named_insured_name ?? '—')}</td></tr>`,
    )
    .join('');
  const proofs = v.proofs_of_coverage
    .map(
      (p) =>
        `<li><a href="${escapeHtml(p.proof_of_coverage_url)}">${escapeHtml(p.product_name)}</a> (${p.certificate_count} certificate${p.certificate_count === 1 ? '' : 's'})</li>`,
    )
    .join('');
  return `<h2>Certificates</h2>
<p>Each number opens the certificate's public verification page. Your agent can send you the certificate PDFs.</p>
<table id="certificates"><thead><tr><th>Certificate</th><th>Product</th><th>Coverage</th><th>Named insured</th></tr></thead><tbody>${rows}</tbody></table>
${proofs ? `<h2>Proof of coverage</h2><p>One page per product showing all its certificates, to share with a venue or rental company.</p><ul id="proofs">${proofs}</ul>` : ''}`;
}

/**
 * The buyer's withdrawal link, labelled as the EU withdrawal function asks ("withdraw from
 * contract here"), when the purchase offers one.
 */
function withdrawalSection(v: ReturnPageView): string {
  if (!v.withdrawal_url) return '';
  return `<h2>Changed your mind?</h2>
<p>You can withdraw from this insurance online. The page shows what you would get back before you confirm anything. <a id="withdrawal-link" href="${escapeHtml(v.withdrawal_url)}">Withdraw from contract here</a></p>`;
}

/** `GET /checkout/complete`: the purchase's live status, its certificates once issued, and the withdrawal link once paid (when offered). */
export function renderCompletePage(v: ReturnPageView): string {
  const w = COMPLETE_WORDS[v.state];
  return page(
    `${w.title} – purchase ${v.purchase_id}`,
    `${testModeBanner(v)}<h1>Purchase ${v.purchase_id}</h1>
<div class="state" id="state" data-state="${v.state}" style="color:${w.colour}">${escapeHtml(w.title)}</div>
<p>${escapeHtml(w.text)}</p>
${certificateList(v)}
${withdrawalSection(v)}
<p><small>Checked ${escapeHtml(v.checked_at)} (UTC).${v.final ? '' : ` Refreshes every ${REFRESH_SECONDS} seconds.`}</small></p>`,
    !v.final,
  );
}

/** The status line of the cancelled page. */
const CANCELLED_STATUS: Record<ReturnPageState, string> = {
  awaiting_payment: 'not paid',
  issuing: 'paid, certificates being issued',
  issued: 'paid, certificates ready',
  refunded: 'refunded, certificates voided',
  expired: 'not paid, checkout expired',
  failed: 'not paid, purchase not completed',
};

/**
 * `GET /checkout/cancelled`: the buyer left the checkout without paying; says so, and what the
 * purchase's status is (a purchase paid after all says that), with a link to the complete page.
 */
export function renderCancelledPage(v: ReturnPageView, completePageUrl: string): string {
  const paid = v.state === 'issuing' || v.state === 'issued';
  const [title, text] = paid
    ? ['Paid after all', 'You left a checkout, but this purchase has been paid. Its status and certificates are on the purchase page.']
    : v.state === 'refunded'
      ? ['Refunded', 'This purchase was paid and then refunded; its certificates are void.']
      : [
          'Payment cancelled',
          `You cancelled the payment and nothing was charged. ${
            v.state === 'expired'
              ? 'The checkout has expired.'
              : v.state === 'failed'
                ? 'The purchase was not completed.'
                : 'No certificates are issued until the purchase is paid.'
          } To buy this cover, ask your agent for the checkout link.`,
        ];
  return page(
    `${title} – purchase ${v.purchase_id}`,
    `${testModeBanner(v)}<h1>Purchase ${v.purchase_id}</h1>
<div class="state" id="state" data-state="${v.state}">${escapeHtml(title)}</div>
<p>${escapeHtml(text)}</p>
<p>Status: <span id="status">${escapeHtml(CANCELLED_STATUS[v.state])}</span>. <a id="purchase-page" href="${escapeHtml(completePageUrl)}">Purchase page</a></p>
<p><small>Checked ${escapeHtml(v.checked_at)} (UTC).</small></p>`,
    false,
  );
}

/** The one answer for a missing or wrong token, an unknown purchase or a malformed link. */
export function renderNotFoundPage(): string {
  return page(
    'Purchase not found',
    '<h1>Purchase not found</h1><p>This link does not open a purchase. Check that the whole link was opened, or ask your agent.</p>',
    false,
  );
}
