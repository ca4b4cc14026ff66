/**
 * The error summary of a failed form (issue 53, item 2) on the portal's and the buyer's pages,
 * after the GOV.UK design system's pattern: at the top of the form, an alert region (`role=alert`) with the heading "There is a
 * problem" and one line per mistake, each a link to the field's id; the portal's script moves
 * focus to it when the page loads and, on a link, to the field. Each field keeps its own inline
 * error; a mistake of the whole form (no field) is a line without a link.
 */
import { html } from 'htm/preact';
import type { VNode } from 'preact';

/** One mistake: its message and the id of the field it is about (none: the form as a whole). */
export interface FormMistake {
  message: string;
  fieldId?: string;
}

/** The summary of `mistakes` (in the form's order), or null when there are none. */
export function errorSummary(mistakes: readonly FormMistake[]): VNode | null {
  const shown = mistakes.filter((m) => m.message);
  if (shown.length === 0) return null;
  return html`<div class="error-summary" id="error-summary" role="alert" aria-labelledby="error-summary-title" tabindex="-1">
    <h2 id="error-summary-title">There is a problem</h2>
    <ul>
      ${shown.map((m) => html`<li>${m.fieldId ? html`<a href=${`#${m.fieldId}`}>${m.message}</a>` : m.message}</li>`)}
    </ul>
  </div>` as VNode;
}

/**
 * The mistakes of a form whose `errors` are keyed by field name, in the order of `fieldIds`
 * (name → the field's id), after the form's own `formError`.
 */
export function mistakesOf(
  errors: Partial<Record<string, string>>,
  fieldIds: Readonly<Record<string, string>>,
  formError?: string,
): FormMistake[] {
  const known = Object.entries(fieldIds)
    .filter(([name]) => errors[name])
    .map(([name, fieldId]) => ({ message: errors[name]!, fieldId }));
  const other = Object.entries(errors)
    .filter(([name, message]) => message && !(name in fieldIds))
    .map(([, message]) => ({ message: message! }));
  return [...(formError ? [{ message: formError }] : []), ...known, ...other];
}
