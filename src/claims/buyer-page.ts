/**
 * The HTML of the buyer's claim page (`/claim/<token>`), in the withdrawal page's shell (no
 * script, inline CSS, every value escaped). The form follows the GOV.UK design system's patterns:
 * each field a visible label with a hint, a mistake shown above its field (prefixed "Error:" for
 * screen readers, the field marked `aria-invalid` and described by it), and the error summary
 * ("There is a problem", the portal's component) at the top linking to each field. Amounts are
 * shown in the currency's major units from integer minor units.
 */
import { render } from 'preact-render-to-string';
import { escapeHtml } from '../pdf/certificate-format';
import { formatMinorUnits } from '../payments/checkout-link-email';
import { errorSummary, mistakesOf } from '../http/error-summary';
import { page, testModeBanner } from '../withdrawals/page';
import type { BuyerClaimView, ClaimFormField, FiledClaim } from './buyer-service';

const STYLE = `
.error-summary{padding:.75rem 1rem;border:4px solid #a4000f;margin:0 0 1rem}
.error-summary h2{margin:0 0 .5rem;font-size:1.1rem}.error-summary ul{margin:0;padding-left:1.25rem}
.error-summary a{color:#a4000f;font-weight:600}
.field{margin:0 0 1.1rem}.field.invalid{border-left:4px solid #a4000f;padding-left:.75rem}
label,legend{display:block;font-weight:700;margin-bottom:.2rem}
.hint{color:#4f5561;margin:0 0 .3rem;font-size:.92rem}
.error-message{color:#a4000f;font-weight:700;margin:0 0 .3rem}
input,select,textarea{font:inherit;border:2px solid #1d1f23;border-radius:0;padding:.35rem .4rem;max-width:100%;box-sizing:border-box;background:#fff;color:#1d1f23}
input:focus,select:focus,textarea:focus{outline:3px solid #fd0;outline-offset:0;box-shadow:inset 0 0 0 2px}
.invalid input,.invalid select,.invalid textarea{border-color:#a4000f}
textarea{width:100%;min-height:7rem}fieldset{border:0;padding:0;margin:0 0 1.1rem}
.inline{display:flex;gap:1rem;flex-wrap:wrap}.inline label{font-weight:400}
.submit{background:#00703c}
.vh{position:absolute!important;width:1px!important;height:1px!important;margin:0!important;overflow:hidden!important;clip:rect(0 0 0 0)!important;white-space:nowrap!important}`;

/** The field ids of the form, by field name (the summary's links go there). */
const FIELD_IDS: Record<ClaimFormField, string> = {
  covered_unit: 'covered-unit',
  incident_date: 'incident-date',
  incident_time: 'incident-time',
  claim_type: 'claim-type',
  description: 'description',
  name: 'name',
  email: 'email',
  phone: 'phone',
  amount: 'amount',
};

const STATUS_TEXT: Record<string, string> = {
  submitted: 'Received, waiting for the insurer',
  acknowledged: 'Acknowledged by the insurer',
  under_review: 'Being reviewed',
  approved: 'Approved',
  denied: 'Declined',
  paid: 'Paid',
  closed: 'Closed',
  reopened: 'Reopened',
};

/** `property_damage` → "Property damage". */
export const claimTypeLabel = (t: string) => (t.charAt(0).toUpperCase() + t.slice(1)).replace(/_/g, ' ');
const money = (minor: number, currency: string) => escapeHtml(formatMinorUnits(minor, currency));
const day = (d: Date) => d.toISOString().slice(0, 10);

type FormView = Extract<BuyerClaimView, { kind: 'form' }>;

/** One field: label, hint, its mistake, and the control `control(id, describedBy, invalid)` makes. */
function field(v: FormView, name: ClaimFormField, label: string, hint: string, control: (id: string, attrs: string) => string): string {
  const id = FIELD_IDS[name];
  const error = v.errors[name];
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const attrs = `id="${id}" name="${name}"${described ? ` aria-describedby="${described}"` : ''}${error ? ' aria-invalid="true"' : ''}`;
  return `<div class="field${error ? ' invalid' : ''}"><label for="${id}">${escapeHtml(label)}</label>
${hint ? `<p class="hint" id="${id}-hint">${escapeHtml(hint)}</p>` : ''}${error ? `<p class="error-message" id="${id}-error"><span class="vh">Error:</span> ${escapeHtml(error)}</p>` : ''}${control(id, attrs)}</div>`;
}

const valueOf = (v: FormView, name: ClaimFormField) => escapeHtml(v.values[name] ?? '');
const option = (value: string, label: string, selected: boolean) =>
  `<option value="${escapeHtml(value)}"${selected ? ' selected' : ''}>${escapeHtml(label)}</option>`;

function claimsList(claims: FiledClaim[]): string {
  if (claims.length === 0) return '';
  const rows = claims
    .map(
      (c) =>
        `<tr><td>${c.id}</td><td>${escapeHtml(c.unitLabel)}</td><td>${escapeHtml(claimTypeLabel(c.claimType))}</td><td class="n">${money(c.amountMinor, c.currency)}</td><td>${escapeHtml(STATUS_TEXT[c.status] ?? c.status)}</td></tr>`,
    )
    .join('');
  return `<h2>Your claims on this purchase</h2>
<table id="claims"><thead><tr><th scope="col">Claim</th><th scope="col">Cover</th><th scope="col">Kind</th><th scope="col" class="n">Claimed</th><th scope="col">Status</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function formPage(v: FormView): string {
  const summary = errorSummary(mistakesOf(v.errors, FIELD_IDS, v.formError));
  const zones = [...new Set(v.units.map((u) => u.timeZone))].join(', ');
  const body = `${testModeBanner(v)}${summary ? render(summary) : ''}<h1>Make a claim on your insurance</h1>
<p>Purchase ${v.purchaseId}. Tell us what happened; the insurer acknowledges your claim and may contact you for photos or receipts.</p>
<form method="post" id="claim-form" novalidate>
<input type="hidden" name="submission" value="${v.nonce}">
${field(v, 'covered_unit', 'Which cover is the claim about?', 'The day or trip of cover in which the incident happened', (_id, a) => `<select ${a}>${option('', 'Select the cover', !v.values.covered_unit)}${v.units.map((u) => option(String(u.id), `${u.productName}: ${u.label}`, v.values.covered_unit === String(u.id))).join('')}</select>`)}
${field(v, 'incident_date', 'Date of the incident', 'For example 2027-05-01', (_id, a) => `<input type="date" ${a} value="${valueOf(v, 'incident_date')}" autocomplete="off">`)}
${field(v, 'incident_time', 'Time of the incident', `Local time where the cover is (${zones}), for example 19:30`, (_id, a) => `<input type="time" ${a} value="${valueOf(v, 'incident_time')}" autocomplete="off">`)}
${field(v, 'claim_type', 'What kind of loss was it?', '', (_id, a) => `<select ${a}>${option('', 'Select the kind of loss', !v.values.claim_type)}${v.claimTypes.map((t) => option(t, claimTypeLabel(t), v.values.claim_type === t)).join('')}</select>`)}
${field(v, 'description', 'What happened?', 'What was lost or damaged, and how', (_id, a) => `<textarea ${a} maxlength="4000">${valueOf(v, 'description')}</textarea>`)}
${field(v, 'amount', `Amount you are claiming (${v.currency.toUpperCase()})`, 'For example 1250.00', (_id, a) => `<input type="text" ${a} inputmode="decimal" value="${valueOf(v, 'amount')}" size="14" autocomplete="off">`)}
<h2>How the insurer can contact you</h2>
${field(v, 'name', 'Full name', '', (_id, a) => `<input type="text" ${a} value="${valueOf(v, 'name')}" autocomplete="name" size="30">`)}
${field(v, 'email', 'Email address', '', (_id, a) => `<input type="email" ${a} value="${valueOf(v, 'email')}" autocomplete="email" spellcheck="false" size="30">`)}
${field(v, 'phone', 'Phone number (optional)', '', (_id, a) => `<input type="tel" ${a} value="${valueOf(v, 'phone')}" autocomplete="tel" size="20">`)}
<p><button type="submit" class="submit" id="submit">Submit claim</button></p>
</form>
${claimsList(v.claims)}`;
  return page(`${summary ? 'Error: ' : ''}Make a claim – purchase ${v.purchaseId}`, body, STYLE);
}

function filedPage(v: Extract<BuyerClaimView, { kind: 'filed' }>): string {
  const c = v.claim;
  return page(
    `Claim received – purchase ${v.purchaseId}`,
    `${testModeBanner(v)}<h1>Claim received</h1>
<div class="state" id="state" data-state="filed" data-claim="${c.id}">Your claim number is ${c.id}</div>
<p id="intro">${v.again ? 'This claim was already received; nothing more was sent.' : 'We have sent your claim to the insurer.'} Claim of ${money(c.amountMinor, c.currency)} for ${escapeHtml(claimTypeLabel(c.claimType).toLowerCase())} on ${escapeHtml(c.unitLabel)}.</p>
<p>The insurer acknowledges it by ${escapeHtml(day(c.acknowledgementDueAt))} and may contact you for photos or receipts. Keep this link: it lists your claims and how they stand.</p>`,
    STYLE,
  );
}

const INFO = {
  not_paid: {
    title: 'Nothing to claim on yet',
    text: 'This purchase has not been paid, so there is no cover to claim on.',
  },
  no_cover: {
    title: 'No cover to claim on',
    text: 'The cover of this purchase was cancelled, so no claim can be made on it here. Contact your agent.',
  },
};

/** The HTML of view `v`. */
export function renderClaimPage(v: BuyerClaimView): string {
  switch (v.kind) {
    case 'form':
      return formPage(v);
    case 'filed':
      return filedPage(v);
    case 'not_paid':
    case 'no_cover':
      return page(
        `${INFO[v.kind].title} – purchase ${v.purchaseId}`,
        `${testModeBanner(v)}<h1>${INFO[v.kind].title}</h1><p id="state" data-state="${v.kind}">${INFO[v.kind].text}</p>`,
      );
    case 'not_found':
      return page(
        'Link not valid',
        '<h1>This claim link is not valid</h1><p id="state" data-state="not_found">Check that the whole link was opened, or ask your agent.</p>',
      );
  }
}

/** The answer to a form sent from another site (nothing is looked at). */
export function renderClaimCrossSiteRefusal(): string {
  return page(
    'Claim refused',
    '<h1>Claim refused</h1><p id="state" data-state="refused">A claim can only be sent from its own page. Open your claim link again and send it there.</p>',
  );
}
