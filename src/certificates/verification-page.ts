/**
 * The public verification page behind each certificate's QR code (issue 6): a small readable
 * HTML document saying whether coverage is valid, not yet valid, expired or voided (or, for a past
 * version of a certificate, superseded by which number on which day, with a link after what it
 * printed), with the coverage windows, product and named insured as that version printed them, and
 * nothing more personal. Every value is
 * HTML-escaped; the page loads nothing (inline CSS, CSP `default-src 'none'`). Below 36rem (a
 * phone, 320 px wide included) the coverage table shows each certificate as a block of labelled
 * lines, so the page never scrolls sideways (issue 53, item 9).
 *
 * With a verified signed proof (issue 50 item 3) the page also lists the facts the certificate's
 * token signs, under "Signature verified", beside the live status above; `renderProofRefusedPage`
 * is the page for a token that does not verify (it shows no status: nothing in it is proven).
 */
import { escapeHtml } from '../pdf/certificate-format';
import type { CoverageState, VerificationView } from './service';
import type { CertificateFacts, ProofRefused } from './signed-proof';
import { ERASED_NAME } from '../buyers/erasure-rules';

const WORDS: Record<CoverageState, { title: string; colour: string }> = {
  valid: { title: 'Valid: coverage is in force now', colour: '#1b7f3b' },
  not_yet_valid: { title: 'Not yet valid: coverage starts later', colour: '#8a6d00' },
  expired: { title: 'Expired: coverage has ended', colour: '#6b6b6b' },
  voided: { title: 'Voided: this coverage was cancelled', colour: '#b3261e' },
  superseded: { title: 'Superseded: a newer version of this certificate replaces it', colour: '#6b3fa0' },
};

const STYLE = `body{font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d1f23}
main{max-width:40rem;margin:2rem auto;background:#fff;border:1px solid #d9dce1;border-radius:8px;padding:1.5rem}
h1{font-size:1.2rem;margin:0 0 .25rem}.state{font-size:1.35rem;font-weight:700;margin:.75rem 0}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1rem;margin:1rem 0}dt{color:#5b6270}dd{margin:0}
table{border-collapse:collapse;width:100%;font-size:.92rem}th,td{text-align:left;padding:.35rem .4rem;border-top:1px solid #e4e6ea}
.specimen{background:#fff3cd;border:1px solid #e0c46c;padding:.4rem .6rem;border-radius:4px;margin-bottom:1rem}
small{color:#5b6270}
@media (max-width:36rem){main{margin:0;border:0;border-radius:0;padding:1rem}h1{overflow-wrap:anywhere}
thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}table,tbody,tr,td{display:block}
tr{border-top:1px solid #e4e6ea;padding:.35rem 0}td{border:0;padding:.1rem 0;overflow-wrap:anywhere}td::before{content:attr(data-label) ": ";color:#5b6270}}`;

function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>
`;
}

/** `2027-05-02` of an ISO instant (UTC), for "cancelled on". */
const dayOf = (iso: string) => iso.slice(0, 10);

/** Said on a certificate's page opened without a proof (the short printed link, an older link). */
const UNSIGNED =
  '<p id="unsigned"><small>This link carries no signed proof: the details above are the live records. Scan the certificate’s QR code to check the facts it printed.</small></p>';

/**
 * The signed facts as labelled lines (every value escaped). `erased`: the named insured's name
 * was erased on the buyer's request, so the name the token carries is not shown either (the
 * signature still covers it and verifies).
 */
function signedFacts(signed: { kid: string; facts: CertificateFacts }, erased: boolean): string {
  const f = signed.facts;
  const rows: Array<[string, string, string]> = [
    ['signed-certificate-number', 'Certificate number', f.certificate_number],
    ['signed-revision', 'Revision', String(f.revision)],
    ['signed-named-insured', 'Named insured', erased ? ERASED_NAME : f.named_insured_name],
    ['signed-holder', 'Certificate holder', f.certificate_holder_name ?? 'To whom it may concern'],
    ['signed-starts', 'Coverage starts (UTC)', f.coverage_starts_at],
    ['signed-ends', 'Coverage ends (UTC)', f.coverage_ends_at],
    ['signed-time-zone', 'Time zone', f.coverage_time_zone],
    ['signed-status', 'Status at issue', f.status === 'specimen' ? 'Specimen (test mode)' : 'Issued'],
    ['signed-issued-at', 'Issued', f.issued_at],
  ];
  return `<section id="signed-proof" data-kid="${escapeHtml(signed.kid)}"><h2 style="font-size:1.05rem;margin:1.25rem 0 .25rem">Signature verified</h2>
<p><small>The certificate's QR code carries these facts, signed by this service (key ${escapeHtml(signed.kid)}); the status above is live.</small></p>
<dl>${rows.map(([id, label, value]) => `<dt>${label}</dt><dd id="${id}">${escapeHtml(value)}</dd>`).join('')}</dl></section>`;
}

/** The page for a proof that does not verify: why, and what to do; no status, nothing as proven. */
export function renderProofRefusedPage(code: string, refused: Pick<ProofRefused, 'reason' | 'message'>): string {
  return page(
    'Signature not valid',
    `<h1>Signature not valid</h1>
<div class="state" id="state" data-state="refused" data-reason="${escapeHtml(refused.reason)}" style="color:#b3261e">This link does not prove a certificate: ${escapeHtml(refused.message)}.</div>
<p>Do not rely on the certificate that led here. Ask whoever gave it to you for the original, or look its number up yourself: ${escapeHtml(code)}.</p>`,
  );
}

/** The page of `v`, with the verified signed facts when the link carried a proof. */
export function renderVerificationPage(v: VerificationView, signed: { kid: string; facts: CertificateFacts } | null = null): string {
  const w = WORDS[v.state];
  const stateWords = (c: VerificationView['coverage'][number]) =>
    c.state === 'voided' && c.voided_at
      ? `Voided: cancelled on ${dayOf(c.voided_at)}, no coverage from then`
      : WORDS[c.state].title.split(':')[0]!;
  const rows = v.coverage
    .map(
      (c) =>
        `<tr><td data-label="Certificate">${escapeHtml(c.certificate_number)}</td><td data-label="Coverage starts">${escapeHtml(c.starts_local)}</td><td data-label="Coverage ends">${escapeHtml(c.ends_local)}</td><td data-label="State">${escapeHtml(stateWords(c))}</td></tr>`,
    )
    .join('');
  const voidedAt = v.coverage
    .map((c) => c.voided_at)
    .filter((d): d is string => d !== null)
    .sort()[0];
  const title =
    v.state === 'superseded' && v.superseded_by && v.superseded_at
      ? `Superseded by ${v.superseded_by} on ${dayOf(v.superseded_at)}`
      : v.state === 'voided' && voidedAt
        ? `Voided: cancelled on ${dayOf(voidedAt)}, no coverage from ${dayOf(voidedAt)}`
        : w.title;
  // A past version shows what it printed, then the version that replaced it, with a link.
  const successor =
    v.state === 'superseded' && v.superseded_by
      ? `<p id="superseded-by">Superseded by <a href="${escapeHtml(encodeURIComponent(v.superseded_by))}">${escapeHtml(v.superseded_by)}</a>${v.superseded_at ? ` on ${escapeHtml(dayOf(v.superseded_at))}` : ''}: this version is no longer proof of coverage; the dates above are the ones it certified.</p>`
      : '';
  return page(
    `${w.title.split(':')[0]} – ${v.code}`,
    `${v.test_mode ? '<div class="specimen">SPECIMEN: issued in test mode, not real coverage.</div>' : ''}
<h1>${v.kind === 'certificate' ? 'Certificate of insurance' : 'Proof of coverage'} ${escapeHtml(v.code)}</h1>
<div class="state" id="state" data-state="${v.state}" style="color:${w.colour}">${escapeHtml(title)}</div>
<dl><dt>Product</dt><dd id="product">${escapeHtml(v.product_name)}</dd>
<dt>Named insured</dt><dd id="named-insured">${escapeHtml(v.named_insured_name ?? '—')}</dd></dl>
<table><thead><tr><th>Certificate</th><th>Coverage starts</th><th>Coverage ends</th><th>State</th></tr></thead><tbody>${rows}</tbody></table>
${successor}${signed ? signedFacts(signed, v.named_insured_name === ERASED_NAME) : v.kind === 'certificate' ? UNSIGNED : ''}<p><small>Checked ${escapeHtml(v.checked_at)} (UTC).</small></p>`,
  );
}

export function renderNotFoundPage(): string {
  return page(
    'Certificate not found',
    `<h1>Certificate not found</h1><p>No certificate or proof of coverage has this number. Check the number on the certificate.</p>`,
  );
}
