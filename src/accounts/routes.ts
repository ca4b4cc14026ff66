/**
 * `GET /api/v1/account`: who the calling API key is (./service.ts); `PATCH /api/v1/account`
 * changes the account's settings and producer block (issue 50; 400 VALIDATION_ERROR for an unknown
 * setting or field). 200 in the envelope; the
 * gateway's 403 for a missing, unknown, frozen or deleted key; 400 QUERY_VALIDATION_ERROR for any
 * query parameter (it takes none, and an API that ignored one would hide a caller's typo).
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { parseBody, parseQuery } from '../http/validation';
import { gatewayResponses, successEnvelope } from '../http/openapi';
import * as resource from '../http/resource-routes';
import type { AccountService } from './service';
import { AccountRead, AccountUpdate } from './schemas';

/** The account takes no query parameter: any one is rejected by name. */
const NoQuery = z.strictObject({});

export function accountRoutes(service: AccountService): RouteRegistration {
  return (router, registry) => {
    router.get('/account', async (ctx) => {
      parseQuery(NoQuery, ctx.query);
      ctx.body = ok(await service.describe(ctx.state.principal!), 'Account retrieved');
    });
    router.patch('/account', async (ctx) => {
      parseQuery(NoQuery, ctx.query);
      const body = parseBody(AccountUpdate, ctx.request.body);
      ctx.body = ok(await service.update(ctx.state.principal!, body), 'Account updated');
    });
    resource.registerBodyPath(registry, {
      method: 'patch',
      path: '/api/v1/account',
      operationId: 'updateAccount',
      tags: ['Account'],
      summary: 'Change the account’s settings and producer block',
      description:
        'Changes account-wide settings (every key of the account, live or test, reads the same ones); a setting left out keeps its value. `send_buyer_email_after_payment` (on by default): the buyer of each purchase is emailed the proof of coverage once its certificates are issued, with the withdrawal link when the product offers one. `producer`: the address, phone, email and licence number the producer box of the account’s certificates prints beside its name (certificates issued from then on; a field left out keeps its value, null clears it). Answers the account as GET does.',
      body: AccountUpdate,
      responses: {
        200: resource.jsonResponse('The account, changed', successEnvelope(AccountRead, 'AccountResponse')),
        400: resource.errorResponse('VALIDATION_ERROR: an unknown setting or a value of the wrong type (or the gateway’s codes)'),
      },
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
