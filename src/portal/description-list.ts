/**
 * The portal's one description list: the facts of one thing (a purchase, a quote, an event, the
 * account) as `<dl>` term–value pairs, so every page shows them with the same markup.
 */
import { html } from 'htm/preact';
import type { ComponentChildren, VNode } from 'preact';

/** One fact: its term, its value and, when a test or a link needs to find it, the value's id. */
export type Fact = readonly [term: string, value: ComponentChildren, id?: string];

/** A `<dl>` of `facts`, in order, each a `<dt>` term and its `<dd>` value. */
export function descriptionList(facts: readonly Fact[]): VNode {
  return html`<dl>
    ${facts.map(([term, value, id]) => html`<dt>${term}</dt><dd id=${id}>${value}</dd>`)}
  </dl>`;
}
