/**
 * `/api/v1/question_sets`: the templates buyers answer. GET lists the shared sets and the key's
 * account's own (200, paged), GET /{id} one of them (404 NOT_FOUND otherwise), POST creates one
 * for the account (201) after validating the whole definition (400 VALIDATION_ERROR listing
 * every problem, nothing stored), POST /{id}/archive archives one of its own (200). No PATCH or
 * DELETE: products keep pointing at the wording their buyers answered; make a new set instead.
 */
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { parseBody } from '../http/validation';
import { successEnvelope } from '../http/openapi';
import * as resource from '../http/resource-routes';
import type { QuestionSetService } from './service';
import { ArchivedResource } from '../http/archived';
import { CreateQuestionSetBody, ListQuestionSetsQuery, QuestionSetRead } from './schemas';

const IdParam = resource.idParam('Question set id, integer >= 1', '3');
const notFoundResponse = resource.errorResponse('NOT_FOUND: no question set with that id that this account may use');

export function questionSetRoutes(service: QuestionSetService): RouteRegistration {
  return (router, registry) => {
    resource.listRoute(router, '/question_sets', ListQuestionSetsQuery, service.list, 'Question sets retrieved');
    resource.idRoute(router, 'get', '/question_sets/:id', service.get, 'Question set retrieved');
    resource.idRoute(router, 'post', '/question_sets/:id/archive', service.archive, 'Question set archived');
    router.post('/question_sets', async (ctx) => {
      const body = parseBody(CreateQuestionSetBody, ctx.request.body);
      ctx.status = 201;
      ctx.body = ok(await service.create(ctx.state.principal!, body), 'Question set created');
    });

    resource.registerListPath(registry, {
      path: '/api/v1/question_sets',
      operationId: 'listQuestionSets',
      tags: ['Question sets'],
      summary: 'List the question sets this account may use: the shared ones, then its own',
      query: ListQuestionSetsQuery,
      item: QuestionSetRead,
      envelopeId: 'QuestionSetListResponse',
    });
    resource.registerIdPath(registry, {
      method: 'get',
      path: '/api/v1/question_sets/{id}',
      operationId: 'getQuestionSet',
      tags: ['Question sets'],
      summary: 'Get one question set (shared, or this account’s own)',
      params: IdParam,
      ok: resource.jsonResponse('The question set', successEnvelope(QuestionSetRead, 'QuestionSetResponse')),
      notFound: notFoundResponse,
    });
    resource.registerBodyPath(registry, {
      method: 'post',
      path: '/api/v1/question_sets',
      operationId: 'createQuestionSet',
      tags: ['Question sets'],
      summary: 'Create a question set for this account',
      description:
        'The definition holds typed questions (dropdown, number, text, date, date_range, named_insured, certificate_holder) and exactly one coverage question: `coverage_dates` (the product sells per covered day) or `trips` (per covered trip). Question ids are lower_snake_case and become the answer keys of adminValidateBuyerResponses. Sets cannot be changed or deleted afterwards: create a new one and point the product at it.',
      body: CreateQuestionSetBody,
      responses: {
        201: resource.jsonResponse('Created', successEnvelope(QuestionSetRead, 'QuestionSetCreatedResponse')),
      },
    });
    resource.registerIdPath(registry, {
      method: 'post',
      path: '/api/v1/question_sets/{id}/archive',
      operationId: 'archiveQuestionSet',
      tags: ['Question sets'],
      summary: 'Archive one of this account’s question sets',
      description:
        'Removes clutter such as test templates: the set is no longer listed, read or chosen for a product or bundle (404 from then on); products already using it keep it, and so do their purchases. Archiving it again answers the same `archivedAt`. A shared set is no account’s to archive (404); a set a live product uses cannot be archived (409 ARCHIVE_NOT_ALLOWED).',
      params: IdParam,
      ok: resource.jsonResponse('Archived', successEnvelope(ArchivedResource, 'QuestionSetArchivedResponse')),
      notFound: notFoundResponse,
      responses: { 409: resource.errorResponse('ARCHIVE_NOT_ALLOWED: a live product uses the set') },
    });
  };
}
