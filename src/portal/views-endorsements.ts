/**
 * The portal's endorsement pages of one purchase: the form (correct the named insured, move a day
 * or a trip not started, add days or a trip) and the preview of its price change, carried out at
 * that price. Amounts arrive in minor units and are shown in their currency (`formatMinorUnits`).
 * Same rendering and accessibility rules as src/portal/views.ts; the purchase's other pages are in
 * views-purchases.ts.
 */
import { html } from 'htm/preact';
import type { KeyMode } from '../api-keys/secrets';
import type { Endorsement } from '../endorsements/schemas';
import { formatMinorUnits } from '../payments/checkout-link-email';
import { csrfField, field, page, type Frame } from './views';
import type { CancellableUnit } from './views-purchases';
import { descriptionList } from './description-list';
import { errorSummary, mistakesOf } from '../http/error-summary';

/**
 * One optional change of the endorsement form, left out when `options` is empty: a legend, a
 * hint, a select `name` (labelled `label`, element id `id`) among `options` with `none` first,
 * and the fields the change needs; each field's value and error are the form's under its name.
 */
function choiceFieldset(
  form: { values: Record<string, string>; errors: Record<string, string> },
  f: {
    legend: string;
    hint?: string;
    label: string;
    id: string;
    name: string;
    none: string;
    options: ReadonlyArray<{ id: number; label: string }>;
    fields: Array<{ id: string; name: string; label: string; type: string }>;
  },
) {
  if (!f.options.length) return null;
  return html`<fieldset>
    <legend>${f.legend}</legend>
    ${f.hint ? html`<p class="hint">${f.hint}</p>` : null}
    <label for=${f.id}>${f.label}</label>
    <select id=${f.id} name=${f.name}>
      <option value="">${f.none}</option>
      ${f.options.map((o) => html`<option value=${String(o.id)} selected=${form.values[f.name] === String(o.id)}>${o.label}</option>`)}
    </select>
    ${f.fields.map((x) => field({ ...x, value: form.values[x.name] ?? '', error: form.errors[x.name] }))}
  </fieldset>`;
}

/** An endorsement: correct the named insured, move a day or a trip not started, add days or a trip; then a preview. */
export function endorseFormPage(
  frame: Frame,
  data: {
    purchaseId: number;
    mode: KeyMode;
    days: CancellableUnit[];
    /** The covered trips not started, which may move to another window (issue 53, item 7). */
    trips?: CancellableUnit[];
    /** The purchase's per-day items that may gain days (id and product name). */
    dayItems: Array<{ id: number; label: string }>;
    /** The purchase's per-trip items that may gain a trip (id and product name). */
    tripItems: Array<{ id: number; label: string }>;
    values: Record<string, string>;
    errors: Record<string, string>;
    formError?: string;
  },
): string {
  const { values, errors } = data;
  return page(
    frame,
    html`<form method="post" action=${`/portal/purchases/${data.purchaseId}/endorse/preview?mode=${data.mode}`} novalidate>
      ${csrfField(frame.csrf)}
      ${errorSummary(
        mistakesOf(
          errors,
          {
            named_insured: 'endorse-name',
            start_date: 'endorse-date',
            move_trip_start: 'endorse-move-trip-start',
            move_trip_end: 'endorse-move-trip-end',
            add_start: 'endorse-add-start',
            add_end: 'endorse-add-end',
            trip_start: 'endorse-trip-start',
            trip_end: 'endorse-trip-end',
          },
          data.formError,
        ),
      )}
      <fieldset>
        <legend>Named insured</legend>
        ${field({
          id: 'endorse-name',
          name: 'named_insured',
          label: 'Corrected name',
          hint: 'Leave empty to keep the name as it is.',
          value: values.named_insured ?? '',
          error: errors.named_insured,
          maxlength: 200,
        })}
      </fieldset>
      ${choiceFieldset(data, {
        legend: 'Move a covered day',
        label: 'Day',
        id: 'endorse-unit',
        name: 'covered_unit_id',
        none: 'No day moves',
        options: data.days,
        fields: [{ id: 'endorse-date', name: 'start_date', label: 'New date', type: 'date' }],
      })}
      ${choiceFieldset(data, {
        legend: 'Move a covered trip',
        hint: 'Local times of the trip’s own time zone; the trip keeps its price.',
        label: 'Trip',
        id: 'endorse-move-trip',
        name: 'move_trip',
        none: 'No trip moves',
        options: data.trips ?? [],
        fields: [
          { id: 'endorse-move-trip-start', name: 'move_trip_start', label: 'New start', type: 'datetime-local' },
          { id: 'endorse-move-trip-end', name: 'move_trip_end', label: 'New end', type: 'datetime-local' },
        ],
      })}
      ${choiceFieldset(data, {
        legend: 'Add covered days',
        hint: 'Priced like the days bought; the buyer pays the difference through a checkout link before the days are added. Added on their own, without other changes.',
        label: 'Product',
        id: 'endorse-add-item',
        name: 'add_item',
        none: 'No days added',
        options: data.dayItems,
        fields: [
          { id: 'endorse-add-start', name: 'add_start', label: 'First day', type: 'date' },
          { id: 'endorse-add-end', name: 'add_end', label: 'Last day', type: 'date' },
        ],
      })}
      ${choiceFieldset(data, {
        legend: 'Add a covered trip',
        hint: 'Priced like the trips bought; the buyer pays the difference through a checkout link before the trip is added. Local times of the trip’s own time zone. Added on its own, without other changes.',
        label: 'Product',
        id: 'endorse-trip-item',
        name: 'trip_item',
        none: 'No trip added',
        options: data.tripItems,
        fields: [
          { id: 'endorse-trip-start', name: 'trip_start', label: 'Trip starts', type: 'datetime-local' },
          { id: 'endorse-trip-end', name: 'trip_end', label: 'Trip ends', type: 'datetime-local' },
        ],
      })}
      <button type="submit">Preview the change</button>
      <a href=${`/portal/purchases/${data.purchaseId}?mode=${data.mode}`}>Keep the policy as it is</a>
    </form>`,
  );
}

/**
 * The endorsement quote: what changes, the premium difference, the certificates reissued; then
 * apply, or (a positive difference: days added) open the checkout link the buyer pays it through.
 */
export function endorsePreviewPage(frame: Frame, data: { quote: Endorsement; mode: KeyMode }): string {
  const q = data.quote;
  const money = (minor: number) => formatMinorUnits(minor, q.currency);
  const describe = (c: Endorsement['changes'][number]) =>
    c.type === 'named_insured'
      ? `Named insured becomes ${c.name}`
      : c.type === 'move_covered_unit'
        ? `Covered unit ${c.covered_unit_id} moves${c.start_date ? ` to ${c.start_date}` : c.trip ? ` to ${c.trip.start.replace('T', ' ')} – ${c.trip.end.replace('T', ' ')}` : ''}`
        : c.type === 'add_covered_units'
          ? `Covered units added: ${q.added_covered_units.map((u) => `${u.local_label} (${money(u.premium)})`).join(', ')}`
          : c.type === 'certificate_holder_endorsements'
            ? `Holder ${c.certificate_holder_id}: ${[
                c.additional_insured === undefined ? null : `${c.additional_insured ? 'named' : 'no longer'} additional insured`,
                c.waiver_of_subrogation === undefined ? null : `subrogation ${c.waiver_of_subrogation ? 'waived' : 'no longer waived'}`,
              ]
                .filter(Boolean)
                .join(', ')}`
            : `Description of operations of holder ${c.certificate_holder_id} changes`;
  const collect = q.total_difference > 0;
  return page(
    frame,
    html`<ul>
        ${q.changes.map((c) => html`<li>${describe(c)}</li>`)}
      </ul>
      ${descriptionList([
        ['Premium difference', money(q.premium_difference), 'premium-difference'],
        ['Total difference', money(q.total_difference)],
        ['New total', money(q.new_amount_total)],
      ])}
      <p>Certificates reissued as a new version: ${q.reissues.map((r) => r.certificate_number).join(', ') || 'none'}.</p>
      <form method="post" action=${`/portal/purchases/${q.purchase_id}/endorse?mode=${data.mode}`}>
        ${csrfField(frame.csrf)}
        <input type="hidden" name="quote_id" value=${q.id} />
        ${collect ? html`<input type="hidden" name="payment" value="checkout_link" />` : null}
        <button type="submit">${collect ? `Open a checkout link for ${money(q.total_difference)}` : 'Apply the change'}</button>
        <a href=${`/portal/purchases/${q.purchase_id}?mode=${data.mode}`}>Keep the policy as it is</a>
      </form>`,
  );
}
