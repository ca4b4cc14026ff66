/**
 * Question sets (table `question_sets`). A set with `root_account_id` null is shared by every
 * account; otherwise only its owner may reference it. Definitions are validated with
 * `QuestionSetDefinition` on the way in and on the way out (a stored row that no longer
 * parses is a bug, reported as such rather than served).
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { QuestionSetDefinition } from './definition';

export interface QuestionSet {
  id: number;
  rootAccountId: number | null;
  name: string;
  definition: QuestionSetDefinition;
  createdAt: Date;
}

const fromRow = (r: { id: number; root_account_id: number | null; name: string; definition: unknown; created_at: Date }): QuestionSet => ({
  id: r.id,
  rootAccountId: r.root_account_id,
  name: r.name,
  definition: QuestionSetDefinition.parse(r.definition),
  createdAt: r.created_at,
});

export function createQuestionSetsRepository(db: Db) {
  return {
    /** Inserts a set after validating its definition (throws ZodError when invalid). */
    async insert(input: { rootAccountId: number | null; name: string; definition: unknown }, trx?: Knex.Transaction): Promise<QuestionSet> {
      const definition = QuestionSetDefinition.parse(input.definition);
      const [row] = await (trx ?? db)('question_sets')
        .insert({ root_account_id: input.rootAccountId, name: input.name, definition: JSON.stringify(definition) })
        .returning('*');
      return fromRow(row);
    },

    /** The set if it exists, is not archived and `rootAccountId` may use it (shared or owned). */
    async findUsable(id: number, rootAccountId: number, trx?: Knex.Transaction): Promise<QuestionSet | null> {
      const row = await (trx ?? db)('question_sets')
        .where({ id })
        .whereNull('archived_at')
        .andWhere((q) => q.whereNull('root_account_id').orWhere('root_account_id', rootAccountId))
        .first();
      return row ? fromRow(row) : null;
    },

    /**
     * The sets `rootAccountId` may use (shared and its own), shared first, then oldest first;
     * one page of `pageSize` from `pageIndex` (0-based), with the total.
     */
    async listUsable(
      rootAccountId: number,
      page: { pageSize: number; pageIndex: number },
    ): Promise<{ items: QuestionSet[]; total: number }> {
      const usable = () =>
        db('question_sets')
          .whereNull('archived_at')
          .where((q) => q.whereNull('root_account_id').orWhere('root_account_id', rootAccountId));
      const [rows, count] = await Promise.all([
        usable()
          .orderByRaw('root_account_id is not null, id')
          .limit(page.pageSize)
          .offset(page.pageSize * page.pageIndex),
        usable().count({ n: '*' }).first(),
      ]);
      return { items: rows.map(fromRow), total: Number(count?.n ?? 0) };
    },

    /**
     * Archives `rootAccountId`'s own set `id` unless a live product that is not archived uses it.
     * Returns when it was archived (the first time, when it already was), `inUse` with up to 20
     * of those live products' ids, or null when the account has no such set (a shared set is no
     * account's own). A product pointed at the set at the same moment may still take it; it keeps
     * working like any product already using an archived set.
     */
    async archive(id: number, rootAccountId: number): Promise<{ archivedAt: Date } | { inUse: number[] } | null> {
      return db.transaction(async (trx) => {
        const row = await trx('question_sets').where({ id, root_account_id: rootAccountId }).forUpdate().first('archived_at');
        if (!row) return null;
        if (row.archived_at) return { archivedAt: row.archived_at as Date };
        const users = await trx('product_lines')
          .where({ question_set_id: id, is_test_mode: false })
          .whereNull('archived_at')
          .orderBy('id')
          .limit(20)
          .pluck('id');
        if (users.length) return { inUse: users as number[] };
        const [updated] = await trx('question_sets')
          .where({ id })
          .update({ archived_at: trx.fn.now(), updated_at: trx.fn.now() })
          .returning('archived_at');
        return { archivedAt: updated.archived_at as Date };
      });
    },

    /** The shared set named `name`, inserted with `definition` when there is none (seed). */
    async ensureShared(name: string, definition: unknown): Promise<QuestionSet> {
      const row = await db('question_sets').whereNull('root_account_id').where({ name }).orderBy('id').first();
      return row ? fromRow(row) : this.insert({ rootAccountId: null, name, definition });
    },

    async findMany(ids: number[]): Promise<Map<number, QuestionSet>> {
      if (!ids.length) return new Map();
      const rows = await db('question_sets').whereIn('id', ids);
      return new Map(rows.map((r) => [r.id as number, fromRow(r)]));
    },
  };
}

export type QuestionSetsRepository = ReturnType<typeof createQuestionSetsRepository>;
