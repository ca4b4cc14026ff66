/**
 * The portal's OpenID Connect relying party (openid-client): authorization code flow with PKCE
 * (S256), `state` and `nonce`, against the provider named by its issuer URL.
 *
 * The provider's metadata is discovered at the first sign-in and kept (a failed discovery is
 * tried again at the next). Plain-http issuers are allowed only on a loopback host (the local
 * provider of `npm run dev` and the tests); any other must be https.
 *
 * Errors: `begin` and `complete` throw what openid-client throws (an unreachable provider, a
 * response that fails validation: wrong state, nonce, issuer, an expired or replayed code); the
 * portal answers them with a sign-in error page.
 */
import * as oidc from 'openid-client';

/** What the portal keeps in the session between the redirect to the provider and the callback. */
export interface PendingSignIn {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** Where to go after signing in: a path under /portal (checked by the caller). */
  next: string;
}

export interface RelyingPartyOptions {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The absolute callback URL registered at the provider (`<PUBLIC_BASE_URL>/portal/callback`). */
  redirectUri: string;
  /** Where the provider sends the browser after signing out (`<PUBLIC_BASE_URL>/portal/signed-out`). */
  postLogoutRedirectUri: string;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export function createRelyingParty(options: RelyingPartyOptions) {
  const issuerUrl = new URL(options.issuer);
  const insecure = issuerUrl.protocol === 'http:';
  if (insecure && !LOOPBACK.has(issuerUrl.hostname)) {
    throw new Error(`the portal's identity provider must use https (got ${options.issuer}); plain http only on a loopback host`);
  }
  let configuration: Promise<oidc.Configuration> | undefined;
  const discovered = () => {
    configuration ??= oidc
      .discovery(issuerUrl, options.clientId, undefined, oidc.ClientSecretBasic(options.clientSecret), {
        execute: insecure ? [oidc.allowInsecureRequests] : [],
      })
      .catch((err: unknown) => {
        configuration = undefined;
        throw err;
      });
    return configuration;
  };

  return {
    /** The provider's origin (the portal's pages may submit forms that redirect there). */
    issuerOrigin: issuerUrl.origin,

    /**
     * Starts a sign-in: the provider's authorization URL and what to keep for the callback.
     * `forceLogin`: the provider must ask for the password again (`prompt=login`), even if its
     * own session is still open (after a sign-out from this browser).
     */
    async begin(next: string, forceLogin = false): Promise<{ url: string; pending: PendingSignIn }> {
      const config = await discovered();
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const pending = { state: oidc.randomState(), nonce: oidc.randomNonce(), codeVerifier, next };
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: options.redirectUri,
        scope: 'openid email profile',
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state: pending.state,
        nonce: pending.nonce,
        ...(forceLogin ? { prompt: 'login' } : {}),
      });
      return { url: url.href, pending };
    },

    /**
     * Finishes a sign-in from the callback's query string: exchanges the code (with the PKCE
     * verifier) and validates the ID token (issuer, audience, nonce). Returns the subject (`sub`)
     * and the ID token (kept to sign out at the provider).
     */
    async complete(query: string, pending: PendingSignIn): Promise<{ sub: string; idToken: string | undefined }> {
      const config = await discovered();
      const callbackUrl = new URL(options.redirectUri);
      callbackUrl.search = query;
      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims?.sub) throw new Error('the identity provider returned no subject');
      return { sub: claims.sub, idToken: tokens.id_token };
    },

    /** The provider's sign-out URL (RP-initiated logout), or null when it has none. */
    async signOutUrl(idToken: string | undefined): Promise<string | null> {
      const config = await discovered().catch(() => null);
      if (!config?.serverMetadata().end_session_endpoint) return null;
      return oidc.buildEndSessionUrl(config, {
        post_logout_redirect_uri: options.postLogoutRedirectUri,
        ...(idToken ? { id_token_hint: idToken } : {}),
      }).href;
    },
  };
}

export type RelyingParty = ReturnType<typeof createRelyingParty>;
