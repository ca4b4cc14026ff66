/**
 * Whether a value can be configured as a checkout return URL (an API key's or a root account's
 * success or cancel URL): checked where it is set (the API, the portal, `npm run keys`), before
 * the checkout pages ever send a buyer there.
 */

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
