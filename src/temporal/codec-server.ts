/**
 * The codec endpoint operators point the Temporal UI and CLI at, so they can read the payloads
 * the service encrypts (./codec.ts): `POST /codec/decode` and `POST /codec/encode`, Temporal's
 * remote-codec protocol — body and answer `{ "payloads": [{ "metadata": { key: base64 }, "data": base64 }] }`.
 *
 * - Off (404 ROUTE_NOT_FOUND, like any unknown path) unless TEMPORAL_CODEC_TOKEN is set.
 * - Every POST needs `Authorization: Bearer <TEMPORAL_CODEC_TOKEN>` (compared in constant
 *   time): otherwise 401 AUTHENTICATION_ERROR. Decoded payloads hold buyers' personal data.
 * - CORS for the browser UI: origins in TEMPORAL_CODEC_CORS_ORIGINS get the CORS headers
 *   (credentials allowed; headers Authorization, Content-Type, X-Namespace) and their
 *   preflight `OPTIONS` answers 204 without the token.
 * - A body that is not that shape: 400 VALIDATION_ERROR; a payload that does not decrypt:
 *   400 INVALID_REQUEST naming why. Answers are never cached (`Cache-Control: no-store`).
 *
 * Not part of the agency API (absent from the OpenAPI document): it serves operators only.
 */
import crypto from 'node:crypto';
import type Koa from 'koa';
import { z } from 'zod';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { AppError } from '../http/errors';
import { jsonBody } from '../http/body';
import { PayloadDecryptionError } from './codec';

export const CODEC_PATHS = { decode: '/codec/decode', encode: '/codec/encode' } as const;

const base64 = z.string().regex(/^[A-Za-z0-9+/_-]*={0,2}$/, 'must be base64');
const PayloadsBody = z.object({
  payloads: z
    .array(z.object({ metadata: z.record(z.string(), base64).optional(), data: base64.optional() }))
    .max(1000),
});
type JsonPayload = z.infer<typeof PayloadsBody>['payloads'][number];

const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))])),
  data: new Uint8Array(Buffer.from(p.data ?? '', 'base64')),
});
const toJson = (p: Payload): { metadata: Record<string, string>; data: string } => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

function tokenMatches(header: string | undefined, token: string): boolean {
  const presented = /^Bearer (.+)$/i.exec(header ?? '')?.[1] ?? '';
  const a = crypto.createHash('sha256').update(presented).digest();
  const b = crypto.createHash('sha256').update(token).digest();
  return crypto.timingSafeEqual(a, b) && presented.length > 0;
}

/**
 * Koa middleware serving the codec endpoint; passes every other path on. `token` undefined
 * turns the endpoint off. `bodyLimitBytes` bounds the JSON body (BODY_LIMIT_BYTES).
 */
export function codecServer(options: { codec: PayloadCodec; token: string | undefined; corsOrigins: readonly string[]; bodyLimitBytes: number }): Koa.Middleware {
  const { codec, token } = options;
  const parse = jsonBody(options.bodyLimitBytes);
  const origins = new Set(options.corsOrigins);
  return async (ctx, next) => {
    const kind = ctx.path === CODEC_PATHS.decode ? 'decode' : ctx.path === CODEC_PATHS.encode ? 'encode' : null;
    if (!kind || !token) return next();
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
    if (!tokenMatches(ctx.get('Authorization'), token)) {
      throw new AppError('AUTHENTICATION_ERROR', 'The codec endpoint needs Authorization: Bearer <operator codec token>');
    }
    await parse(ctx, async () => undefined);
    const body = PayloadsBody.safeParse((ctx.request as { body?: unknown }).body);
    if (!body.success) throw new AppError('VALIDATION_ERROR', 'Expected {"payloads":[{"metadata":{...base64},"data":"base64"}]}');
    const payloads = body.data.payloads.map(fromJson);
    let out: Payload[];
    try {
      out = kind === 'decode' ? await codec.decode(payloads) : await codec.encode(payloads);
    } catch (err) {
      if (err instanceof PayloadDecryptionError) throw new AppError('INVALID_REQUEST', err.message, { cause: err });
      throw err;
    }
    ctx.status = 200;
    ctx.body = { payloads: out.map(toJson) };
  };
}
