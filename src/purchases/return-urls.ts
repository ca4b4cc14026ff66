/**
 * Where the processor sends the buyer after paying or cancelling a checkout session.
 *
 * The agent's own pages when configured (the API key's URLs, else its root account's), else the
 * service's pages `GET /checkout/complete` and `GET /checkout/cancelled`, which show the
 * purchase's live status. Those pages name the purchase and carry its unguessable return token
 * (`purchases.return_token`), so a buyer sees their own purchase and cannot reach another by
 * changing the id.
 */

/** The service's own return pages (paths under PUBLIC_BASE_URL). */
export const COMPLETE_PAGE_PATH = '/checkout/complete';
export const CANCELLED_PAGE_PATH = '/checkout/cancelled';

/** The service's page at `path` for one purchase: `<base><path>?purchase=<id>&token=<token>`. */
export function returnPageUrl(publicBaseUrl: string, path: string, purchaseId: number, returnToken: string): string {
  // Appended, not resolved: a PUBLIC_BASE_URL with a path (https://x.example/insurance) keeps it.
  const url = new URL(`${publicBaseUrl.replace(/\/+$/, '')}${path}`);
  url.searchParams.set('purchase', String(purchaseId));
  url.searchParams.set('token', returnToken);
  return url.toString();
}

/**
 * The success and cancel URLs of one purchase's checkout session: `configured` (the key's URL,
 * else the account's; absolute http(s) URLs validated where they are set) or the service's pages.
 */
export function checkoutReturnUrls(input: {
  publicBaseUrl: string;
  purchaseId: number;
  returnToken: string;
  configured: { successUrl: string | null; cancelUrl: string | null };
}): { successUrl: string; cancelUrl: string } {
  return {
    successUrl: input.configured.successUrl ?? returnPageUrl(input.publicBaseUrl, COMPLETE_PAGE_PATH, input.purchaseId, input.returnToken),
    cancelUrl: input.configured.cancelUrl ?? returnPageUrl(input.publicBaseUrl, CANCELLED_PAGE_PATH, input.purchaseId, input.returnToken),
  };
}
