/**
 * Wire contracts of the buyer connection surface `/platform-seller-invites` (spec §4.3, §5.5):
 * one strict zod schema per shape; they validate, give the TypeScript types and feed the
 * OpenAPI document. Bodies and responses are snake_case, without the envelope (spec §7.2);
 * `objectOfInsertedIds` keeps the spec's camelCase name.
 *
 * Limits (decision): names trimmed, 1–100 characters; `buyer_email` trimmed and lower-cased,
 * valid per zod's email format, at most 254 characters; `seller_slug` 1–64 characters;
 * `query_param` at most 255 characters and may be empty. Unknown fields are rejected.
 */
import { z } from 'zod';

const buyerEmail = z
  .string()
  .trim()
  .toLowerCase()
  .check(z.email())
  .max(254)
  .meta({ description: "The buyer's email; trimmed and compared case-insensitively", example: 'jane.doe@example.com' });
const sellerSlug = z
  .string()
  .trim()
  .min(1, { message: 'must not be empty' })
  .max(64)
  .meta({ description: "The calling API key's own root account slug, as shown in the developer portal", example: 'harbor-events' });
const queryParam = z
  .string()
  .max(255)
  .meta({ description: 'Attribution code recorded with the connection; may be empty', example: 'spring-fair-2026' });
const personName = z.string().trim().min(1, { message: 'must not be empty' }).max(100);

/** Body of `POST /platform-seller-invites/checkIfBuyerExists` (spec §4.3). */
export const CheckIfBuyerExistsBody = z.strictObject({ buyer_email: buyerEmail, seller_slug: sellerSlug, query_param: queryParam }).meta({
  id: 'CheckIfBuyerExistsRequest',
  example: { buyer_email: 'jane.doe@example.com', seller_slug: 'harbor-events', query_param: 'spring-fair-2026' },
});
export type CheckIfBuyerExistsBody = z.infer<typeof CheckIfBuyerExistsBody>;

/** Body of `POST /platform-seller-invites/newConnect` (spec §4.3). */
export const NewConnectBody = z
  .strictObject({
    buyer_first_name: personName,
    buyer_last_name: personName,
    buyer_email: buyerEmail,
    seller_slug: sellerSlug,
    query_param: queryParam,
  })
  .meta({
    id: 'NewConnectRequest',
    example: {
      buyer_first_name: 'Jane',
      buyer_last_name: 'Doe',
      buyer_email: 'jane.doe@example.com',
      seller_slug: 'harbor-events',
      query_param: 'spring-fair-2026',
    },
  });
export type NewConnectBody = z.infer<typeof NewConnectBody>;

const idpAccntUuid = z.uuid().meta({ description: "The buyer's account id, used with access_token on the quote endpoints" });
const accessToken = z.string().meta({ description: 'Short-lived buyer access token; keep it server-side' });
const accessTokenExpiresAt = z.iso
  .datetime()
  .meta({ description: 'When access_token stops working (ISO 8601; lifetime BUYER_ACCESS_TOKEN_TTL_SECONDS, default 900 s)' });

const EXAMPLE_UUID = '3f1c2a9e-7b4d-4e2a-9c61-0d5e8b7a4f12';
const EXAMPLE_TOKEN = 'bat_q8Jm2vX0cL4nR7tY1wZ5kP9sD3fG6hA0bE2uI4oN8mQ';
const EXAMPLE_EXPIRES = '2026-11-22T04:15:00.000Z';

/**
 * Response of `checkIfBuyerExists`: whether the buyer is connected to this seller; when it is,
 * the buyer's `idp_accnt_uuid` and a fresh access token.
 */
export const CheckIfBuyerExistsResponse = z
  .object({
    buyer_exists: z.boolean().meta({ description: "True only when the buyer is connected to the calling key's root account" }),
    idp_accnt_uuid: idpAccntUuid.optional(),
    access_token: accessToken.optional(),
    access_token_expires_at: accessTokenExpiresAt.optional(),
  })
  .meta({
    id: 'CheckIfBuyerExistsResponse',
    example: { buyer_exists: true, idp_accnt_uuid: EXAMPLE_UUID, access_token: EXAMPLE_TOKEN, access_token_expires_at: EXAMPLE_EXPIRES },
  });
export type CheckIfBuyerExistsResponse = z.infer<typeof CheckIfBuyerExistsResponse>;

/** Response of `newConnect` (spec §4.3: buyer_already_exists and objectOfInsertedIds, plus the buyer's credentials). */
export const NewConnectResponse = z
  .object({
    buyer_already_exists: z
      .boolean()
      .meta({ description: 'True when the buyer was already connected to this seller; nothing was created' }),
    objectOfInsertedIds: z
      .object({
        buyer_id: z.uuid().nullable().meta({ description: 'idp_accnt_uuid of the buyer this call created, else null' }),
        buyer_connection_id: z.number().int().nullable().meta({ description: 'Id of the connection this call created, else null' }),
      })
      .meta({ description: 'Only what this call inserted' }),
    idp_accnt_uuid: idpAccntUuid,
    access_token: accessToken,
    access_token_expires_at: accessTokenExpiresAt,
  })
  .meta({
    id: 'NewConnectResponse',
    example: {
      buyer_already_exists: false,
      objectOfInsertedIds: { buyer_id: EXAMPLE_UUID, buyer_connection_id: 41 },
      idp_accnt_uuid: EXAMPLE_UUID,
      access_token: EXAMPLE_TOKEN,
      access_token_expires_at: EXAMPLE_EXPIRES,
    },
  });
export type NewConnectResponse = z.infer<typeof NewConnectResponse>;
