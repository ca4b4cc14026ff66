/**
 * Redaction of personal data stored inside JSON columns, for the repositories that own those
 * columns (a buyer's erasure reaches them in one transaction, each table through its own
 * repository). Only whole JSON string values are replaced, never parts of a string, so a stored
 * document stays valid JSON and keeps its shape.
 */
import type { Knex } from 'knex';

/**
 * Replaces the string at `column ->> key` by `placeholder` on the rows of `table` whose
 * `purchase_id` is in `purchaseIds` and that have one; answers the values replaced (row id as a
 * string → value), leaving out those that already were the placeholder. In the caller's
 * transaction `trx`. `table`, `column` and `key` are the caller's own identifiers, never input.
 */
export async function redactJsonString(
  trx: Knex.Transaction,
  target: { table: string; column: string; key: string },
  purchaseIds: number[],
  placeholder: string,
): Promise<Record<string, string>> {
  const { table, column, key } = target;
  const rows: Array<{ id: number; value: string | null }> = await trx(table)
    .whereIn('purchase_id', purchaseIds)
    .select('id', trx.raw('?? ->> ? as value', [column, key]));
  await trx(table)
    .whereIn('purchase_id', purchaseIds)
    .whereRaw('?? ->> ? is not null', [column, key])
    .update({ [column]: trx.raw('jsonb_set(??, array[?::text], to_jsonb(?::text))', [column, key, placeholder]) });
  return Object.fromEntries(rows.filter((r) => r.value && r.value !== placeholder).map((r) => [String(r.id), r.value as string]));
}

/**
 * On the rows of `table` whose `purchase_id` is in `purchaseIds`, every whole JSON string value
 * of JSONB `column` equal to a pair's first element becomes its second (`[["a@b.c", "erased@…"],
 * …]`: plain strings, JSON-quoted here). In the caller's transaction `trx`; `table` and `column`
 * are the caller's own identifiers, never input.
 */
export async function replaceJsonStrings(
  trx: Knex.Transaction,
  target: { table: string; column: string },
  purchaseIds: number[],
  replacements: Array<[string, string]>,
): Promise<void> {
  const sql = replacements.reduce<string>((inner) => `replace(${inner}, ?, ?)`, '??::text');
  const bindings = replacements.flatMap(([from, to]) => [JSON.stringify(from), JSON.stringify(to)]);
  await trx(target.table)
    .whereIn('purchase_id', purchaseIds)
    .update({ [target.column]: trx.raw(`(${sql})::jsonb`, [target.column, ...bindings]) });
}
