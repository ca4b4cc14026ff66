/**
 * The one place that reads `process.env` (STYLE practice 9).
 *
 * `loadConfig(env)` parses the environment once with zod and returns a frozen, typed
 * `Config`. A missing or malformed variable throws `ConfigError` whose message is one line
 * naming the variable, e.g. `Invalid configuration: DATABASE_URL: Invalid URL`; entry points
 * print that line and exit 1. Defaults point at the local stack that `npm run dev` starts
 * (PostgreSQL on :5432, Temporal on :7233, stripe-mock on :12111, fake-gcs-server on :4443).
 * Units: durations are named with their unit (`…_HOURS`, `…_MS`); money is not configured here.
 */
import { z } from 'zod';
import { createPrivateKey, type KeyObject } from 'node:crypto';

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** An optional URL; an empty string counts as unset. */
const optionalUrl = z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), z.url().optional());
/** A URL with a default; an explicitly empty string means "none" (e.g. real Stripe/GCS endpoints). */
const urlOrNone = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((v) => (v.trim() === '' ? undefined : v))
    .pipe(z.url().optional());
/** A key list with a default, parsed by `parse` (which throws Error naming the problem; the message becomes the config issue). */
const keyList = <K>(fallback: string, parse: (value: string) => K[]) =>
  z
    .string()
    .default(fallback)
    .transform((v, ctx) => {
      try {
        return parse(v);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    });

/** Published development defaults of the two data-protection keys (never valid in production). */
const DEV_PAYLOAD_KEYS = 'dev-1:ZGV2ZWxvcG1lbnQtb25seS1wYXlsb2FkLWtleS0zMmI=';
const DEV_BUYER_EMAIL_HASH_KEY = 'development-only-buyer-email-hash-key';
const DEV_WITHDRAWAL_LINK_KEY = 'development-only-buyer-withdrawal-link-key';
/** Published development key signing certificates' proofs (an Ed25519 seed; never valid in production). */
const DEV_CERTIFICATE_SIGNING_KEYS = 'dev-cert-1:ZGV2ZWxvcG1lbnQtb25seS1jZXJ0aWZpY2F0ZS1rZXk=';

/** One payload codec key: `id` travels in each payload's metadata; `key` is 32 bytes. */
/** One signing key: its id and Ed25519 private key. */
export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
}

/** PKCS #8 DER prefix of an Ed25519 private key; the 32-byte seed follows. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * Splits `id:base64,id:base64…` into ids and 32-byte keys (base64 or base64url), in order. Throws
 * Error naming the problem: a pair without `:` (`expected <id>:base64key pairs…`), an id outside
 * [A-Za-z0-9._-]{1,64}, a key that is not 32 bytes (`<what>`), none, a repeated id.
 */
function parseKeyPairs(value: string, idName: string, what: string): { id: string; key: Buffer }[] {
  const keys = value
    .split(',')
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf(':');
      if (at <= 0) throw new Error(`expected ${idName}:base64key pairs separated by commas`);
      const id = pair.slice(0, at);
      if (!/^[A-Za-z0-9._-]{1,64}$/.test(id)) throw new Error(`key id "${id}" must be 1-64 letters, digits, '.', '_' or '-'`);
      const key = Buffer.from(
        pair
          .slice(at + 1)
          .replace(/-/g, '+')
          .replace(/_/g, '/'),
        'base64',
      );
      if (key.length !== 32) throw new Error(`key "${id}" must be ${what}, got ${key.length} bytes`);
      return { id, key };
    });
  if (keys.length === 0) throw new Error('at least one key is required');
  if (new Set(keys.map((k) => k.id)).size !== keys.length) throw new Error('key ids must be unique');
  return keys;
}

/**
 * Parses `CERTIFICATE_SIGNING_KEYS`: `kid:base64` pairs separated by commas, each key the 32-byte
 * Ed25519 seed (private key) in base64 or base64url; the first signs the certificates' proofs, all
 * verify (src/certificates/signed-proof.ts). Throws Error naming the problem (a pair without `:`,
 * a bad kid, a key that is not 32 bytes, a repeated kid).
 */
export function parseSigningKeys(value: string): SigningKey[] {
  return parseKeyPairs(value, 'kid', 'a 32-byte Ed25519 seed in base64').map(({ id, key }) => ({
    kid: id,
    privateKey: createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, key]), format: 'der', type: 'pkcs8' }),
  }));
}

export interface PayloadKey {
  id: string;
  key: Buffer;
}

/**
 * Parses `id:base64,id:base64…` into payload keys (first = current). Throws Error naming the
 * problem: a pair without `:`, an id outside [A-Za-z0-9._-], a key that is not 32 bytes, a repeated id.
 */
export function parsePayloadKeys(value: string): PayloadKey[] {
  return parseKeyPairs(value, 'id', '32 bytes (base64 of 32 random bytes)');
}

const schema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Public URL of the API, used in links the service hands out (QR verification, emails). */
  PUBLIC_BASE_URL: z.url().default('http://127.0.0.1:3000'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  DATABASE_URL: z.url().default('postgres://postgres@127.0.0.1:5432/insurance'),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(100).default(10),

  TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('insurance'),
  /**
   * A workflow bundle built ahead of time from this same code (`npx tsx scripts/bundle-workflows.ts
   * FILE`), which the worker loads instead of bundling the workflow code at start (seconds of CPU
   * per start). Empty: the worker bundles at start. The test setup builds one per run.
   */
  TEMPORAL_WORKFLOW_BUNDLE: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(1).optional()),
  /**
   * The task queues this deployment expects workers to poll, as the API asks the Temporal server
   * about them (`temporal_task_queue_pollers`, the NoWorkerPolling alert): comma-separated
   * `queue:workflow`, `queue:activity` or a bare `queue` (both kinds). Empty: the four queues a
   * worker polls beside TEMPORAL_TASK_QUEUE (src/temporal/expected-task-queues.ts).
   */
  TEMPORAL_EXPECTED_TASK_QUEUES: z
    .string()
    .default('')
    .refine(
      (v) =>
        v
          .split(',')
          .map((e) => e.trim())
          .filter(Boolean)
          .every((e) => /^[^:]*[^:\s][^:]*(:\s*(workflow|activity))?$/.test(e)),
      'comma-separated queue names, each alone or followed by :workflow or :activity',
    ),
  /**
   * Keys of the Temporal payload codec (AES-256-GCM): `id:base64` pairs, comma-separated, each
   * key 32 bytes. The first encrypts new payloads; all decrypt (rotation: put the new key first,
   * keep the old ones until no open workflow or retained history needs them). The default is a
   * published development key, refused when NODE_ENV=production.
   */
  TEMPORAL_PAYLOAD_KEYS: keyList(DEV_PAYLOAD_KEYS, parsePayloadKeys),
  /**
   * Keys signing the proof a certificate's QR code and verification link carry (issue 50): `kid:base64`
   * pairs, comma-separated, each key a 32-byte Ed25519 seed (`openssl rand -base64 32`). The first
   * signs new certificates; all are published at /.well-known/jwks.json and verify (rotation: put
   * the new key first, keep the old ones as long as their certificates may be shown). The default
   * is a published development key, refused when NODE_ENV=production.
   */
  CERTIFICATE_SIGNING_KEYS: keyList(DEV_CERTIFICATE_SIGNING_KEYS, parseSigningKeys),
  /** Bearer token of the codec endpoint (`/codec/encode`, `/codec/decode`) for the Temporal UI and CLI; unset = endpoint off (404). At least 24 characters. */
  TEMPORAL_CODEC_TOKEN: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(24).optional()),
  /**
   * Key in the path of the codec endpoint's UI mount (`/codec/ui/<key>/decode|encode`), the URL a
   * Temporal UI server is given as its codec endpoint: the UI sends no credentials of its own
   * without an SSO login. Letters, digits, `-` and `_`, at least 24; unset = that mount off (404).
   * Whoever can open a UI configured with it can read decoded payloads.
   */
  TEMPORAL_CODEC_UI_KEY: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .min(24)
      .regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, - and _ only')
      .optional(),
  ),
  /** Browser origins (the Temporal UI) allowed to call the codec endpoint, comma-separated. */
  TEMPORAL_CODEC_CORS_ORIGINS: z
    .string()
    .default('http://127.0.0.1:8233,http://localhost:8233')
    .transform((v) =>
      v
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    ),
  /**
   * Key of the buyer-email hash kept in the `BuyerEmailHash` search attribute (HMAC-SHA256; at
   * least 16 characters). Changing it makes earlier hashes unsearchable. The default is a
   * published development key, refused when NODE_ENV=production.
   */
  BUYER_EMAIL_HASH_KEY: z.string().min(16).default(DEV_BUYER_EMAIL_HASH_KEY),
  /**
   * Key of the buyer's withdrawal links (HMAC-SHA256 over the purchase id; at least 32
   * characters): whoever holds it can make a link that withdraws any purchase. Changing it
   * invalidates every link already sent. The default is a published development key, refused
   * when NODE_ENV=production.
   */
  WITHDRAWAL_LINK_KEY: z.string().min(32).default(DEV_WITHDRAWAL_LINK_KEY),

  /** When set, rate-limit counters are shared across API instances through Redis. */
  REDIS_URL: optionalUrl,
  /** Requests per minute per API key (spec §8: roughly 100). */
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(100),
  /** Requests per minute per client address to the public verification page (/verify), and separately to the checkout return pages. */
  VERIFY_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  /** Redis key prefix of the rate-limit counters (separate deployments sharing one Redis). */
  RATE_LIMIT_REDIS_PREFIX: z.string().min(1).default('rl:apikey'),
  /** Body size limit in bytes; above it the API answers 413 PAYLOAD_TOO_LARGE (decision). */
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  /** How long the answer to a request sent with an Idempotency-Key is kept and replayed, in hours. */
  IDEMPOTENCY_KEY_TTL_HOURS: z.coerce
    .number()
    .min(1)
    .max(24 * 30)
    .default(24),
  /** How long a retry waits for the still-running first request of its Idempotency-Key before 409, in ms. */
  IDEMPOTENCY_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(10_000),
  /** Interface of the metrics listeners (API and worker): internal, so loopback by default. */
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /** Port of the API's metrics listener (GET /metrics); 0 picks a free one. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  /**
   * How recently, in seconds, a worker must have polled the purchase task queue for the API's
   * /readyz to count it (Temporal's DescribeTaskQueue pollers). An idle worker re-polls at least
   * every 60 s (the server's long poll), so the window must exceed that; a stopped worker turns
   * readiness red within it.
   */
  READINESS_POLLER_WINDOW_SECONDS: z.coerce.number().int().min(1).max(3600).default(90),
  /** Port of the worker's listener (GET /metrics, /healthz, /readyz); 0 picks a free one. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9465),
  /** host:port of the Temporal SDK's own Prometheus exporter in the worker (task slots, polls, latencies); empty turns it off. */
  WORKER_SDK_METRICS_ADDRESS: z.string().default('127.0.0.1:9466'),
  /** Deadline of one event delivery attempt (the agency's endpoint must answer 2xx within it), in ms. */
  WEBHOOK_DELIVERY_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /** Wait before the second delivery attempt, in seconds; it doubles after each failure (at most 1 h apart). */
  WEBHOOK_RETRY_INITIAL_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /** How long failed deliveries are retried before the endpoint is marked failing, in hours. */
  WEBHOOK_RETRY_WINDOW_HOURS: z.coerce
    .number()
    .min(0.001)
    .max(24 * 30)
    .default(72),
  /** How long an old key value keeps working after `rotate` (spec §5.3; decision: 24 h). */
  API_KEY_ROTATION_GRACE_HOURS: z.coerce.number().min(0).default(24),

  /** Lifetime of a buyer access token in seconds (spec §5.5, §5.7; decision: 15 min). */
  BUYER_ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  /** Longest coverage a quote may ask for, in covered units (days or trips). */
  MAX_COVERED_UNITS: z.coerce.number().int().min(1).max(3660).default(366),

  /** Payment processor (Stripe). Live and test secrets are configured separately. */
  PAYPROC_LIVE_SECRET_KEY: z.string().min(1).default('sk_test_liveModeLocal'),
  PAYPROC_TEST_SECRET_KEY: z.string().min(1).default('sk_test_123'),
  /** Base URL of the processor API; stripe-mock locally, empty for the real Stripe API. */
  PAYPROC_API_BASE: urlOrNone('http://127.0.0.1:12111'),
  PAYPROC_WEBHOOK_SECRET: z.string().startsWith('whsec_').default('whsec_local_development_secret'),

  /** A second webhook signing secret (e.g. the test-mode endpoint's), tried after the first. */
  PAYPROC_WEBHOOK_SECRET_SECONDARY: z.preprocess((v) => (v === '' ? undefined : v), z.string().startsWith('whsec_').optional()),
  /** How long one processor request may take, in ms, before it counts as a timeout (outcome unknown). */
  PAYPROC_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(20_000),
  /**
   * Seconds within which `emailCheckoutLink` for the same purchase, checkout session and buyer
   * answers the earlier email instead of sending another (0: every call sends).
   */
  CHECKOUT_LINK_EMAIL_DEDUPE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(600),
  /** How long a buyer may take to pay a checkout session, in seconds (processor allows 1800–86400). */
  CHECKOUT_SESSION_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(86_400),
  /** Cap, in seconds, of the wait between two tries of a processor call in a purchase workflow (no attempt limit). */
  PURCHASE_RETRY_MAX_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(3600).default(300),
  /** How often a waiting purchase asks the processor about its session, in seconds (covers lost webhooks). */
  CHECKOUT_POLL_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(3600).default(300),

  /** Object storage (GCS). Endpoint set for fake-gcs-server, empty for real GCS. */
  STORAGE_API_ENDPOINT: urlOrNone('http://127.0.0.1:4443'),
  STORAGE_BUCKET: z.string().min(3).default('certificates'),
  STORAGE_PROJECT_ID: z.string().min(1).default('local-project'),

  /** SMTP relay, e.g. smtp://user:pass@host:587. */
  SMTP_URL: z.string().min(1).default('smtp://127.0.0.1:2525'),
  MAIL_FROM: z.string().min(3).default('Certificates <certificates@localhost>'),

  CHROMIUM_PATH: z.string().min(1).default('/usr/bin/chromium'),
  PDF_PAGE_FORMAT: z.enum(['Letter', 'A4']).default('Letter'),
  /** Chromium pages rendering at once in one worker process (the page pool; issue 6). */
  PDF_PAGE_POOL_SIZE: z.coerce.number().int().min(1).max(32).default(3),
  /**
   * Certificate activities (render and store a batch, zips, verification) one worker process runs
   * at once, from its certificates task queue; the rest wait in Temporal (issue 8).
   */
  CERTIFICATE_ACTIVITY_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(16),
  /**
   * Refunds created at the processor per second, across every worker (a Temporal task-queue rate
   * limit on the refunds queue). Temporal's bucket holds one second's worth, so a single second
   * can see up to twice this (a burst, then the rate): 10 keeps every second under the
   * processor's 25 requests/s of test mode (100 live), with room for a cancellation's other calls.
   */
  REFUND_RATE_LIMIT_PER_SECOND: z.coerce.number().min(0.1).max(1000).default(10),
  /**
   * Certificates one Chromium print holds at most (one page each, split afterwards). A print
   * costs Chromium about 0.045 CPU-s whatever its length and a further page under 0.01, so the
   * worker prints pages of several purchases of one account together (issue 16).
   */
  PDF_PAGES_PER_PRINT: z.coerce.number().int().min(1).max(50).default(10),
  /** Prints one worker process runs at once (at most PDF_PAGE_POOL_SIZE pages are used). */
  PDF_PRINTS_AT_ONCE: z.coerce.number().int().min(1).max(32).default(2),
  /**
   * How long, in ms, the oldest waiting print job waits for other purchases' certificates to share
   * its print (0: print as soon as a print slot is free).
   */
  PDF_PRINT_BATCH_WAIT_MS: z.coerce.number().int().min(0).max(10_000).default(250),
  /** Renders one browser serves before the worker replaces it with a fresh one. */
  PDF_RENDERS_PER_BROWSER: z.coerce.number().int().min(1).default(500),
  /** Deadline of one PDF render in ms (loading the HTML plus printing). */
  PDF_RENDER_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  /** Emailed proof of coverage attaches the PDFs when they total at most this many bytes; above it, links only. */
  PROOF_EMAIL_ATTACHMENT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .max(25 * 1024 * 1024)
    .default(5 * 1024 * 1024),
  /** Lifetime of the signed download URLs getCertificates hands out, in seconds (max 7 days). */
  CERTIFICATE_URL_TTL_SECONDS: z.coerce.number().int().min(60).max(604_800).default(3600),

  /** Enables the Swagger UI at /docs; the JSON document at /openapi.json is always served. */
  DOCS_ENABLED: bool.default(true),

  /**
   * The agency portal (/portal): staff sign in through this OpenID Connect provider (its issuer
   * URL, discovered at the first sign-in); unset = the portal is off (404). The provider must
   * allow the redirect URI `<PUBLIC_BASE_URL>/portal/callback` for the client below.
   */
  PORTAL_OIDC_ISSUER: z.preprocess((v) => (v === '' ? undefined : v), z.url().optional()),
  PORTAL_OIDC_CLIENT_ID: z.string().min(1).default('coi-portal'),
  PORTAL_OIDC_CLIENT_SECRET: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(16).optional()),
  /**
   * Keys signing the portal's session cookie, comma-separated, each at least 32 characters; the
   * first signs, all verify (rotate by putting a new one first). Required with the portal.
   */
  PORTAL_SESSION_KEYS: z
    .string()
    .default('')
    .transform((v, ctx) => {
      const keys = v
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean);
      if (keys.some((k) => k.length < 32)) {
        ctx.addIssue({ code: 'custom', message: 'each key must be at least 32 characters' });
        return z.NEVER;
      }
      return keys;
    }),
  /** A portal session ends after this many minutes without a request (idle timeout). */
  PORTAL_SESSION_IDLE_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 60)
    .default(30),
  /** …and this many hours after sign-in whatever the activity (absolute timeout). */
  PORTAL_SESSION_ABSOLUTE_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24)
    .default(12),
});

/**
 * The portal needs its client secret and session keys once an issuer is set. In production the
 * published development keys are refused: personal data would be readable by anyone.
 */
const checked = schema.superRefine((c, ctx) => {
  if (c.PORTAL_OIDC_ISSUER && !c.PORTAL_OIDC_CLIENT_SECRET) {
    ctx.addIssue({ code: 'custom', path: ['PORTAL_OIDC_CLIENT_SECRET'], message: 'required with PORTAL_OIDC_ISSUER (the portal is on)' });
  }
  if (c.PORTAL_OIDC_ISSUER && c.PORTAL_SESSION_KEYS.length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['PORTAL_SESSION_KEYS'],
      message: 'required with PORTAL_OIDC_ISSUER (one or more keys of 32+ random characters, comma-separated)',
    });
  }
  if (c.NODE_ENV !== 'production') return;
  if (c.TEMPORAL_PAYLOAD_KEYS.some((k) => k.id === 'dev-1')) {
    ctx.addIssue({
      code: 'custom',
      path: ['TEMPORAL_PAYLOAD_KEYS'],
      message: 'set your own key in production (id:base64 of 32 random bytes, e.g. from `openssl rand -base64 32`)',
    });
  }
  if (c.BUYER_EMAIL_HASH_KEY === DEV_BUYER_EMAIL_HASH_KEY) {
    ctx.addIssue({
      code: 'custom',
      path: ['BUYER_EMAIL_HASH_KEY'],
      message: 'set your own key in production (at least 16 random characters)',
    });
  }
  if (c.WITHDRAWAL_LINK_KEY === DEV_WITHDRAWAL_LINK_KEY) {
    ctx.addIssue({
      code: 'custom',
      path: ['WITHDRAWAL_LINK_KEY'],
      message: 'set your own key in production (at least 32 random characters)',
    });
  }
  if (c.CERTIFICATE_SIGNING_KEYS.some((k) => k.kid === 'dev-cert-1')) {
    ctx.addIssue({
      code: 'custom',
      path: ['CERTIFICATE_SIGNING_KEYS'],
      message: 'set your own key in production (kid:base64 of a 32-byte Ed25519 seed, e.g. from `openssl rand -base64 32`)',
    });
  }
});

export type Config = Readonly<z.infer<typeof schema>>;

/** Thrown when the environment does not describe a valid configuration. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parses `env` (default `process.env`) into a `Config`.
 * Throws `ConfigError` with one line naming the first bad variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = checked.safeParse(env);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const name = issue.path.join('.') || '(environment)';
    throw new ConfigError(`Invalid configuration: ${name}: ${issue.message}`);
  }
  return Object.freeze(result.data);
}

/**
 * Loads the config for an entry point: on `ConfigError` prints the one line to stderr and
 * exits with status 1 instead of a stack trace.
 */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}
