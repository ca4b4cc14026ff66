/**
 * The portal's one data table: a scrollable, focusable region named for screen readers, a
 * caption saying what the rows are, a header cell (`th scope="col"`) per column, and one row per
 * item whose naming cell, when a column is marked so, is a `th scope="row"`. Every portal page
 * lists its rows through it, so they all keep the same markup and accessibility.
 */
import { html } from 'htm/preact';
import type { ComponentChildren, VNode } from 'preact';

/** One column of a table: its header text and how a row fills its cell. */
export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
  /** This column names the row: its cells are `th scope="row"` instead of `td`. */
  rowHeader?: boolean;
}

/**
 * A table of `rows` in a region labelled `label`, captioned `caption`, with one cell per column
 * of `columns` in each row; a column given as null or false (one a viewer does not see, say) is
 * left out, header and cells.
 */
export function dataTable<T>(props: {
  label: string;
  caption: ComponentChildren;
  columns: ReadonlyArray<Column<T> | null | false>;
  rows: readonly T[];
}): VNode {
  const columns = props.columns.filter((c): c is Column<T> => Boolean(c));
  return html`<div class="table-wrap" role="region" aria-label=${props.label} tabindex="0">
    <table>
      <caption>
        ${props.caption}
      </caption>
      <thead>
        <tr>
          ${columns.map((c) => html`<th scope="col">${c.header}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${props.rows.map(
          (row) =>
            html`<tr>
              ${columns.map((c) => (c.rowHeader ? html`<th scope="row">${c.cell(row)}</th>` : html`<td>${c.cell(row)}</td>`))}
            </tr>`,
        )}
      </tbody>
    </table>
  </div>` as VNode;
}
