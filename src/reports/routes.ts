/**
 * `/api/v1/reports/bordereaux`: ask for a month's premium bordereau of one party (202 while its
 * file is generated, 200 once ready: asked again, the same bordereau), list them (paged, filters
 * party, month, mode) and read one. Path ids that are not positive integers → 400
 * VALIDATION_ERROR; another account's bordereau → 404.
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { listMetadata } from '../http/query';
import { parseBody, parsePathId, parseQuery } from '../http/validation';
import { ErrorEnvelopeSchema, gatewayResponses, listEnvelope, successEnvelope } from '../http/openapi';
import type { ReportService } from './service';
import { Bordereau, CreateBordereauRequest, ListBordereauxQuery } from './schemas';

const IdParam = z.object({ id: z.string().meta({ description: 'Bordereau id, integer >= 1', example: '5' }) });
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ErrorEnvelopeSchema } } });

export function reportRoutes(service: ReportService): RouteRegistration {
  return (router, registry) => {
    router.post('/reports/bordereaux', async (ctx) => {
      const body = parseBody(CreateBordereauRequest, ctx.request.body ?? {});
      const { bordereau } = await service.request(ctx.state.principal!, body);
      ctx.status = bordereau.status === 'ready' ? 200 : 202;
      ctx.body = ok(bordereau, bordereau.status === 'ready' ? 'Bordereau ready' : 'Bordereau being generated');
    });
    router.get('/reports/bordereaux', async (ctx) => {
      const q = parseQuery(ListBordereauxQuery, ctx.query);
      const page = await service.list(ctx.state.principal!, q);
      ctx.body = ok(page.items, 'Bordereaux retrieved', listMetadata(page.total, page.items.length, q.pageSize, q.pageIndex));
    });
    router.get('/reports/bordereaux/:id', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      ctx.body = ok(await service.get(ctx.state.principal!, id), 'Bordereau retrieved');
    });

    registry.registerPath({
      method: 'post',
      path: '/api/v1/reports/bordereaux',
      operationId: 'requestBordereau',
      tags: ['Reports'],
      summary: 'Ask for one month’s premium bordereau of an insurer or MGA',
      description:
        'The month must be over. The first request creates the bordereau and generates its CSV file in the background (202, `generating`); asking again answers the same bordereau, and once it is `ready` (200) the same file and `sha256`: a delivered file is never rewritten, so a transaction recorded after the month ended appears in the month it was recorded, with its own effective date. Transactions belong to the month they were recorded in (UTC): paid, renewed, or a cancellation’s refund completed. A test key has test-mode bordereaux only; live bordereaux never hold test purchases.',
      request: { body: { required: true, content: { 'application/json': { schema: CreateBordereauRequest } } } },
      responses: {
        200: { description: 'Ready', content: { 'application/json': { schema: successEnvelope(Bordereau, 'BordereauReadyResponse') } } },
        202: {
          description: 'Being generated: read it again with getBordereau',
          content: { 'application/json': { schema: successEnvelope(Bordereau, 'BordereauGeneratingResponse') } },
        },
        ...gatewayResponses,
        400: errorResponse(
          'VALIDATION_ERROR: a malformed month or one not over yet, a party that is not an insurer or MGA this account’s products name, a live mode asked with a test key',
        ),
      },
    });
    registry.registerPath({
      method: 'get',
      path: '/api/v1/reports/bordereaux',
      operationId: 'listBordereaux',
      tags: ['Reports'],
      summary: 'List the account’s bordereaux, newest month first',
      request: { query: ListBordereauxQuery },
      responses: {
        200: { description: 'A page', content: { 'application/json': { schema: listEnvelope(Bordereau, 'BordereauListResponse') } } },
        ...gatewayResponses,
        400: errorResponse('QUERY_VALIDATION_ERROR: a bad filter or page, or `mode=live` with a test key'),
      },
    });
    registry.registerPath({
      method: 'get',
      path: '/api/v1/reports/bordereaux/{id}',
      operationId: 'getBordereau',
      tags: ['Reports'],
      summary: 'Read one bordereau, with a signed link to its file once ready',
      request: { params: IdParam },
      responses: {
        200: { description: 'The bordereau', content: { 'application/json': { schema: successEnvelope(Bordereau, 'BordereauResponse') } } },
        404: errorResponse('NOT_FOUND: no bordereau with that id for this key'),
        ...gatewayResponses,
      },
    });
  };
}
