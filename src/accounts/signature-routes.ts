/**
 * The authorized representative on an agency's certificates (issue 50, item 1):
 * `PUT /api/v1/account/signature` sets the representative's name and signature image (PNG or
 * JPEG, sent base64 in JSON, at most `MAX_SIGNATURE_BYTES`), stored in object storage under
 * `signatures/<account>/<sha256>.<ext>`; `GET /api/v1/account/signature` reads it (404 NOT_FOUND
 * when none is set). Certificates issued from then on print the name and the image in the
 * "Authorized representative" box. Errors: 400 VALIDATION_ERROR for a missing name, an image that
 * is not base64, not a PNG or JPEG (by its bytes, whatever `content_type` says) or over the size
 * limit.
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { parseBody } from '../http/validation';
import { successEnvelope } from '../http/openapi';
import * as resource from '../http/resource-routes';
import { AppError } from '../shared/errors';
import type { Principal } from '../api-keys/service';
import { sha256Of, type ObjectStore } from '../storage/object-store';
import type { AccountSignature, SignatureRepository } from './signature-repository';

/** Largest signature image accepted, in bytes (decoded). */
export const MAX_SIGNATURE_BYTES = 100 * 1024;

/** The image type its first bytes show: PNG (`89 50 4E 47 0D 0A 1A 0A`), JPEG (`FF D8 FF`), or null. */
export function signatureImageType(bytes: Buffer): 'image/png' | 'image/jpeg' | null {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  return null;
}

export const PutSignatureBody = z
  .strictObject({
    representative_name: z
      .string()
      .trim()
      .min(1)
      .max(120)
      .regex(/^[^\r\n]*$/, 'must be one line')
      .meta({ description: 'The authorized representative’s name, printed under the signature' }),
    content_type: z.enum(['image/png', 'image/jpeg']).meta({ description: 'The image’s type; its bytes must be of that type' }),
    image_base64: z
      .string()
      .min(1)
      .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'must be base64')
      .meta({ description: `The signature image, base64; at most ${MAX_SIGNATURE_BYTES} bytes decoded` }),
  })
  .meta({
    id: 'PutSignatureRequest',
    example: { representative_name: 'Dana Reyes', content_type: 'image/png', image_base64: 'iVBORw0KGgoAAAANSUhEUg==' },
  });
export type PutSignatureBody = z.infer<typeof PutSignatureBody>;

export const SignatureRead = z
  .object({
    representative_name: z.string(),
    content_type: z.enum(['image/png', 'image/jpeg']),
    size_bytes: z.number().int(),
    sha256: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'AccountSignature' });
export type SignatureRead = z.infer<typeof SignatureRead>;

const read = (s: AccountSignature): SignatureRead => ({
  representative_name: s.representativeName,
  content_type: s.contentType,
  size_bytes: s.sizeBytes,
  sha256: s.sha256,
  updated_at: s.updatedAt.toISOString(),
});

const invalid = (path: string, message: string) =>
  new AppError('VALIDATION_ERROR', `${path}: ${message}`, { details: [{ path, message }] });

/** Sets and reads an account's signature; errors as the module says. */
export function createSignatureService(deps: { signatures: SignatureRepository; store: Pick<ObjectStore, 'putIfAbsent'> }) {
  return {
    async get(principal: Principal): Promise<SignatureRead> {
      const s = await deps.signatures.find(principal.rootAccountId);
      if (!s) throw new AppError('NOT_FOUND', 'No signature set for this account (PUT /api/v1/account/signature sets one)');
      return read(s);
    },
    async put(principal: Principal, body: PutSignatureBody): Promise<SignatureRead> {
      const bytes = Buffer.from(body.image_base64, 'base64');
      if (bytes.length > MAX_SIGNATURE_BYTES)
        throw invalid('image_base64', `the image is ${bytes.length} bytes; at most ${MAX_SIGNATURE_BYTES}`);
      const type = signatureImageType(bytes);
      if (type === null) throw invalid('image_base64', 'must be a PNG or JPEG image');
      if (type !== body.content_type) throw invalid('content_type', `the image is ${type}`);
      const sha256 = sha256Of(bytes);
      const key = `signatures/${principal.rootAccountId}/${sha256}.${type === 'image/png' ? 'png' : 'jpg'}`;
      await deps.store.putIfAbsent(key, bytes, { contentType: type });
      return read(
        await deps.signatures.save({
          rootAccountId: principal.rootAccountId,
          representativeName: body.representative_name,
          storageKey: key,
          contentType: type,
          sizeBytes: bytes.length,
          sha256,
        }),
      );
    },
  };
}

export function signatureRoutes(service: ReturnType<typeof createSignatureService>): RouteRegistration {
  return (router, registry) => {
    router.get('/account/signature', async (ctx) => {
      ctx.body = ok(await service.get(ctx.state.principal!), 'Signature retrieved');
    });
    router.put('/account/signature', async (ctx) => {
      const body = parseBody(PutSignatureBody, ctx.request.body);
      ctx.body = ok(await service.put(ctx.state.principal!, body), 'Signature set');
    });
    const description =
      'The authorized representative the account’s certificates print: a name and a signature image (PNG or JPEG, at most 100 KiB) shown in the "Authorized representative" box of certificates issued from then on. Without one, that box names the agency.';
    resource.registerBodyPath(registry, {
      method: 'put',
      path: '/api/v1/account/signature',
      operationId: 'putAccountSignature',
      tags: ['Account'],
      summary: 'Set the authorized representative’s name and signature image',
      description: `${description} 400 VALIDATION_ERROR for an image that is not a PNG or JPEG (by its bytes), does not match content_type, or is too large.`,
      body: PutSignatureBody,
      responses: {
        200: resource.jsonResponse('The signature', successEnvelope(SignatureRead, 'AccountSignatureResponse')),
        400: resource.errorResponse('VALIDATION_ERROR: a missing name, an image of another type or over the size limit'),
      },
    });
    registry.registerPath({
      method: 'get',
      path: '/api/v1/account/signature',
      operationId: 'getAccountSignature',
      tags: ['Account'],
      summary: 'Get the authorized representative’s name and signature image details',
      description,
      responses: {
        200: resource.jsonResponse('The signature', successEnvelope(SignatureRead, 'AccountSignatureReadResponse')),
        404: resource.errorResponse('NOT_FOUND: no signature set'),
      },
    });
  };
}
