/**
 * Purchase search, production shape (issue "Production-shaped": p99 < 50 ms at 1 000 000
 * purchases; measured by `npm run bench -- search`, figures in docs/decisions.md).
 *
 * The trigram index of 20261122001100 was over `search_doc` as written. pg_trgm splits text
 * into words at every character that is not a letter or digit, so a certificate number
 * `coi-169998-2-1-737161a5f8` is the words `coi`, `169998`, `2`, `1`, `737161a5f8`, and the
 * search `COI-16` can only be looked up as "a word `coi` somewhere and a word starting with
 * `16` somewhere": `coi` is in every row, and words starting with `16` are in 5 % of them
 * (emails, other numbers), so 53 000 rows were read to find 11 000 matches (130 ms).
 *
 * - `purchase_search_fold(t)`: `t` without the characters that are not letters, digits or line
 *   breaks. Deleting characters keeps substrings: when the phrase is inside the document, the
 *   folded phrase (or any folded part of it) is inside the folded document. So it only serves
 *   to find candidates; every match is still checked on `search_doc` itself (`strpos`), and
 *   nothing about what matches changes.
 * - `search_key`: the folded `search_doc`, a stored generated column (it follows every write of
 *   `search_doc` by the triggers of 20261122001100 with no change to them). Its trigrams cross
 *   the punctuation: `COI-16` is looked up as `oi1` + `i16`, which only the certificates of
 *   purchases 16, 160–169, … hold.
 * - `purchase_search_key_trgm_idx`: GIN trigram over `search_key`, led by `agent_id` as before
 *   (a teammate's search intersects inside the index); it replaces
 *   `purchase_search_doc_trgm_idx`, which no statement uses any more.
 *
 * Adding a stored generated column rewrites the table once (about 30 s at 1 000 000 rows,
 * during which writes to purchases wait on the search triggers); on an empty database it is
 * instant.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create function purchase_search_fold(t text) returns text
      language sql immutable strict parallel safe
      as $$ select regexp_replace(t, '[^[:alnum:]\\n]+', '', 'g') $$`);
  await knex.raw('alter table purchase_search add column search_key text generated always as (purchase_search_fold(search_doc)) stored');
  // Its histogram is the sample the service estimates trigram frequencies from (src/purchase-search/probe.ts).
  await knex.raw('alter table purchase_search alter column search_key set statistics 1000');
  await knex.raw('create index purchase_search_key_trgm_idx on purchase_search using gin (agent_id, search_key gin_trgm_ops)');
  await knex.raw('drop index purchase_search_doc_trgm_idx');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('create index purchase_search_doc_trgm_idx on purchase_search using gin (agent_id, search_doc gin_trgm_ops)');
  await knex.raw('drop index purchase_search_key_trgm_idx');
  await knex.raw('alter table purchase_search drop column search_key');
  await knex.raw('drop function purchase_search_fold(text)');
}
