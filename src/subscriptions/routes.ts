/**
 * `/api/v1/subscriptions`: the key's subscriptions (list, one) and their cancellation. GET → 200,
 * cancel → 200 (the subscription as it now stands, with the period's cancellation when it ended
 * now). Path ids that are not positive integers → 400 VALIDATION_ERROR; another account's, mode's
 * or teammate's subscription → 404 NOT_FOUND.
 */
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { parseBody, parsePathId } from '../http/validation';
import { gatewayResponses, successEnvelope } from '../http/openapi';
import * as resource from '../http/resource-routes';
import type { SubscriptionService } from './service';
import { CancelSubscriptionRequest, ListSubscriptionsQuery, Subscription, SubscriptionCancellation } from './schemas';

const IdParam = resource.idParam('Subscription id (its first purchase’s id), integer >= 1', '42');
const notFoundResponse = resource.errorResponse(
  'NOT_FOUND: no subscription with that id for this key (another account, mode or teammate reads the same)',
);

export function subscriptionRoutes(service: SubscriptionService): RouteRegistration {
  return (router, registry) => {
    resource.listRoute(router, '/subscriptions', ListSubscriptionsQuery, service.list, 'Subscriptions retrieved');
    resource.idRoute(router, 'get', '/subscriptions/:id', service.get, 'Subscription retrieved');
    router.post('/subscriptions/:id/cancel', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      const answer = await service.cancel(ctx.state.principal!, id, parseBody(CancelSubscriptionRequest, ctx.request.body));
      ctx.body = ok(answer.subscription, answer.message);
    });

    resource.registerListPath(registry, {
      path: '/api/v1/subscriptions',
      operationId: 'listSubscriptions',
      tags: ['Subscriptions'],
      summary: "List this key's subscriptions, newest first",
      description:
        "The key's root account's subscriptions in the key's mode (a teammate's key: that teammate's only). Each is named by its first purchase and lists its periods (one purchase each).",
      query: ListSubscriptionsQuery,
      item: Subscription,
      envelopeId: 'SubscriptionListResponse',
    });
    resource.registerIdPath(registry, {
      method: 'get',
      path: '/api/v1/subscriptions/{id}',
      operationId: 'getSubscription',
      tags: ['Subscriptions'],
      summary: 'Get one subscription with its periods',
      params: IdParam,
      ok: resource.jsonResponse('The subscription', successEnvelope(Subscription, 'SubscriptionResponse')),
      notFound: notFoundResponse,
    });
    registry.registerPath({
      method: 'post',
      path: '/api/v1/subscriptions/{id}/cancel',
      operationId: 'cancelSubscription',
      tags: ['Subscriptions'],
      summary: 'Cancel a subscription at the end of its period, or now with a refund of what has not started',
      description:
        '`at_period_end`: the payment processor stops renewing it when the paid period ends; that period’s certificates stay valid (asking again answers the same). `now`: the processor subscription is cancelled at once, and the current period’s covered units not started yet are cancelled like any cancellation (refund at the processor first, then their certificates voided; follow it on GET /api/v1/purchases/{id}). `subscription.cancelled` goes to your webhook endpoints, as it does when the processor ends a subscription by itself (an unpaid invoice, its dashboard). Send an Idempotency-Key header to retry safely.',
      request: { params: IdParam, body: resource.jsonBody(CancelSubscriptionRequest, false) },
      responses: {
        200: resource.jsonResponse(
          'The subscription as it now stands. The message says what happens: `at_period_end` answers "Subscription will end at the end of the current period on YYYY-MM-DD" (the period’s last day in its time zone; status stays `active` until then), `now` answers "Subscription cancelled"',
          successEnvelope(SubscriptionCancellation, 'SubscriptionCancellationResponse'),
        ),
        ...gatewayResponses,
        400: resource.errorResponse('VALIDATION_ERROR (a bad body or id), or the gateway’s codes'),
        404: notFoundResponse,
        409: resource.errorResponse(
          'SUBSCRIPTION_NOT_ACTIVE (its first period was never paid), SUBSCRIPTION_ALREADY_CANCELLED (it ended), or an Idempotency-Key reused or in progress',
        ),
        503: resource.errorResponse('CONNECTION_ERROR: the processor did not answer within 30 s; the cancellation goes on, ask again'),
      },
    });
  };
}
