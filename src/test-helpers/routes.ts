/**
 * `/api/v1/test_helpers/purchases/{id}/pay` and `/expire`: drive a test purchase's checkout
 * without a browser or the platform's webhook secret; `/refund` and `/renew`: what the processor
 * reports after the payment (a refund made in its dashboard, a subscription's next paid invoice);
 * `/dispute`: a buyer's chargeback, left open or decided;
 * `/test_clock`: move its policy's clock forward (see `service.ts`). Test-mode keys only: a
 * live key gets 404 ROUTE_NOT_FOUND. 200 with the event delivered; the workflow then moves the
 * purchase on (poll getCertificates or the purchase's status).
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { parseBody, parsePathId } from '../http/validation';
import { ErrorEnvelopeSchema, gatewayResponses, successEnvelope } from '../http/openapi';
import type { TestHelperService } from './service';

const PayBody = z
  .strictObject({
    outcome: z.enum(['paid', 'failed']).default('paid').meta({
      description:
        '`paid` (default): the checkout completed and was paid. `failed`: the buyer’s payment failed after checkout; the purchase ends `failed`.',
    }),
  })
  .meta({ id: 'TestHelperPayRequest' });
const ExpireBody = z.strictObject({}).meta({ id: 'TestHelperExpireRequest' });
const TestClockBody = z
  .strictObject({
    frozen_time: z.iso.datetime({ offset: true }).meta({
      description:
        'The purchase’s new now (ISO 8601 with offset): not before its clock (or the real now, the first time), at most 5 years ahead',
      example: '2026-12-24T09:00:00Z',
    }),
  })
  .meta({ id: 'TestHelperTestClockRequest' });
const TestClockResult = z
  .object({
    purchase_id: z.number().int(),
    test_clock: z.string().meta({ description: 'The purchase’s test clock as now stored, ISO 8601 UTC' }),
    policy_notified: z
      .boolean()
      .meta({ description: 'Whether the purchase’s policy workflow was open and told (it is whenever a cancellation is scheduled)' }),
  })
  .meta({ id: 'TestHelperTestClockResult' });

const TestHelperResult = z
  .object({
    purchase_id: z.number().int(),
    event: z.object({
      id: z.string().meta({ example: 'evt_testhelper_3f9c…' }),
      type: z.string().meta({ example: 'checkout.session.completed' }),
    }),
    relayed: z.boolean().meta({ description: 'The event reached the purchase’s workflow (or started its recovery)' }),
    purchase_status: z.string().meta({
      description:
        'The purchase’s status after the event: `paid`, `awaiting_certificates` or `issued` after a payment, `failed`, `expired` (or, if its workflow took longer than 5 s to apply it, the status before)',
      example: 'awaiting_certificates',
    }),
    payment_intent: z.string().nullable().meta({
      description:
        'The payment intent the event reported: a new one for each paid test purchase (use it, or better purchase_id, with getCertificates); null for an expiry',
      example: 'pi_testhelper_5b0e…',
    }),
  })
  .meta({ id: 'TestHelperResult' });

const RefundBody = z
  .strictObject({
    amount: z.number().int().min(1).max(99_999_999).optional().meta({
      description:
        'How much to refund, in minor units of the purchase’s currency (cents for usd): at most what is left to refund. Default: all that is left (a full refund).',
      example: 1500,
    }),
  })
  .meta({ id: 'TestHelperRefundRequest' });
const RenewBody = z.strictObject({}).meta({ id: 'TestHelperRenewRequest' });
const TestHelperEvent = z.object({
  id: z.string().meta({ example: 'evt_testhelper_3f9c…' }),
  type: z.string().meta({ example: 'charge.refunded' }),
});
const TestRefundResult = z
  .object({
    purchase_id: z.number().int(),
    event: TestHelperEvent,
    relayed: z.boolean().meta({ description: 'The event reached the refund handling' }),
    amount: z.number().int().meta({ description: 'This refund, minor units', example: 1500 }),
    amount_refunded: z.number().int().meta({
      description:
        'Refunded on the purchase in all, this refund included, minor units (as recorded within 5 s; the earlier total if it took longer)',
      example: 1500,
    }),
    refunded: z.boolean().meta({ description: 'Whether the purchase is refunded in full now: status `refunded`, its certificates void' }),
    purchase_status: z.string().meta({ example: 'issued' }),
  })
  .meta({ id: 'TestHelperRefundResult' });
const TestRenewalResult = z
  .object({
    purchase_id: z.number().int().meta({ description: 'The subscription’s first purchase (the one the processor’s invoice names)' }),
    event: TestHelperEvent,
    relayed: z.boolean().meta({ description: 'The event reached the renewal handling' }),
    invoice: z.string().meta({ description: 'The made-up invoice that paid the period', example: 'in_testhelper_9a1f…' }),
    payment_intent: z.string().meta({
      description: 'Its made-up payment intent: the new period’s handle for getCertificates (or use renewal_purchase_id)',
      example: 'pi_testhelper_77c2…',
    }),
    renewal_purchase_id: z.number().int().nullable().meta({
      description:
        'The new period’s purchase, its certificates being issued; null if the renewal took longer than 5 s to create (list the subscription’s periods to find it)',
    }),
    renewal_period: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Which renewal it is: 1 for the first renewal (the second month), 2 for the next…' }),
  })
  .meta({ id: 'TestHelperRenewResult' });

const DISPUTE_REASONS = [
  'fraudulent',
  'product_not_received',
  'product_unacceptable',
  'duplicate',
  'subscription_canceled',
  'credit_not_processed',
  'unrecognized',
  'general',
] as const;
const DisputeBody = z
  .strictObject({
    outcome: z.enum(['open', 'won', 'lost']).default('open').meta({
      description:
        '`open` (default): the buyer disputed the payment and it awaits an answer. `won`: then decided for you (the money returns). `lost`: then decided for the buyer.',
    }),
    reason: z
      .enum(DISPUTE_REASONS)
      .default('fraudulent')
      .meta({ description: 'The reason the buyer’s bank gives, in the processor’s words' }),
    amount: z
      .number()
      .int()
      .min(1)
      .max(99_999_999)
      .optional()
      .meta({ description: 'Amount disputed, minor units (default: the purchase’s total; at most that)', example: 7688 }),
  })
  .meta({ id: 'TestHelperDisputeRequest' });
const TestDisputeResult = z
  .object({
    purchase_id: z.number().int(),
    dispute: z.string().meta({
      description: 'The made-up processor dispute (`dp_testhelper_…`): `id` of the dispute events’ object',
      example: 'dp_testhelper_0c1d…',
    }),
    events: z.array(TestHelperEvent).meta({
      description: 'The processor events delivered, in order: charge.dispute.created, then charge.dispute.closed for won or lost',
    }),
    relayed: z.boolean().meta({ description: 'Every event reached the dispute handling' }),
    status: z.string().nullable().meta({
      description: 'The dispute’s status as recorded (needs_response, won or lost); null if not recorded within 5 s',
      example: 'lost',
    }),
  })
  .meta({ id: 'TestHelperDisputeResult' });

const IdParam = z.object({
  id: z.string().meta({ description: 'Purchase id (`purchase_id` of the checkout), integer >= 1', example: '42' }),
});
const errors = {
  400: {
    description: 'VALIDATION_ERROR (body or id), INVALID_REQUEST (no checkout session yet, or no longer awaiting payment)',
    content: { 'application/json': { schema: ErrorEnvelopeSchema } },
  },
  404: {
    description: 'ROUTE_NOT_FOUND for a live key; NOT_FOUND for a purchase that is not this account’s test purchase',
    content: { 'application/json': { schema: ErrorEnvelopeSchema } },
  },
};

export function testHelperRoutes(service: TestHelperService): RouteRegistration {
  return (router, registry) => {
    router.post('/test_helpers/purchases/:id/pay', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      const body = parseBody(PayBody, ctx.request.body);
      const result = await service.pay(ctx.state.principal!, id, body.outcome);
      ctx.body = ok(result, body.outcome === 'paid' ? 'Test payment delivered' : 'Test payment failure delivered');
    });
    router.post('/test_helpers/purchases/:id/expire', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      parseBody(ExpireBody, ctx.request.body);
      ctx.body = ok(await service.expire(ctx.state.principal!, id), 'Test checkout expiry delivered');
    });

    router.post('/test_helpers/purchases/:id/refund', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      // Whose purchase first (a live key, another account's id: 404 whatever the body), then the body.
      await service.ownTestPurchase(ctx.state.principal!, id);
      const body = parseBody(RefundBody, ctx.request.body ?? {});
      ctx.body = ok(await service.refund(ctx.state.principal!, id, body.amount), 'Test refund delivered');
    });
    router.post('/test_helpers/purchases/:id/renew', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      await service.ownTestPurchase(ctx.state.principal!, id);
      parseBody(RenewBody, ctx.request.body ?? {});
      ctx.body = ok(await service.renew(ctx.state.principal!, id), 'Test renewal delivered');
    });

    router.post('/test_helpers/purchases/:id/dispute', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      await service.ownTestPurchase(ctx.state.principal!, id);
      const body = parseBody(DisputeBody, ctx.request.body ?? {});
      ctx.body = ok(
        await service.dispute(ctx.state.principal!, id, {
          outcome: body.outcome,
          reason: body.reason,
          ...(body.amount ? { amountMinor: body.amount } : {}),
        }),
        'Test dispute delivered',
      );
    });

    router.post('/test_helpers/purchases/:id/test_clock', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      // Whose purchase first (a live key, another account's id: 404 whatever the body), then the body.
      await service.ownTestPurchase(ctx.state.principal!, id);
      const body = parseBody(TestClockBody, ctx.request.body ?? {});
      ctx.body = ok(await service.advanceTestClock(ctx.state.principal!, id, new Date(body.frozen_time)), 'Test clock advanced');
    });

    registry.registerPath({
      method: 'post',
      path: '/api/v1/test_helpers/purchases/{id}/test_clock',
      operationId: 'advanceTestClock',
      tags: ['Test helpers'],
      summary: 'Move a test purchase’s clock forward, to see covered units start and scheduled cancellations happen',
      description:
        'Test-mode keys only (a live purchase never has a test clock). Like the processor’s test clocks: from now on the purchase’s own "now" is `frozen_time`, until moved again. Covered units that start by then count as started (`coverage_started`, earned, no longer cancellable), a cancellation quote without effective_at takes effect then, and a cancellation scheduled up to then is carried out (refund, voided certificates, events) within moments. The clock only moves forward. Certificates, emails and the processor keep the real time.',
      request: { params: IdParam, body: { required: true, content: { 'application/json': { schema: TestClockBody } } } },
      responses: {
        200: {
          description: 'The clock moved',
          content: { 'application/json': { schema: successEnvelope(TestClockResult, 'TestHelperTestClockResponse') } },
        },
        ...gatewayResponses,
        400: {
          description: 'VALIDATION_ERROR (body or id; a time before the clock, or more than 5 years ahead)',
          content: { 'application/json': { schema: ErrorEnvelopeSchema } },
        },
        404: errors[404],
      },
    });
    registry.registerPath({
      method: 'post',
      path: '/api/v1/test_helpers/purchases/{id}/pay',
      operationId: 'payTestPurchase',
      tags: ['Test helpers'],
      summary: 'Pay (or fail) a test purchase’s checkout, as the processor’s signed event would',
      description:
        'Test-mode keys only. Sends the purchase the same signed event the processor sends when a checkout is paid (`checkout.session.completed`) or its payment fails afterwards (`checkout.session.async_payment_failed`), through the same webhook handling; certificates follow as after a real payment. No money moves: the payment intent id is made up (`pi_testhelper_…`), and a subscription paid this way has no processor subscription: its next months come from the renew helper.',
      request: { params: IdParam, body: { required: false, content: { 'application/json': { schema: PayBody } } } },
      responses: {
        200: {
          description: 'Delivered',
          content: { 'application/json': { schema: successEnvelope(TestHelperResult, 'TestHelperPayResponse') } },
        },
        ...gatewayResponses,
        ...errors,
      },
    });
    registry.registerPath({
      method: 'post',
      path: '/api/v1/test_helpers/purchases/{id}/refund',
      operationId: 'refundTestPurchase',
      tags: ['Test helpers'],
      summary: 'Refund a paid test purchase in full or in part, as the processor reports a refund made in its dashboard',
      description:
        'Test-mode keys only. Sends the signed `charge.refunded` event the processor sends when a payment is refunded outside this service (its dashboard, a support agent), through the same webhook handling: the refund is recorded on the purchase (`refunded_minor` grows by `amount`); a refund of all that is left ends the purchase `refunded`, voids its certificates (the verification page says so) and sends your endpoints `purchase.refunded`. Refund in parts by calling again, one call after the other. No money moves. To cancel covered units with a refund computed by the product’s terms, use a cancellation instead.',
      request: { params: IdParam, body: { required: false, content: { 'application/json': { schema: RefundBody } } } },
      responses: {
        200: {
          description: 'Delivered',
          content: { 'application/json': { schema: successEnvelope(TestRefundResult, 'TestHelperRefundResponse') } },
        },
        ...gatewayResponses,
        400: {
          description:
            'VALIDATION_ERROR (body or id; an amount above what is left to refund), INVALID_REQUEST (not paid, or refunded in full already)',
          content: { 'application/json': { schema: ErrorEnvelopeSchema } },
        },
        404: errors[404],
      },
    });
    registry.registerPath({
      method: 'post',
      path: '/api/v1/test_helpers/purchases/{id}/renew',
      operationId: 'renewTestSubscription',
      tags: ['Test helpers'],
      summary: 'Pay a test subscription’s next month, as the processor reports its billing-cycle invoice paid',
      description:
        'Test-mode keys only. `id` is any period of a paid subscription purchase. Sends the signed `invoice.paid` event (billing reason `subscription_cycle`) the processor sends each month, through the same webhook handling: the next period’s purchase is created with its covered units for the next month (a month covered every day: every day of the next, from where the last period ended), its certificates are issued, and your endpoints get `subscription.renewed` then `certificates.issued`. Each call pays one more month; a subscription set to cancel at its period’s end is 409 SUBSCRIPTION_ENDING (the processor would send no invoice). No money moves: the invoice and payment intent ids are made up.',
      request: { params: IdParam, body: { required: false, content: { 'application/json': { schema: RenewBody } } } },
      responses: {
        200: {
          description: 'Delivered',
          content: { 'application/json': { schema: successEnvelope(TestRenewalResult, 'TestHelperRenewResponse') } },
        },
        ...gatewayResponses,
        400: {
          description:
            'VALIDATION_ERROR (body or id), INVALID_REQUEST (a one-time purchase, a subscription not paid yet, or one that has ended)',
          content: { 'application/json': { schema: ErrorEnvelopeSchema } },
        },
        404: errors[404],
        409: {
          description:
            'SUBSCRIPTION_ENDING: the subscription is set to cancel at the end of its current period (the processor sends no further invoice), so it does not renew',
          content: { 'application/json': { schema: ErrorEnvelopeSchema } },
        },
      },
    });
    registry.registerPath({
      method: 'post',
      path: '/api/v1/test_helpers/purchases/{id}/dispute',
      operationId: 'disputeTestPurchase',
      tags: ['Test helpers'],
      summary: 'Dispute a paid test purchase’s payment (a chargeback), as the processor reports one, and optionally decide it',
      description:
        'Test-mode keys only. Sends the signed `charge.dispute.created` event the processor sends when a buyer disputes a payment with their bank, about the purchase’s payment intent, through the same webhook handling; with `outcome` `won` or `lost`, then `charge.dispute.closed`. The dispute is recorded on the purchase and your endpoints get `dispute.opened` (and `dispute.closed`). No money moves, and the policy stays as it is: cancel it yourself if a lost dispute should end it.',
      request: { params: IdParam, body: { required: false, content: { 'application/json': { schema: DisputeBody } } } },
      responses: {
        200: {
          description: 'Delivered',
          content: { 'application/json': { schema: successEnvelope(TestDisputeResult, 'TestHelperDisputeResponse') } },
        },
        ...gatewayResponses,
        400: {
          description: 'VALIDATION_ERROR (body or id; an amount above the total), INVALID_REQUEST (not paid)',
          content: { 'application/json': { schema: ErrorEnvelopeSchema } },
        },
        404: errors[404],
      },
    });
    registry.registerPath({
      method: 'post',
      path: '/api/v1/test_helpers/purchases/{id}/expire',
      operationId: 'expireTestPurchase',
      tags: ['Test helpers'],
      summary: 'End a test purchase’s checkout unpaid, as the processor’s expiry event would',
      description:
        'Test-mode keys only. Sends the purchase a signed `checkout.session.expired` event through the webhook handling; the purchase ends `expired`. The processor’s own test session is not touched: a payment that still reaches it is honoured, as for any purchase.',
      request: { params: IdParam, body: { required: false, content: { 'application/json': { schema: ExpireBody } } } },
      responses: {
        200: {
          description: 'Delivered',
          content: { 'application/json': { schema: successEnvelope(TestHelperResult, 'TestHelperExpireResponse') } },
        },
        ...gatewayResponses,
        ...errors,
      },
    });
  };
}
