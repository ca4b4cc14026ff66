/**
 * `/api/v1/reports/bordereaux`: ask for a month's premium bordereau of one party (202 while its
 * file is generated, 200 once ready: asked again, the same bordereau), list them (paged, filters
 * party, month, mode) and read one. Path ids that are not positive integers → 400
 * VALIDATION_ERROR; another account's bordereau → 404.
 */
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { parseBody } from '../http/validation';
import { successEnvelope } from '../http/openapi';
import * as resource from '../http/resource-routes';
import type { ReportService } from './service';
import { Bordereau, CreateBordereauRequest, ListBordereauxQuery } from './schemas';

const IdParam = resource.idParam('Bordereau id, integer >= 1', '5');

export function reportRoutes(service: ReportService): RouteRegistration {
  return (router, registry) => {
    router.post('/reports/bordereaux', async (ctx) => {
      const body = parseBody(CreateBordereauRequest, ctx.request.body ?? {});
      const { bordereau } = await service.request(ctx.state.principal!, body);
      ctx.status = bordereau.status === 'ready' ? 200 : 202;
      ctx.body = ok(bordereau, bordereau.status === 'ready' ? 'Bordereau ready' : 'Bordereau being generated');
    });
    resource.listRoute(router, '/reports/bordereaux', ListBordereauxQuery, service.list, 'Bordereaux retrieved');
    resource.idRoute(router, 'get', '/reports/bordereaux/:id', service.get, 'Bordereau retrieved');

    resource.registerBodyPath(registry, {
      method: 'post',
      path: '/api/v1/reports/bordereaux',
      operationId: 'requestBordereau',
      tags: ['Reports'],
      summary: 'Ask for one month’s premium bordereau of an insurer or MGA',
      description:
        'The month must be over. The first request creates the bordereau and generates its CSV file in the background (202, `generating`); asking again answers the same bordereau, and once it is `ready` (200) the same file and `sha256`: a delivered file is never rewritten, so a transaction recorded after the month ended appears in the month it was recorded, with its own effective date. Transactions belong to the month they were recorded in (UTC): paid, renewed, or a cancellation’s refund completed. A test key has test-mode bordereaux only; live bordereaux never hold test purchases.',
      body: CreateBordereauRequest,
      responses: {
        200: resource.jsonResponse('Ready', successEnvelope(Bordereau, 'BordereauReadyResponse')),
        202: resource.jsonResponse(
          'Being generated: read it again with getBordereau',
          successEnvelope(Bordereau, 'BordereauGeneratingResponse'),
        ),
        400: resource.errorResponse(
          'VALIDATION_ERROR: a malformed month or one not over yet, a party that is not an insurer or MGA this account’s products name, a live mode asked with a test key',
        ),
      },
    });
    resource.registerListPath(registry, {
      path: '/api/v1/reports/bordereaux',
      operationId: 'listBordereaux',
      tags: ['Reports'],
      summary: 'List the account’s bordereaux, newest month first',
      query: ListBordereauxQuery,
      item: Bordereau,
      envelopeId: 'BordereauListResponse',
      responses: { 400: resource.errorResponse('QUERY_VALIDATION_ERROR: a bad filter or page, or `mode=live` with a test key') },
    });
    resource.registerIdPath(registry, {
      method: 'get',
      path: '/api/v1/reports/bordereaux/{id}',
      operationId: 'getBordereau',
      tags: ['Reports'],
      summary: 'Read one bordereau, with a signed link to its file once ready',
      params: IdParam,
      ok: resource.jsonResponse('The bordereau', successEnvelope(Bordereau, 'BordereauResponse')),
      notFound: resource.errorResponse('NOT_FOUND: no bordereau with that id for this key'),
    });
  };
}
