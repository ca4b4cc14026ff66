/**
 * Test-mode clutter can be removed: `product_lines.archived_at` (a test-mode product archived
 * through POST /api/v1/products/{id}/archive: no longer listed, read, changed, linked or quoted)
 * and `question_sets.archived_at` (an account's own set archived through
 * POST /api/v1/question_sets/{id}/archive: no longer listed, read or chosen for a product or
 * bundle). Rows stay: purchases, certificates and the products already using a set keep pointing
 * at them. Written only by src/products/repository.ts and src/question-sets/repository.ts.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('product_lines', (t) => {
    t.timestamp('archived_at', { useTz: true }).nullable();
  });
  await knex.schema.alterTable('question_sets', (t) => {
    t.timestamp('archived_at', { useTz: true }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('question_sets', (t) => {
    t.dropColumn('archived_at');
  });
  await knex.schema.alterTable('product_lines', (t) => {
    t.dropColumn('archived_at');
  });
}
