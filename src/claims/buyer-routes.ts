/**
 * The buyer's claim page (no API key; on the public router beside the withdrawal page):
 *
 * - `GET /claim/<token>`: the claim form (covered units in force, the products' claim types) and
 *   the claims already filed on the purchase. Changes nothing.
 * - `POST /claim/<token>` (form): files the claim through the claims service, as the API does.
 *
 * HTML only. Status: 200 for a page that shows the state and for a claim filed (or the same form
 * again), 400 for a form with mistakes (shown with the error summary), 409 for a claim refused as
 * it stands (an open claim on the same day, a cancelled cover), 404 for a forged, damaged or
 * unknown link (one page for all), 403 for a cross-site POST. Headers, CSP and the per-address
 * limit as the other buyer pages (src/http/buyer-pages.ts).
 */
import { z } from 'zod';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RouteRegistration } from '../http/routes';
import { htmlResponse, mountBuyerPage, registerBuyerPage, type BuyerPage } from '../http/buyer-pages';
import { renderClaimCrossSiteRefusal, renderClaimPage } from './buyer-page';
import type { BuyerClaimService, BuyerClaimView } from './buyer-service';
import { CLAIM_PAGE_PATH } from './buyer-link';

const TokenParam = z.object({
  token: z.string().max(200).meta({
    description: 'The signed claim token, as the link carries it (`c1.<purchase id>.<signature>`)',
    example: 'c1.42.3q2Vt1m0cY8nK2pZr5LwX7aBdE9fGhJkM4sTuVxYz1A',
  }),
});

const text = (description: string, example: string) => z.string().meta({ description, example });
const ClaimForm = z.object({
  submission: text('The per-render nonce the page put in its form (a form sent twice files one claim)', '9f1c2d3e4b5a6c7d8e9f0a1b2c3d4e5f'),
  covered_unit: text('The covered unit’s id, from the page’s list', '17'),
  incident_date: text('The incident’s local date', '2027-05-01'),
  incident_time: text('The incident’s local time, in the covered unit’s time zone', '19:30'),
  claim_type: text('One of the claim types the page lists', 'property_damage'),
  description: text('What happened', 'A storm flooded the marquee.'),
  amount: text('The amount claimed in major units of the purchase’s currency (kept as integer minor units)', '1250.00'),
  name: text('The claimant’s name', 'Kim Park'),
  email: text('The claimant’s email', 'kim@example.com'),
  phone: text('The claimant’s phone (may be empty)', '+1 608 555 0100'),
});

function statusOf(v: BuyerClaimView): number {
  if (v.kind === 'not_found') return 404;
  if (v.kind === 'form') return v.refused ?? 200;
  return 200;
}

export function buyerClaimRoutes(service: BuyerClaimService, limiter: RateLimiterAbstract): RouteRegistration {
  return (router, registry) => {
    const page: BuyerPage<BuyerClaimView> = {
      path: `${CLAIM_PAGE_PATH}/:token`,
      limitName: 'claim-page',
      formLimit: '16kb',
      formName: 'a claim form',
      show: service.show,
      submit: service.submit,
      render: renderClaimPage,
      status: statusOf,
      crossSiteRefusal: renderClaimCrossSiteRefusal,
    };
    mountBuyerPage(router, limiter, page);

    registerBuyerPage(registry, page, {
      token: TokenParam,
      form: ClaimForm,
      get: {
        operationId: 'getClaimPage',
        summary: 'The buyer’s claim page: a form to file a claim, and the claims filed',
        description:
          'No API key; the signed link of the proof-of-coverage email sent to the buyer. Shows a form for a first notice of loss (the covered day or trip, the incident’s local date and time, the kind of loss from the products’ claim types, what happened, the amount, the claimant’s contact) and the purchase’s claims with their status. Opening it changes nothing. Photos and receipts are not taken here: the agency adds them through the API. HTML only.',
        responses: {
          200: htmlResponse('The page (also: not paid yet, or no cover left to claim on)'),
        },
      },
      post: {
        operationId: 'submitClaimPage',
        summary: 'The buyer files a claim (the page’s form)',
        description:
          'No API key; sent by the page’s own form. Files the claim as `POST /api/v1/purchases/{id}/claims` does, under the key that sold the purchase: the same checks (the incident inside the chosen covered unit and in the past, a claim type of its product, no open claim on the same unit and day), the same workflow and `claim.submitted` event. The same form sent again answers the same claim.',
        responses: {
          200: htmlResponse('The claim was received (or this form repeated it)'),
          400: htmlResponse(
            'Mistakes in the form: the form again with an error summary and each field’s mistake; nothing was filed. Or a body that is not a form (bare VALIDATION_ERROR)',
          ),
          409: htmlResponse('Refused as it stands: an open claim on the same covered unit and day, or a cancelled cover'),
        },
      },
    });
  };
}
