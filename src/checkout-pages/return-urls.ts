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

/** The longest return URL stored (the columns are varchar 2048). */
export const MAX_RETURN_URL_LENGTH = 2048;

/**
 * Why `value` cannot be a configured return URL, or null when it can: an absolute `http:` or
 * `https:` URL with a host, at most 2048 characters, without whitespace, control characters or
 * user credentials. The value is stored as written, not normalised, so a processor placeholder
 * such as `{CHECKOUT_SESSION_ID}` survives.
 */
export function returnUrlProblem(value: string): string | null {
  if (value.length === 0) return 'must not be empty';
  if (value.length > MAX_RETURN_URL_LENGTH) return `must be at most ${MAX_RETURN_URL_LENGTH} characters (got ${value.length})`;
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(value)) return 'must not contain spaces or control characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !/^https?:\/\/[^/]/i.test(value))
    return 'must be an absolute http or https URL';
  if (!url.hostname) return 'must name a host';
  if (url.username || url.password) return 'must not contain a user name or password';
  return null;
}
