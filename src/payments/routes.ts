/**
 * Payment-option routes on `/public-quote` (spec §4.4 step 3 (b) and (c)): POST only,
 * snake_case JSON, 200 without envelope; failures are the bare error of spec §7.2. Bodies are
 * never logged: they carry buyer access tokens.
 */
import type { RouteRegistration } from '../http/routes';
import { parseBody } from '../http/validation';
import { bareError, bareSurfaceResponses } from '../http/openapi';
import type { PaymentService } from './service';
import { DirectPaymentRequest, DirectPaymentResponse, EmailCheckoutLinkRequest, EmailCheckoutLinkResponse } from './schemas';
import * as resource from '../http/resource-routes';

const tokenErrors = bareError('ACCESS_TOKEN_INVALID or ACCESS_TOKEN_EXPIRED');
const purchaseNotFound = bareError("NOT_FOUND: no purchase with that id for this API key's account and this buyer");

/** Mounts the payment-option routes (under the `/public-quote` router) and registers them in OpenAPI. */
export function paymentRoutes(service: PaymentService): RouteRegistration {
  return (router, registry) => {
    router.post('/emailCheckoutLink', async (ctx) => {
      ctx.body = await service.emailCheckoutLink(ctx.state.principal!, parseBody(EmailCheckoutLinkRequest, ctx.request.body));
    });
    router.post('/processUserDirectPayprocPayment', async (ctx) => {
      ctx.body = await service.chargeSavedCard(ctx.state.principal!, parseBody(DirectPaymentRequest, ctx.request.body));
    });

    registry.registerPath({
      method: 'post',
      path: '/public-quote/emailCheckoutLink',
      operationId: 'emailCheckoutLink',
      tags: ['Quote'],
      summary: "Email the purchase's checkout link to the buyer (payment option b)",
      description:
        'Sends the checkout session adminValidateBuyerResponses created (the same session, not a new one) to the buyer’s email, with the products, the total and the expiry. A call sends one email, except that a repeat for the same purchase within 10 minutes (the service’s window, CHECKOUT_LINK_EMAIL_DEDUPE_SECONDS) of an email of the same link to the same buyer sends nothing and answers that email’s `emailed_at` with `deduplicated: true`, so a retry or a double click never floods the buyer. Concurrent calls for one purchase send once. If the email cannot be sent (500), nothing is recorded and a retry sends it.',
      request: { body: resource.jsonBody(EmailCheckoutLinkRequest) },
      responses: {
        ...bareSurfaceResponses,
        200: resource.jsonResponse('Emailed', EmailCheckoutLinkResponse),
        400: bareError('VALIDATION_ERROR, or INVALID_REQUEST: the purchase is not awaiting payment (already paid or expired)'),
        401: tokenErrors,
        404: purchaseNotFound,
        500: bareError('INTERNAL_ERROR (e.g. the email could not be sent; retry with backoff)'),
      },
    });
    registry.registerPath({
      method: 'post',
      path: '/public-quote/processUserDirectPayprocPayment',
      operationId: 'processUserDirectPayprocPayment',
      tags: ['Quote'],
      summary: "Charge the purchase to the buyer's saved payment method, off-session (payment option c)",
      description:
        'Charges the purchase total (minor units) once, off-session, to a payment method saved on the buyer’s processor customer. A subscription purchase (recurring products) becomes a processor subscription on that payment method, so the monthly renewals and their certificates follow. Safe to call again after a timeout or error: the charge runs in the purchase’s workflow, which settles the earlier attempt (same idempotency key, or the stored payment intent) and never creates a second charge. A declined card is CARD_ERROR; retry only with a different card. On success certificates follow as for any paid purchase, and the checkout link is closed.',
      request: { body: resource.jsonBody(DirectPaymentRequest) },
      responses: {
        ...bareSurfaceResponses,
        200: resource.jsonResponse('Charged (or already charged by an earlier call)', DirectPaymentResponse),
        400: bareError(
          'VALIDATION_ERROR; CARD_ERROR (declined, with decline_code; retry only with a different card); INVALID_REQUEST (not awaiting payment, another charge in flight, or the processor refused the request)',
        ),
        401: bareError('ACCESS_TOKEN_INVALID, ACCESS_TOKEN_EXPIRED, or AUTHENTICATION_ERROR (the processor account)'),
        404: purchaseNotFound,
        500: bareError('INTERNAL_ERROR or API_ERROR: call again (it checks before charging)'),
        503: bareError(
          'CONNECTION_ERROR: the charge did not finish within 30 s (the processor may be unreachable); it goes on in the background: call again with the same payment method to learn its outcome (it never charges twice)',
        ),
      },
    });
  };
}
