/**
 * A real OpenID Provider (oidc-provider) for `npm run dev` and the tests: the agency portal signs
 * staff in through it exactly as it would through a production identity provider.
 *
 *   node scripts/local-idp.mjs --port 3100 --users var/local-idp-users.json \
 *     --client-id coi-portal --client-secret <secret> --redirect-uri http://127.0.0.1:3000/portal/callback \
 *     [--post-logout-redirect-uri http://127.0.0.1:3000/portal/signed-out]
 *
 * The users file is a JSON array of `{ "sub", "email", "name", "password" }` (sub: the teammate's
 * `idp_teammate_uuid`). One confidential client (authorization code, PKCE required, client secret
 * basic). The sign-in page checks the email and password; a wrong one is answered on the page
 * with the form again. Consent is implied for this first-party client (openid email profile).
 * A sign-out the portal starts (RP-initiated logout with `id_token_hint`) ends the provider's
 * session without a question; `prompt=login` always asks for the password again.
 * Prints `local-idp ready <issuer>` once listening; SIGTERM/SIGINT stop it.
 *
 * A stand-in for development and tests only: users and sessions live in memory.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import Provider from 'oidc-provider';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '3100' },
    host: { type: 'string', default: '127.0.0.1' },
    users: { type: 'string' },
    'client-id': { type: 'string', default: 'coi-portal' },
    'client-secret': { type: 'string' },
    'redirect-uri': { type: 'string', multiple: true },
    'post-logout-redirect-uri': { type: 'string', multiple: true },
  },
});
for (const required of ['users', 'client-secret', 'redirect-uri']) {
  if (!values[required]) {
    console.error(`local-idp: --${required} is required`);
    process.exit(2);
  }
}

/** @type {{ sub: string, email: string, name: string, password: string }[]} */
const users = JSON.parse(fs.readFileSync(values.users, 'utf8'));
const byEmail = new Map(users.map((u) => [u.email.toLowerCase(), u]));
const bySub = new Map(users.map((u) => [u.sub, u]));
const issuer = `http://${values.host}:${values.port}`;

const escapeHtml = (s) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

/** Timing-safe equality of two strings (the lengths may differ). */
function sameSecret(a, b) {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb) && a.length === b.length;
}

const page = (title, body) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:1rem;color:#1b1b1b;background:#f6f7f9}
main{max-width:26rem;margin:2rem auto;background:#fff;padding:1.5rem;border:1px solid #c9ccd1;border-radius:6px}
label{display:block;font-weight:600;margin-top:1rem}
input{width:100%;box-sizing:border-box;padding:.5rem;font:inherit;border:1px solid #6b6f76;border-radius:4px}
button{margin-top:1.25rem;padding:.6rem 1.2rem;font:inherit;background:#0b57d0;color:#fff;border:0;border-radius:4px;cursor:pointer}
:focus-visible{outline:3px solid #b35c00;outline-offset:2px}
.error{color:#a4000f;font-weight:600}
</style></head><body><main>${body}</main></body></html>`;

function loginPage(uid, { email = '', error = null } = {}) {
  return page(
    'Sign in: local identity provider',
    `<h1>Sign in</h1>
<p>Local identity provider for development and tests.</p>
<form method="post" action="/interaction/${escapeHtml(uid)}/login" novalidate>
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(email)}"${error ? ' aria-describedby="login-error" aria-invalid="true"' : ''}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${error ? ' aria-describedby="login-error" aria-invalid="true"' : ''}>
${error ? `<p id="login-error" class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<button type="submit">Sign in</button>
</form>`,
  );
}

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: values['client-id'],
      client_secret: values['client-secret'],
      redirect_uris: values['redirect-uri'],
      post_logout_redirect_uris: values['post-logout-redirect-uri'] ?? [],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  pkce: { required: () => true },
  scopes: ['openid', 'email', 'profile'],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  cookies: { keys: [crypto.randomBytes(32).toString('base64url')] },
  features: {
    devInteractions: { enabled: false },
    rpInitiatedLogout: {
      enabled: true,
      // RP-initiated logout with an id_token_hint (the portal's sign-out) is the signed-in
      // person's own request: it ends this provider's session without asking (the form posts
      // itself; without script, one button). Without a hint, the two answers say what they do.
      async logoutSource(ctx, form) {
        ctx.type = 'html';
        if (ctx.oidc.params.id_token_hint) {
          ctx.body = page(
            'Signing out: local identity provider',
            `<h1>Signing out</h1>${form.replace('</form>', '<input type="hidden" name="logout" value="yes"></form>')}
<noscript><button type="submit" form="op.logoutForm">Sign out</button></noscript>
<script>document.getElementById('op.logoutForm').submit();</script>`,
          );
          return;
        }
        ctx.body = page(
          'Sign out: local identity provider',
          `<h1>Sign out of the identity provider too?</h1>${form}
<button type="submit" form="op.logoutForm" value="yes" name="logout">Sign out of the identity provider</button>
<button type="submit" form="op.logoutForm">Stay signed in at the identity provider</button>`,
        );
      },
      async postLogoutSuccessSource(ctx) {
        ctx.type = 'html';
        ctx.body = page('Signed out', '<h1>Signed out</h1><p>You are signed out of the local identity provider.</p>');
      },
    },
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  async findAccount(_ctx, sub) {
    const user = bySub.get(sub);
    if (!user) return undefined;
    return { accountId: sub, claims: async () => ({ sub, email: user.email, email_verified: true, name: user.name }) };
  },
  // A first-party client: consent is implied for the scopes it asks for.
  async loadExistingGrant(ctx) {
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope('openid email profile');
    await grant.save();
    return grant;
  },
  async renderError(ctx, out) {
    ctx.type = 'html';
    ctx.body = page('Sign-in error', `<h1>Sign-in error</h1><p>${escapeHtml(out.error)}: ${escapeHtml(out.error_description ?? '')}</p>`);
  },
});

async function formBody(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > 16 * 1024) throw new Error('form too large');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

// The interaction (sign-in) pages, before the provider's own routes.
provider.use(async (ctx, next) => {
  const m = /^\/interaction\/([\w-]+)(\/login)?$/.exec(ctx.path);
  if (!m) return next();
  ctx.set('cache-control', 'no-store');
  let details;
  try {
    details = await provider.interactionDetails(ctx.req, ctx.res);
  } catch {
    ctx.status = 400;
    ctx.type = 'html';
    ctx.body = page('Sign-in expired', '<h1>Sign-in expired</h1><p>This sign-in has expired. Go back to the portal and sign in again.</p>');
    return;
  }
  if (details.uid !== m[1]) {
    ctx.status = 400;
    ctx.type = 'html';
    ctx.body = page('Sign-in error', '<h1>Sign-in error</h1><p>This sign-in belongs to another browser session.</p>');
    return;
  }
  if (ctx.method === 'GET' && !m[2]) {
    ctx.type = 'html';
    ctx.body = loginPage(details.uid);
    return;
  }
  if (ctx.method === 'POST' && m[2]) {
    const form = await formBody(ctx.req);
    const email = (form.get('email') ?? '').trim();
    const user = byEmail.get(email.toLowerCase());
    if (!user || !sameSecret(form.get('password') ?? '', user.password)) {
      ctx.status = 401;
      ctx.type = 'html';
      ctx.body = loginPage(details.uid, { email, error: 'Wrong email or password.' });
      return;
    }
    await provider.interactionFinished(ctx.req, ctx.res, { login: { accountId: user.sub } }, { mergeWithLastSubmission: false });
    ctx.respond = false;
    return;
  }
  ctx.status = 405;
});

const server = provider.listen(Number(values.port), values.host, () => {
  console.log(`local-idp ready ${issuer} (${users.length} users, client ${values['client-id']})`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
