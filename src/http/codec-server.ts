/**
 * The codec endpoint operators point the Temporal UI and CLI at, so they can read the payloads
 * the service encrypts (./codec.ts): `POST …/decode` and `POST …/encode`, Temporal's
 * remote-codec protocol — body and answer `{ "payloads": [{ "metadata": { key: base64 }, "data": base64 }] }`.
 * `{}` and an empty body mean no payloads (protobuf's JSON leaves an empty list out, so the CLI
 * sends `{}` for a query or event without input) and answer `{ "payloads": [] }`.
 *
 * Two mounts, each off (404 ROUTE_NOT_FOUND, like any unknown path) until its secret is set:
 * - `/codec/decode|encode` for the CLI and scripts: `Authorization: Bearer <TEMPORAL_CODEC_TOKEN>`
 *   (compared in constant time), otherwise 401 AUTHENTICATION_ERROR. It also takes a person's
 *   operator token (`Bearer opk_…`, issued with `npm run ops -- issue-operator-token`), with or
 *   without TEMPORAL_CODEC_TOKEN set: the decode is then that person's. An `opk_…` token that
 *   names nobody (unknown, revoked) is 401.
 * - `/codec/ui/<TEMPORAL_CODEC_UI_KEY>/decode|encode` for a Temporal UI server: the UI sends no
 *   credentials of its own unless it has an SSO login, so its codec endpoint URL carries the
 *   key (compared in constant time; a wrong key is 404 like an unknown path). Anyone who can
 *   open that UI can read what it decodes: set it only for a UI that operators alone reach.
 * - CORS for the browser UI: origins in TEMPORAL_CODEC_CORS_ORIGINS get the CORS headers
 *   (credentials allowed; headers Authorization, Content-Type, X-Namespace) and their
 *   preflight `OPTIONS` answers 204 without a secret.
 * - A body that is not that shape: 400 VALIDATION_ERROR; a payload that does not decrypt:
 *   400 INVALID_REQUEST naming why. Answers are never cached (`Cache-Control: no-store`).
 * - Every decode and encode is logged (`codec request`): the caller (`operator-token` with the
 *   person's name, `cli-token` with the shared token's fingerprint, or `temporal-ui`), remote
 *   address, user agent, origin, namespace and how many payloads; never a payload.
 * - Every decode is also recorded in the audit log (issue 55, item 8: decoded payloads are
 *   personal data) before it is answered, actor kind `codec`, action `codec_decode`: the person
 *   (`actorVia: operator_token`), or, when only the shared token or the UI key was shown, who that
 *   can be (`codec token <fingerprint>`, `Temporal UI`); target the namespace; the client's
 *   address; details the payload count, user agent and origin. No record, no decode (500).
 *   Encodes reveal nothing and are not recorded.
 *
 * Not part of the agency API (absent from the OpenAPI document): it serves operators only.
 */
import crypto from 'node:crypto';
import type Koa from 'koa';
import { z } from 'zod';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { AppError } from '../shared/errors';
import { jsonBody } from './body';
import { PayloadDecryptionError } from '../temporal/codec';
import type { AuditService } from '../audit/service';
import type { AuditStart } from '../audit/types';

export const CODEC_PATHS = { decode: '/codec/decode', encode: '/codec/encode' } as const;
/** The UI mount: `/codec/ui/<key>` is the endpoint a Temporal UI server is given. */
const UI_PATH = /^\/codec\/ui\/([^/]+)\/(decode|encode)$/;

const base64 = z.string().regex(/^[A-Za-z0-9+/_-]*={0,2}$/, 'must be base64');
// Strict: `{"payload": […]}` is a mistake to report, not an empty list.
const PayloadsBody = z.strictObject({
  payloads: z
    .array(z.object({ metadata: z.record(z.string(), base64).optional(), data: base64.optional() }))
    .max(1000)
    .default([]),
});
type JsonPayload = z.infer<typeof PayloadsBody>['payloads'][number];

const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))])),
  data: new Uint8Array(Buffer.from(p.data ?? '', 'base64')),
});
const toJson = (p: Payload): { metadata: Record<string, string>; data: string } => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

function secretMatches(presented: string, secret: string): boolean {
  const a = crypto.createHash('sha256').update(presented).digest();
  const b = crypto.createHash('sha256').update(secret).digest();
  return crypto.timingSafeEqual(a, b) && presented.length > 0;
}

/** First 8 hex digits of the secret's SHA-256: names which token was used in logs, reveals nothing usable. */
export function secretFingerprint(secret: string): string {
  return crypto.createHash('sha256').update(secret).digest('hex').slice(0, 8);
}

type Mount = { kind: 'decode' | 'encode'; caller: 'cli-token' | 'temporal-ui' | 'operator-token'; operator?: string };

/** The bearer mount's operation `path` names, whether or not the mount is on. */
const bearerKind = (path: string): Mount['kind'] | null =>
  path === CODEC_PATHS.decode ? 'decode' : path === CODEC_PATHS.encode ? 'encode' : null;

/** Which mount and operation `path` names, or null (not a codec path, or that mount is off / the UI key is wrong). */
function mountOf(path: string, token: string | undefined, uiKey: string | undefined): Mount | null {
  if (token && path === CODEC_PATHS.decode) return { kind: 'decode', caller: 'cli-token' };
  if (token && path === CODEC_PATHS.encode) return { kind: 'encode', caller: 'cli-token' };
  const ui = uiKey ? UI_PATH.exec(path) : null;
  if (ui && secretMatches(ui[1]!, uiKey!)) return { kind: ui[2] as Mount['kind'], caller: 'temporal-ui' };
  return null;
}

/** The minimal logger the endpoint writes its access lines to (pino's shape). */
export interface CodecLog {
  info(fields: Record<string, unknown>, msg: string): void;
}

/**
 * Koa middleware serving the codec endpoint's two mounts; passes every other path on. `token`
 * (TEMPORAL_CODEC_TOKEN) turns the bearer mount on, `uiKey` (TEMPORAL_CODEC_UI_KEY) the UI
 * mount. `bodyLimitBytes` bounds the JSON body (BODY_LIMIT_BYTES). Each decode or encode is
 * logged on the request's logger (`ctx.state.log`).
 */
export function codecServer(options: {
  codec: PayloadCodec;
  token: string | undefined;
  uiKey?: string | undefined;
  corsOrigins: readonly string[];
  bodyLimitBytes: number;
  /** The person a bearer operator token (`opk_…`) names, its use recorded; undefined when it names nobody. */
  operatorOf?: (token: string) => Promise<{ name: string } | undefined>;
  /** Where each decode is recorded before it is answered (the audit service). */
  audit?: Pick<AuditService, 'record'>;
}): Koa.Middleware {
  const { codec, token, uiKey } = options;
  const parse = jsonBody(options.bodyLimitBytes);
  const origins = new Set(options.corsOrigins);
  const tokenId = token ? secretFingerprint(token) : undefined;
  return async (ctx, next) => {
    if (!ctx.path.startsWith('/codec/')) return next();
    const bearer = /^Bearer (.+)$/i.exec(ctx.get('Authorization'))?.[1]?.trim() ?? '';
    const operatorKind = options.operatorOf && bearer.startsWith('opk_') ? bearerKind(ctx.path) : null;
    let mount = mountOf(ctx.path, token, uiKey);
    if (operatorKind && ctx.method === 'POST') {
      const person = await options.operatorOf!(bearer);
      if (!person) throw new AppError('AUTHENTICATION_ERROR', 'This operator token names nobody (unknown or revoked): ask for a new one');
      mount = { kind: operatorKind, caller: 'operator-token', operator: person.name };
    }
    if (!mount) return next();
    const { kind } = mount;
    const origin = ctx.get('Origin');
    if (origin && origins.has(origin)) {
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Access-Control-Allow-Credentials', 'true');
      ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-Namespace');
      ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
      ctx.vary('Origin');
    }
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    if (ctx.method !== 'POST') return next();
    ctx.set('Cache-Control', 'no-store');
    if (mount.caller === 'cli-token' && !secretMatches(bearer, token!)) {
      throw new AppError('AUTHENTICATION_ERROR', 'The codec endpoint needs Authorization: Bearer <operator codec token>');
    }
    await parse(ctx, async () => undefined);
    const body = PayloadsBody.safeParse((ctx.request as { body?: unknown }).body);
    if (!body.success) throw new AppError('VALIDATION_ERROR', 'Expected {"payloads":[{"metadata":{...base64},"data":"base64"}]}');
    const payloads = body.data.payloads.map(fromJson);
    const log = (ctx.state as { log?: CodecLog }).log;
    log?.info(
      {
        codec: kind,
        caller: mount.caller,
        ...(mount.caller === 'cli-token' ? { tokenFingerprint: tokenId } : {}),
        ...(mount.operator ? { operator: mount.operator } : {}),
        remoteAddress: ctx.ip,
        userAgent: ctx.get('User-Agent') || undefined,
        origin: origin || undefined,
        namespace: ctx.get('X-Namespace') || undefined,
        payloads: payloads.length,
      },
      'codec request',
    );
    const run = () => (kind === 'decode' ? codec.decode(payloads) : codec.encode(payloads));
    let out: Payload[];
    try {
      out =
        kind === 'decode' && options.audit
          ? (
              await options.audit.record(decodeEntry(mount, tokenId, ctx), run, {
                details: () => ({
                  payloads: payloads.length,
                  user_agent: ctx.get('User-Agent') || null,
                  origin: origin || null,
                }),
                isRefusal: (err) => err instanceof PayloadDecryptionError,
              })
            ).result
          : await run();
    } catch (err) {
      if (err instanceof PayloadDecryptionError) throw new AppError('INVALID_REQUEST', err.message, { cause: err });
      throw err;
    }
    ctx.status = 200;
    ctx.body = { payloads: out.map(toJson) };
  };
}

/** The audit entry of one decode: who (the person, or what the shared secret shown says of them), the namespace, the address. */
function decodeEntry(mount: Mount, tokenId: string | undefined, ctx: Koa.Context): AuditStart {
  const namespace = ctx.get('X-Namespace') || null;
  const who =
    mount.caller === 'operator-token'
      ? { actor: mount.operator!, actorVia: 'operator_token' as const }
      : mount.caller === 'cli-token'
        ? { actor: `codec token ${tokenId}`, actorVia: 'codec_token' as const }
        : { actor: 'Temporal UI', actorVia: 'temporal_ui' as const };
  return {
    actorKind: 'codec',
    ...who,
    action: 'codec_decode',
    targetKind: namespace ? 'namespace' : null,
    targetId: namespace,
    rootAccountId: null,
    reason: null,
    clientAddress: ctx.ip,
  };
}
