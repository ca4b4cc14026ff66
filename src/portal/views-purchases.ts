/**
 * The portal's pages about the account's sales: purchases (search, then one purchase with its
 * timeline, covered units and certificates: download, verification link and its QR), and the
 * changes an admin makes to one: cancelling covered units (form, refund preview), adding and
 * removing a certificate holder (the endorsement's form and preview are in views-endorsements.ts).
 * Amounts arrive in minor units and are shown in their currency (`formatMinorUnits`); times in
 * UTC. Same rendering and accessibility rules as src/portal/views.ts.
 */
import { html } from 'htm/preact';
import type { KeyMode } from '../api-keys/secrets';
import type { CancellationQuote, PurchaseDetail } from '../purchases/schemas';
import type { CertificateHolder } from '../certificate-holders/schemas';
import type { PurchaseSearchResponse } from '../purchase-search/schemas';
import type { GetCertificatesResponse } from '../certificates/schemas';
import { formatMinorUnits } from '../payments/checkout-link-email';
import { csrfField, field, page, when, type Frame } from './views';
import { descriptionList } from './description-list';
import { dataTable } from './table';
import { errorSummary, mistakesOf } from '../http/error-summary';

/** Purchase search (the API's search: buyer name or email, product or bundle name, certificate number). */
export function purchasesPage(frame: Frame, data: { mode: KeyMode; q: string; result: PurchaseSearchResponse; error?: string }): string {
  const { mode, q, result } = data;
  return page(
    frame,
    html`<form method="get" action="/portal/purchases" role="search">
        ${errorSummary(data.error ? [{ message: data.error, fieldId: 'purchase-q' }] : [])}
        <input type="hidden" name="mode" value=${mode} />
        ${field({
          id: 'purchase-q',
          name: 'q',
          label: 'Search paid purchases',
          hint: "A buyer's name or email, a product or bundle name, or a certificate number. Empty: the newest.",
          value: q,
          error: data.error,
          type: 'search',
          maxlength: 200,
        })}
        <button type="submit">Search</button>
      </form>
      ${dataTable({
        label: 'Purchases found',
        caption: `${result.total_exact ? result.total : `more than ${result.total}`} ${mode} purchase${result.total === 1 ? '' : 's'} found${
          result.purchases.length < result.total ? `; the newest ${result.purchases.length} shown` : ''
        }.`,
        columns: [
          {
            header: 'Purchase',
            rowHeader: true,
            cell: (p) => html`<a href=${`/portal/purchases/${p.purchase_id}?mode=${mode}`}>#${p.purchase_id}</a>`,
          },
          { header: 'Buyer', cell: (p) => html`${p.buyer.name}<div class="hint">${p.buyer.email}</div>` },
          { header: 'Products', cell: (p) => p.products.map((x) => x.product_name).join(', ') },
          { header: 'Paid', cell: (p) => when(p.paid_at) },
          { header: 'Status', cell: (p) => p.status },
        ],
        rows: result.purchases,
      })}`,
  );
}

/** One purchase: amounts, timeline, covered units, and its certificates with their links and QR codes. */
export function purchasePage(
  frame: Frame,
  data: {
    purchase: PurchaseDetail;
    certificates: GetCertificatesResponse;
    qr: Map<string, string>;
    mode: KeyMode;
    holders: CertificateHolder[];
    /** An admin and a purchase in force: holders and endorsements may be asked for. */
    canChange: boolean;
    canCancel: boolean;
    /** The covered units an admin may cancel now: each gets a link to the cancel form with it chosen. */
    cancellable?: ReadonlySet<number>;
    /** The buyer's name, and what they answered per item (question id → answer): its plain answers are shown (venue, event type…). */
    answers?: { buyerName: string | null; items: Array<{ itemId: number; productName: string; answers: Record<string, unknown> }> };
  },
): string {
  const { purchase: p, certificates: certs } = data;
  const cancellable = data.canCancel ? (data.cancellable ?? new Set<number>()) : new Set<number>();
  const money = (minor: number) => formatMinorUnits(minor, p.currency);
  const insured = [...new Set(p.items.map((i) => nameOf(i.named_insured)).filter((n): n is string => Boolean(n)))];
  const reasonOf = new Map(p.cancellations.map((c) => [c.id, c.reason]));
  // The timeline: the purchase's own entries (a cancellation's with its reason) and each holder added after the sale or removed.
  const timeline = [
    ...p.timeline.map((t) => {
      const reason = t.cancellation_id !== undefined ? reasonOf.get(t.cancellation_id) : null;
      return { at: t.at, text: `${t.type.replace(/_/g, ' ')} (by ${t.by})${reason ? `: “${reason}”` : ''}` };
    }),
    ...data.holders.flatMap((h) => [
      ...(h.source === 'api' ? [{ at: h.created_at, text: `certificate holder added: ${h.name}` }] : []),
      ...(h.removed_at ? [{ at: h.removed_at, text: `certificate holder removed: ${h.name}` }] : []),
    ]),
  ].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  return page(
    frame,
    html`${descriptionList([
      ['Status', p.status],
      [
        'Buyer',
        data.answers?.buyerName ? html`${data.answers.buyerName}<div class="hint">${p.buyer_email ?? ''}</div>` : (p.buyer_email ?? '—'),
      ],
      ['Named insured', insured.length ? insured.join(', ') : '—'],
      ['Total', `${money(p.amount_total)} (premium ${money(p.amount_subtotal)}, platform fee ${money(p.platform_fee)})`],
      ['Paid', money(p.amount_paid)],
      ['Refunded', money(p.amount_refunded)],
      ['Payment intent', html`<code>${p.payment_intent ?? '—'}</code>`],
    ])}
      ${(data.answers?.items ?? []).map((a) => {
        const plain = Object.entries(a.answers).filter(
          (e): e is [string, string | number | boolean] => ['string', 'number', 'boolean'].includes(typeof e[1]) && e[1] !== '',
        );
        return plain.length
          ? html`<h2>What the buyer answered: ${a.productName}</h2>
              ${descriptionList(plain.map(([k, v]) => [questionLabel(k), typeof v === 'boolean' ? (v ? 'yes' : 'no') : String(v)] as const))}`
          : null;
      })}
      <h2>Timeline</h2>
      <ol>
        ${timeline.map((t) => html`<li>${when(t.at)}: ${t.text}</li>`)}
      </ol>
      ${
        p.cancellations.length
          ? html`<h2>Cancellations</h2>
              ${dataTable({
                label: 'Cancellations',
                caption: `${p.cancellations.length} cancellation${p.cancellations.length === 1 ? '' : 's'}, oldest first.`,
                columns: [
                  { header: 'Cancellation', rowHeader: true, cell: (c) => `#${c.id}` },
                  { header: 'Asked by', cell: (c) => c.requested_by },
                  { header: 'Reason', cell: (c) => c.reason ?? 'none given' },
                  { header: 'Units', cell: (c) => String(c.covered_units.length) },
                  { header: 'Refund', cell: (c) => formatMinorUnits(c.refund.total, c.currency) },
                  { header: 'Status', cell: (c) => c.status.replace(/_/g, ' ') },
                  { header: 'Effective', cell: (c) => when(c.effective_at) },
                ],
                rows: p.cancellations,
              })}`
          : null
      }
      <h2>Covered units</h2>
      ${p.items.map((i) =>
        dataTable({
          label: `Covered units of ${i.product_name}`,
          caption: i.product_name,
          columns: [
            { header: 'Unit', cell: (u) => `${u.kind} ${u.index + 1}` },
            { header: 'Coverage', cell: (u) => u.local_label },
            { header: 'State', cell: (u) => u.state },
            { header: 'Certificate', cell: (u) => u.certificate?.number ?? '—' },
            i.covered_units.some((u) => cancellable.has(u.id)) && {
              header: 'Actions',
              cell: (u) =>
                cancellable.has(u.id)
                  ? html`<a
                      href=${`/portal/purchases/${p.id}/cancel?mode=${data.mode}&unit=${u.id}`}
                      aria-label=${`Cancel this ${u.kind} (${i.product_name}: ${u.local_label})`}
                      >Cancel this ${u.kind}</a
                    >`
                  : '',
            },
          ],
          rows: i.covered_units,
        }),
      )}
      <h2>Certificates</h2>
      ${certs.certificates.length === 0 ? html`<p>No certificates yet (${certs.status}).</p>` : null}
      ${
        certs.certificates.length
          ? dataTable({
              label: 'Certificates',
              caption: `${certs.certificate_count} certificate${certs.certificate_count === 1 ? '' : 's'}; download links work until ${when(certs.urls_expire_at)}.`,
              columns: [
                {
                  header: 'Number',
                  rowHeader: true,
                  cell: (c) =>
                    html`${c.certificate_number}${
                      c.voided_at ? html` <strong class="void">Void</strong><div class="hint">voided ${when(c.voided_at)}</div>` : null
                    }`,
                },
                { header: 'Coverage', cell: (c) => `${c.product_name}: ${c.coverage_label}` },
                { header: 'Holder', cell: (c) => c.certificate_holder?.name ?? '—' },
                {
                  header: 'Download',
                  // A void certificate is no proof of cover: no PDF link to hand on as if it were.
                  cell: (c) =>
                    c.voided_at
                      ? 'Void: not valid'
                      : html`<a href=${c.download_url} aria-label=${`PDF of certificate ${c.certificate_number}`}>PDF</a>`,
                },
                {
                  header: 'Verification',
                  cell: (c) => html`<a
                      href=${c.verification_url}
                      aria-label=${c.voided_at ? `Shows it void: certificate ${c.certificate_number}` : `Verify certificate ${c.certificate_number}`}
                      >${c.voided_at ? 'Shows it void' : 'Verify'}</a
                    >
                    ${
                      !c.voided_at && data.qr.get(c.verification_url)
                        ? html`<img src=${data.qr.get(c.verification_url)} width="96" height="96" alt=${`QR code of the verification page of ${c.certificate_number}`} />`
                        : null
                    }`,
                },
              ],
              rows: certs.certificates,
            })
          : null
      }
      ${certs.payment_zip_url ? html`<p><a href=${certs.payment_zip_url}>Download every certificate (zip)</a></p>` : null}
      <h2>Certificate holders</h2>
      <ul>
        ${data.holders.map((h) => {
          const inForce = h.certificates.filter((c) => c.status !== 'voided').length;
          return html`<li>
            ${`${h.name}${h.additional_insured ? ' (additional insured)' : ''}${h.waiver_of_subrogation ? ' (waiver of subrogation)' : ''}: ${h.status}, ${inForce} certificate${inForce === 1 ? '' : 's'} in force`}
            ${
              data.canChange && h.status === 'active'
                ? html` <a href=${`/portal/purchases/${p.id}/holders/${h.id}/remove?mode=${data.mode}`} aria-label=${`Remove ${h.name}`}
                    >Remove…</a
                  >`
                : null
            }
          </li>`;
        })}
      </ul>
      ${
        data.canChange
          ? html`<ul>
            <li><a href=${`/portal/purchases/${p.id}/holders/new?mode=${data.mode}`}>Add a certificate holder…</a></li>
            <li><a href=${`/portal/purchases/${p.id}/endorse?mode=${data.mode}`}>Change the policy (endorsement)…</a></li>
            ${data.canCancel ? html`<li><a href=${`/portal/purchases/${p.id}/cancel?mode=${data.mode}`}>Cancel covered units…</a></li>` : null}
          </ul>`
          : null
      }
      <p><a href=${`/portal/purchases?mode=${data.mode}`}>Back to the ${data.mode} purchases</a></p>`,
  );
}

/** A question id as a label: `venue_name` → "Venue name". */
function questionLabel(id: string): string {
  const words = id.replace(/[_-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The `name` of a named insured as answered (an object with a name), or null. */
function nameOf(answered: unknown): string | null {
  const name = answered && typeof answered === 'object' ? (answered as { name?: unknown }).name : null;
  return typeof name === 'string' && name.trim() ? name : null;
}

/**
 * Asks before removing a certificate holder (issue 53, item 7): names it and the certificates of
 * it in force that are voided; the form posts the removal, `Keep it` goes back to the purchase.
 */
export function removeHolderPage(frame: Frame, data: { purchaseId: number; mode: KeyMode; holder: CertificateHolder }): string {
  const { holder } = data;
  const inForce = holder.certificates.filter((c) => c.status !== 'voided').length;
  return page(
    frame,
    html`<p>
        Removing <strong>${holder.name}</strong> voids its ${inForce} certificate${inForce === 1 ? '' : 's'} in force on this purchase; the
        buyer's cover and the other holders' certificates stay as they are.
      </p>
      <form method="post" action=${`/portal/purchases/${data.purchaseId}/holders/${holder.id}/remove?mode=${data.mode}`}>
        ${csrfField(frame.csrf)}
        <button type="submit" class="danger">Remove ${holder.name}</button>
        <a href=${`/portal/purchases/${data.purchaseId}?mode=${data.mode}`}>Keep it</a>
      </form>`,
  );
}

/** A unit the cancel form offers: active and not started. */
export interface CancellableUnit {
  id: number;
  label: string;
}

/** Step 1 of a cancellation: which units, who asks, why; then a preview of the refund. */
export function cancelFormPage(
  frame: Frame,
  data: {
    purchaseId: number;
    mode: KeyMode;
    units: CancellableUnit[];
    /** The unit chosen from its row on the purchase page (`?unit=`): the only one ticked at first. */
    chosen?: number;
    error?: string;
    /** What `error` is about: the units chosen (the default) or the reason. */
    errorAt?: 'units' | 'reason';
    values?: { units: string[]; requestedBy: string; reason: string };
  },
): string {
  const unitsError = data.error && data.errorAt !== 'reason' ? data.error : undefined;
  const reasonError = data.error && data.errorAt === 'reason' ? data.error : undefined;
  // Nothing ticked at first (a slip must not cancel the whole event), or only the unit chosen from its row.
  const values = data.values ?? {
    units: data.units.filter((u) => u.id === data.chosen).map((u) => String(u.id)),
    requestedBy: 'agency',
    reason: '',
  };
  const action = `/portal/purchases/${data.purchaseId}/cancel/preview?mode=${data.mode}`;
  return page(
    frame,
    data.units.length === 0
      ? html`<p>No covered unit of this purchase can be cancelled: every one has started or is cancelled.</p>
          <p><a href=${`/portal/purchases/${data.purchaseId}?mode=${data.mode}`}>Back to the purchase</a></p>`
      : html`<form method="post" action=${action} novalidate>
          ${csrfField(frame.csrf)}
          ${errorSummary(data.error ? [{ message: data.error, fieldId: reasonError ? 'cancel-reason' : `unit-${data.units[0]!.id}` }] : [])}
          <fieldset aria-describedby=${unitsError ? 'cancel-units-error' : undefined}>
            <legend>Covered units to cancel</legend>
            ${unitsError ? html`<p class="field-error" id="cancel-units-error">${unitsError}</p>` : null}
            ${data.units.map(
              (u) => html`<div>
                <input type="checkbox" id=${`unit-${u.id}`} name="units" value=${String(u.id)} checked=${values.units.includes(String(u.id))} />
                <label for=${`unit-${u.id}`} class="inline">${u.label}</label>
              </div>`,
            )}
          </fieldset>
          <label for="requested-by">Who asks</label>
          <select id="requested-by" name="requested_by">
            ${(['agency', 'buyer', 'insurer'] as const).map((r) => html`<option value=${r} selected=${values.requestedBy === r}>${r}</option>`)}
          </select>
          ${field({ id: 'cancel-reason', name: 'reason', label: 'Reason', value: values.reason, error: reasonError, maxlength: 500 })}
          <button type="submit">Preview the refund</button>
          <a href=${`/portal/purchases/${data.purchaseId}?mode=${data.mode}`}>Keep the purchase as it is</a>
        </form>`,
  );
}

/** Step 2: the quote's refund, per unit, and the button that carries it out at that price. */
export function cancelPreviewPage(
  frame: Frame,
  data: { quote: CancellationQuote; mode: KeyMode; labels: Map<number, string>; staying: readonly string[] },
): string {
  const q = data.quote;
  const money = (minor: number) => formatMinorUnits(minor, q.currency);
  const cancelled = q.covered_units.map((u) => data.labels.get(u.covered_unit_id) ?? `unit ${u.covered_unit_id}`);
  const units = (n: number) => `${n} covered unit${n === 1 ? '' : 's'}`;
  const total = cancelled.length + data.staying.length;
  const refundParts = ` (premium ${money(q.refund.premium)}, platform fee ${money(q.refund.platform_fee)}, tax ${money(q.refund.tax)})`;
  return page(
    frame,
    html`<div id="cancel-what">
        <p>
          <strong>${cancelled.length === total ? `All ${units(total)} of this purchase will be cancelled` : `${cancelled.length} of the ${units(total)} in force will be cancelled`}:</strong>${` ${cancelled.join('; ')}.`}
        </p>
        <p>
          ${
            data.staying.length
              ? `${data.staying.length === 1 ? 'This one stays' : `These ${data.staying.length} stay`} covered: ${data.staying.join('; ')}.`
              : 'Nothing stays covered: the policy ends.'
          }
        </p>
      </div>
      ${descriptionList([
        ['Refund', html`<strong id="refund-total">${money(q.refund.total)}</strong>${refundParts}`],
        ['Rule', q.method.replace(/_/g, ' ')],
        ['Takes effect', when(q.effective_at)],
        ['Ends the policy', q.ends_policy ? 'yes: no covered unit stays active' : 'no: other units stay covered'],
        ['This price holds until', when(q.expires_at)],
      ])}
      ${dataTable({
        label: 'Units cancelled',
        caption: 'The covered units cancelled and their certificates, voided once it is carried out',
        columns: [
          { header: 'Unit', cell: (u) => data.labels.get(u.covered_unit_id) ?? `unit ${u.covered_unit_id}` },
          { header: 'Certificate', cell: (u) => u.certificate_number ?? '—' },
          { header: 'Premium', cell: (u) => money(u.premium) },
          { header: 'Earned', cell: (u) => money(u.earned) },
          { header: 'Refunded', cell: (u) => money(u.refundable) },
        ],
        rows: q.covered_units,
      })}
      <form method="post" action=${`/portal/purchases/${q.purchase_id}/cancel?mode=${data.mode}`}>
        ${csrfField(frame.csrf)}
        <input type="hidden" name="quote_id" value=${q.id} />
        <button type="submit" class="danger">Cancel ${cancelled.length === 1 ? 'this unit' : `these ${cancelled.length} units`} and refund ${money(q.refund.total)}</button>
        <a href=${`/portal/purchases/${q.purchase_id}?mode=${data.mode}`}>Keep the purchase as it is</a>
      </form>`,
  );
}

/** The add-holder form's values (as typed) and what was wrong with them, by field name. */
export interface HolderForm {
  values: Record<string, string>;
  errors: Record<string, string>;
  formError?: string;
}

/** Adding a certificate holder: who, where, the endorsement marks; lists the certificates it will get. */
export function holderFormPage(
  frame: Frame,
  data: { purchaseId: number; mode: KeyMode; units: CancellableUnit[]; form: HolderForm },
): string {
  const { form } = data;
  const f = (id: string, name: string, label: string, extra: Partial<Parameters<typeof field>[0]> = {}) =>
    field({ id: `holder-${id}`, name, label, value: form.values[name] ?? '', error: form.errors[name], ...extra });
  const check = (name: string, label: string) =>
    html`<div>
      <input type="checkbox" id=${`holder-${name}`} name=${name} value="yes" checked=${form.values[name] === 'yes'} />
      <label for=${`holder-${name}`} class="inline">${label}</label>
    </div>`;
  return page(
    frame,
    html`<p>
        The holder gets a certificate for each covered unit still active, at no charge:
        ${data.units.length ? data.units.map((u) => u.label).join('; ') : 'none at the moment'}.
      </p>
      <form method="post" action=${`/portal/purchases/${data.purchaseId}/holders?mode=${data.mode}`} novalidate>
        ${csrfField(frame.csrf)}
        ${errorSummary(
          mistakesOf(
            form.errors,
            {
              name: 'holder-name',
              line1: 'holder-line1',
              line2: 'holder-line2',
              city: 'holder-city',
              region: 'holder-region',
              postal_code: 'holder-postal',
              country: 'holder-country',
              email: 'holder-email',
              description_of_operations: 'holder-description',
            },
            form.formError,
          ),
        )}
        <fieldset>
          <legend>Certificate holder</legend>
          ${f('name', 'name', 'Name', { required: true, maxlength: 200 })} ${f('line1', 'line1', 'Address line 1', { required: true })}
          ${f('line2', 'line2', 'Address line 2')} ${f('city', 'city', 'City', { required: true })}
          ${f('region', 'region', 'State or region', { required: true })} ${f('postal', 'postal_code', 'Postal code', { required: true })}
          ${f('country', 'country', 'Country', { required: true, hint: 'Two letters, such as US.', maxlength: 2 })}
          ${f('email', 'email', 'Email', { type: 'email', hint: 'Where their certificates may be emailed; never printed.' })}
          ${f('description', 'description_of_operations', 'Description of operations', {
            hint: 'Printed on their certificates. Empty: the product and the covered dates.',
          })}
          ${check('additional_insured', 'Additional insured')} ${check('waiver_of_subrogation', 'Waiver of subrogation')}
          ${check('notify_on_cancellation', 'Tell the holder (at the email) if the policy is cancelled')}
        </fieldset>
        <button type="submit">Add the holder</button>
        <a href=${`/portal/purchases/${data.purchaseId}?mode=${data.mode}`}>Back to the purchase</a>
      </form>`,
  );
}
