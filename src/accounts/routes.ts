/**
 * `GET /api/v1/account`: who the calling API key is (./service.ts). 200 in the envelope; the
 * gateway's 403 for a missing, unknown, frozen or deleted key; 400 QUERY_VALIDATION_ERROR for any
 * query parameter (it takes none, and an API that ignored one would hide a caller's typo).
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { parseQuery } from '../http/validation';
import { gatewayResponses, successEnvelope } from '../http/openapi';
import type { AccountService } from './service';
import { AccountRead } from './schemas';

/** The account takes no query parameter: any one is rejected by name. */
const NoQuery = z.strictObject({});

export function accountRoutes(service: AccountService): RouteRegistration {
  return (router, registry) => {
    router.get('/account', async (ctx) => {
      parseQuery(NoQuery, ctx.query);
      ctx.body = ok(await service.describe(ctx.state.principal!), 'Account retrieved');
    });
    registry.registerPath({
      method: 'get',
      path: '/api/v1/account',
      operationId: 'getAccount',
      tags: ['Account'],
      summary: 'Who this API key is: its account, teammates, mode and platform fee',
      description:
        'The first call of an integration: the root account (id, name, slug, idp_root_account_uuid), its teammates (idp_teammate_uuid), and this key (mode, the teammate it sells as, its platform fee), with whether its payments reach the processor’s live or test mode. These are the ids the buyer, quote and certificate operations ask for.',
      responses: {
        200: { description: 'The account', content: { 'application/json': { schema: successEnvelope(AccountRead, 'AccountResponse') } } },
        ...gatewayResponses,
      },
    });
  };
}
