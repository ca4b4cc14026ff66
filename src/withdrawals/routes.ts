/**
 * The buyer's withdrawal page (no API key; mounted on the public router beside the verification
 * and checkout return pages):
 *
 * - `GET /withdraw/<token>`: the buyer's cancellation quote (every unstarted covered unit) with a
 *   confirm form, or the withdrawal already made through this link, or why there is nothing to
 *   withdraw. Never cancels anything.
 * - `POST /withdraw/<token>` (form `quote=<cq_…>`): confirms. The form's quote is a per-render
 *   nonce bound to the purchase the token names; a browser's cross-site POST (`Sec-Fetch-Site:
 *   cross-site` or `same-site`) is refused before anything is looked at, and the page may not be
 *   framed (CSP `frame-ancestors 'none'`).
 *
 * HTML only. Status: 200 for a page that shows the state (and for a confirmation carried out, or
 * repeated), 404 for a forged, damaged or unknown link (one page for all), 409 for a confirmation
 * that did nothing (link already used, quote changed, nothing left, not offered, not paid), 400
 * for a form that is not this page's, 403 for a cross-site POST, 503 when the policy workflow did
 * not answer in time. Every answer is `no-store` and `no-referrer` (the token is in the URL).
 * Limited per client address with the verification page's limit (a budget of its own).
 */
import { z } from 'zod';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RouteRegistration } from '../http/routes';
import { htmlResponse, mountBuyerPage, registerBuyerPage, type BuyerPage } from '../http/buyer-pages';
import { renderCrossSiteRefusal, renderWithdrawalPage } from './page';
import type { WithdrawalService, WithdrawalView } from './service';
import { WITHDRAWAL_PAGE_PATH } from './token';

const TokenParam = z.object({
  token: z.string().max(200).meta({
    description: 'The signed withdrawal token, as the link carries it (`w1.<purchase id>.<signature>`)',
    example: 'w1.42.3q2Vt1m0cY8nK2pZr5LwX7aBdE9fGhJkM4sTuVxYz1A',
  }),
});

const ConfirmForm = z.object({
  quote: z
    .string()
    .meta({ description: 'The quote the page showed (`cq_…`), carried by its form', example: 'cq_4f1c2d3e4b5a6c7d8e9f0a1b' }),
});

/** The HTTP status of a view: what a GET shows is 200; a POST that did nothing says why. */
function statusOf(v: WithdrawalView, method: 'GET' | 'POST'): number {
  if (v.kind === 'not_found') return 404;
  if (v.kind === 'busy') return 503;
  if (method === 'GET') return 200;
  if (v.kind === 'withdrawn') return v.outcome === 'already_used' ? 409 : 200;
  if (v.kind === 'offer') return v.notice === 'form_invalid' ? 400 : 409;
  return 409;
}

export function withdrawalRoutes(service: WithdrawalService, limiter: RateLimiterAbstract): RouteRegistration {
  return (router, registry) => {
    const page: BuyerPage<WithdrawalView> = {
      path: `${WITHDRAWAL_PAGE_PATH}/:token`,
      limitName: 'withdraw-page',
      formLimit: '4kb',
      formName: 'a withdrawal form',
      show: service.show,
      submit: service.confirm,
      render: renderWithdrawalPage,
      status: statusOf,
      crossSiteRefusal: renderCrossSiteRefusal,
    };
    mountBuyerPage(router, limiter, page);

    registerBuyerPage(registry, page, {
      token: TokenParam,
      form: ConfirmForm,
      get: {
        operationId: 'getWithdrawalPage',
        summary: "The buyer's withdrawal page: their cancellation quote and a confirm button",
        description:
          "No API key; the signed, single-use link of the proof-of-coverage email sent to the buyer and of the checkout return page, offered when every item's product has `buyer_withdrawal` in its cancellation terms. " +
          "Shows what withdrawing now gives back (every covered unit not started yet: within 14 days of payment all of its premium, tax and platform-fee share, whatever the purchase's cancellation terms (`method: withdrawal`), after that priced by those terms as `requested_by: buyer`; the quote holds 15 minutes) and a form to confirm it; opening it changes nothing. " +
          'Once a withdrawal was confirmed through the link, it shows that withdrawal and how its refund stands instead. Also: nothing left to withdraw from, not paid, not offered. HTML only.',
        responses: {
          200: htmlResponse('The page'),
          503: htmlResponse('The page could not be answered in time; reload it'),
        },
      },
      post: {
        operationId: 'confirmWithdrawal',
        summary: "The buyer confirms their withdrawal (the page's form)",
        description:
          "No API key; sent by the page's own form. Carries out the quote the form names through the purchase's policy workflow, as `POST /api/v1/purchases/{id}/cancel` does: the refund is created at the processor, the units are cancelled and their certificates voided, and the agency gets `purchase.cancelled`, `refund.succeeded` and `certificates.voided` with `requested_by: buyer`. " +
          'The same form sent again answers the same withdrawal; after a withdrawal through the link, another quote does nothing (409, "already used"). A quote that no longer holds answers the current one to confirm again (409).',
        responses: {
          200: htmlResponse('The withdrawal was received (or this confirmation repeated it)'),
          400: htmlResponse(
            'The form is not one this page showed for this purchase: the current quote is shown to confirm again; nothing was done. Or a body that is not a form (bare VALIDATION_ERROR)',
          ),
          409: htmlResponse(
            'Nothing was done: the link was already used, the quote changed (the current one is shown), nothing is left to withdraw from, the purchase is not paid, or online withdrawal is not offered',
          ),
          503: htmlResponse(
            'The withdrawal was not confirmed in time; reload the page to see whether it went through (it is never made twice)',
          ),
        },
      },
    });
  };
}
