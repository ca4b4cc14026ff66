/**
 * Question sets an account can see and make: list (shared and its own), get one, create its own,
 * archive its own. Errors (AppError): NOT_FOUND (404) for a set that does not exist, is archived
 * or is another account's; ARCHIVE_NOT_ALLOWED (409) for archiving a set a live product uses;
 * VALIDATION_ERROR (400) is raised by the routes' body parsing before this service is called.
 */
import { AppError, notFound } from '../shared/errors';
import type { Principal } from '../api-keys/service';
import { isTripExcess } from './definition';
import type { QuestionSet, QuestionSetsRepository } from './repository';
import type { CreateQuestionSetBody, ListQuestionSetsQuery, QuestionSetRead } from './schemas';

export function toQuestionSetRead(set: QuestionSet): QuestionSetRead {
  return {
    id: set.id,
    name: set.name,
    isShared: set.rootAccountId === null,
    rootAccountId: set.rootAccountId,
    coverageUnit: isTripExcess(set.definition) ? 'trip' : 'day',
    definition: set.definition,
    createdAt: set.createdAt.toISOString(),
  };
}

export function createQuestionSetService(deps: { repo: QuestionSetsRepository }) {
  return {
    async list(principal: Principal, q: ListQuestionSetsQuery): Promise<{ items: QuestionSetRead[]; total: number }> {
      const page = await deps.repo.listUsable(principal.rootAccountId, q);
      return { items: page.items.map(toQuestionSetRead), total: page.total };
    },

    async get(principal: Principal, id: number): Promise<QuestionSetRead> {
      const set = await deps.repo.findUsable(id, principal.rootAccountId);
      if (!set) throw notFound('Question set', id);
      return toQuestionSetRead(set);
    },

    /**
     * Archives one of the account's own sets (test-mode clutter): no longer listed, read or chosen
     * for a product or bundle; products already using it keep it. Archiving it again answers the
     * same instant. Errors: NOT_FOUND (404) for a shared set or another account's;
     * ARCHIVE_NOT_ALLOWED (409) while a live product uses it.
     */
    async archive(principal: Principal, id: number): Promise<{ id: number; archivedAt: string }> {
      const r = await deps.repo.archive(id, principal.rootAccountId);
      if (!r) throw notFound('Question set', id);
      if ('inUse' in r) {
        throw new AppError(
          'ARCHIVE_NOT_ALLOWED',
          `Question set ${id} is used by live product(s) ${r.inUse.join(', ')}; it cannot be archived`,
        );
      }
      return { id, archivedAt: r.archivedAt.toISOString() };
    },

    /** Creates a set owned by the key's account (its products and bundles may then use it). */
    async create(principal: Principal, body: CreateQuestionSetBody): Promise<QuestionSetRead> {
      return toQuestionSetRead(
        await deps.repo.insert({ rootAccountId: principal.rootAccountId, name: body.name, definition: body.definition }),
      );
    },
  };
}

export type QuestionSetService = ReturnType<typeof createQuestionSetService>;
