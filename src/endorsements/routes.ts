/**
 * `/api/v1/purchases/{id}/endorsement_quote` (201, a preview kept 15 minutes) and
 * `/api/v1/purchases/{id}/endorse` (200, carried out, or awaiting the payment of its difference
 * through a checkout link; new certificates and versions are issued after the answer). Path ids that are not positive integers → 400 VALIDATION_ERROR; another account's,
 * mode's or teammate's purchase → 404 NOT_FOUND.
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { parseBody, parsePathId } from '../http/validation';
import { successEnvelope } from '../http/openapi';
import * as resource from '../http/resource-routes';
import type { EndorsementService } from './service';
import { Endorsement, EndorseRequest, EndorsementQuoteRequest } from './schemas';

const IdParam = resource.idParam('Purchase id, integer >= 1', '42');
const QUOTE_404 = resource.errorResponse(
  'NOT_FOUND (no purchase with that id for this key), ENDORSEMENT_QUOTE_NOT_FOUND (not a quote of this purchase)',
);

export function endorsementRoutes(service: EndorsementService): RouteRegistration {
  return (router, registry) => {
    resource.scopedIdRoute(router, 'post', '/purchases/:id/endorsement_quote', {
      scope: service.assertOwned,
      body: EndorsementQuoteRequest,
      run: service.quote,
      answer: (quote) => ({ status: 201, data: quote, message: 'Endorsement quoted' }),
    });
    router.get('/purchases/:id/endorsements/:quoteId', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      // Whose purchase first (another account's id: 404 whatever the quote id), then the quote id.
      await service.assertOwned(ctx.state.principal!, id);
      const quoteId = parseBody(EndorseRequest.pick({ quote_id: true }), { quote_id: ctx.params.quoteId }).quote_id;
      ctx.body = ok(await service.get(ctx.state.principal!, id, quoteId), 'Endorsement');
    });
    resource.scopedIdRoute(router, 'post', '/purchases/:id/endorse', {
      scope: service.assertOwned,
      body: EndorseRequest,
      run: (principal, id, body) => service.endorse(principal, id, body.quote_id, body.payment),
      answer: (e) => ({ data: e, message: e.status === 'applied' ? 'Endorsement applied' : 'Endorsement awaiting payment' }),
    });

    resource.registerIdPath(registry, {
      method: 'post',
      path: '/api/v1/purchases/{id}/endorsement_quote',
      operationId: 'quoteEndorsement',
      tags: ['Purchases'],
      summary:
        'Preview a mid-term change: correct the named insured, change a holder’s description of operations, move a covered unit, add covered units, name a holder additional insured or waive subrogation against it',
      description:
        'Checks the changes against the purchase as it is now and answers the preview: the premium difference, the new total, the units added, the holder endorsement premiums, and the certificates in force that would be replaced by a new version. Covered units added cost the item’s unit price times its price factors per unit, plus the platform fee on it (and the premium of any holder already additional insured or with subrogation waived on that item); a moved day or trip keeps its price, since the product prices every covered unit of an item alike. Naming a holder additional insured or waiving subrogation costs the premium its products’ endorsement_terms set, per covered unit still active for the holder, plus the platform fee on it; removing one gives back (a negative difference) what was collected for it on the units not started, with no platform fee. Priced changes go in an endorsement of their own, and a subscription’s purchase cannot gain units. The quote is kept for 15 minutes; carry it out with endorse. A purchase that changes in the meantime (a cancellation, a holder, another endorsement) makes it stale.',
      params: IdParam,
      body: EndorsementQuoteRequest,
      notFound: resource.errorResponse(
        'NOT_FOUND: no purchase with that id for this key, or no active certificate holder or purchase item with that id',
      ),
      responses: {
        201: resource.jsonResponse('The preview, stored', successEnvelope(Endorsement, 'EndorsementQuoteResponse')),
        400: resource.errorResponse(
          'VALIDATION_ERROR (a bad body; a text too long for the certificate’s boxes; a move or an added unit in the past, onto another unit’s window, of the wrong shape for the item, or beyond the item’s most covered units), UNKNOWN_COVERED_UNIT, or the gateway’s codes',
        ),
        409: resource.errorResponse(
          'PURCHASE_NOT_CHANGEABLE (not paid, refunded in full, or its certificates still being issued), COVERED_UNIT_STARTED, COVERED_UNIT_ALREADY_CANCELLED, NOTHING_TO_ENDORSE (a move to the window it already covers; a holder that already has the endorsements asked), ENDORSEMENT_NOT_ALLOWED (a holder endorsement a product of the purchase does not allow)',
        ),
      },
    });
    resource.registerIdPath(registry, {
      method: 'get',
      path: '/api/v1/purchases/{id}/endorsements/{quoteId}',
      operationId: 'getEndorsement',
      tags: ['Purchases'],
      summary: 'Read an endorsement quote or endorsement as it stands now',
      description:
        'Answers the quote (`quoted`), the payment of its difference in progress (`awaiting_payment`, with the checkout link), the endorsement applied, or how it ended without a change (`payment_failed`, `refunded`). Poll it after sending a checkout link.',
      params: IdParam.extend({
        quoteId: z.string().meta({ description: 'The endorsement quote’s id (eq_…)', example: 'eq_5a6b7c8d9e0f1a2b3c4d5e6f' }),
      }),
      ok: resource.jsonResponse('The endorsement', successEnvelope(Endorsement, 'EndorsementReadResponse')),
      notFound: QUOTE_404,
      responses: {
        400: resource.errorResponse(
          'VALIDATION_ERROR (an id that is not a positive integer, a quote id that is not eq_…), or the gateway’s codes',
        ),
      },
    });
    resource.registerIdPath(registry, {
      method: 'post',
      path: '/api/v1/purchases/{id}/endorse',
      operationId: 'endorsePurchase',
      tags: ['Purchases'],
      summary: 'Carry out an endorsement quote',
      description:
        'Applies the quoted changes and replaces each certificate they touch by a new version (the same number with a higher revision, `-R2`, …); a stored PDF is never edited. The answer comes at once; the new versions are rendered and stored after it, then `certificates.reissued` is sent with each old → new number, and the old version’s verification page says it was superseded, with a link to the new one. Changes of one purchase (cancellations, holders, endorsements) are applied one at a time. The same quote_id again answers the same endorsement: safe to retry.\n\nA quote that adds covered units (a positive `total_difference`) needs `payment`. `saved_card` charges a card saved on the buyer’s processor customer now (off-session): the answer is `applied`, or 400 CARD_ERROR when the card is declined (the endorsement ends `payment_failed`; nothing changed). `checkout_link` answers `awaiting_payment` with `payment.checkout_url` (open 24 hours) for the agency to send; once the buyer pays, the units are added in turn with the purchase’s other changes, their certificates issued and `certificates.issued` sent again. A link paid after the purchase changed so that the quote no longer holds is refunded in full (`refunded`). A later cancellation refunds across the payments (the newest first).\n\nA quote with a negative `total_difference` (a holder’s paid endorsement removed) is sent without `payment`: it is applied at once, and the amount goes back after the answer, split over the purchase’s payments newest first; `refund` shows each part once created at the processor (poll the endorsement).',
      params: IdParam,
      body: EndorseRequest,
      ok: resource.jsonResponse(
        'Applied, or awaiting the payment of its difference through the checkout link',
        successEnvelope(Endorsement, 'EndorsementResponse'),
      ),
      notFound: QUOTE_404,
      responses: {
        400: resource.errorResponse(
          'VALIDATION_ERROR (a quote_id that is not eq_…; payment for a quote with nothing to collect), CARD_ERROR (the saved card was declined: nothing changed), or the gateway’s codes',
        ),
        402: resource.errorResponse('PAYMENT_REQUIRED: the quote has a positive difference and no payment was named'),
        409: resource.errorResponse(
          'ENDORSEMENT_QUOTE_EXPIRED (also a quote whose payment failed), ENDORSEMENT_QUOTE_STALE (the purchase changed since the quote: ask for a new one), ENDORSEMENT_PAYMENT_IN_PROGRESS (its difference is already being collected by the other method), PURCHASE_NOT_CHANGEABLE, COVERED_UNIT_STARTED, or an Idempotency-Key reused or in progress',
        ),
      },
    });
  };
}
