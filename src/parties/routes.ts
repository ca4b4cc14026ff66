/**
 * `GET /api/v1/parties`: the insurers and MGAs that appointed the key's account (./service.ts),
 * paged like the other lists (`pageSize` 1–100, default 20; `pageIndex` from 0): 200 with the
 * list envelope; 400 QUERY_VALIDATION_ERROR for a bad page or an unknown parameter.
 */
import type { RouteRegistration } from '../http/routes';
import * as resource from '../http/resource-routes';
import type { PartyService } from './service';
import { ListPartiesQuery, Party } from './schemas';

export function partyRoutes(service: PartyService): RouteRegistration {
  return (router, registry) => {
    resource.listRoute(router, '/parties', ListPartiesQuery, service.list, 'Parties retrieved');
    resource.registerListPath(registry, {
      path: '/api/v1/parties',
      operationId: 'listParties',
      tags: ['Parties'],
      summary: 'List the insurers and MGAs that appointed this account',
      description:
        'The insurers and MGAs this account sells for, oldest appointment first: each with its id (what a product’s `insurerRootAccountID` / `mgaRootAccountID` and a bordereau’s `party_id` take), kind, name, NAIC company code or register number, and the ids of this account’s products naming it. A product may name only a party listed here. Appointments are made by the service’s operators.',
      query: ListPartiesQuery,
      item: Party,
      envelopeId: 'PartyListResponse',
      responses: { 400: resource.errorResponse('QUERY_VALIDATION_ERROR: a bad page or an unknown query parameter') },
    });
  };
}
