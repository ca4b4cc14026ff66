/**
 * Wire contract of `POST /api/v1/buyers/{id}/erasure` (issue 52, item 3): the erasure as the API
 * answers it (snake_case, inside the success envelope), with the field-by-field decision of
 * ./erasure-rules.ts. Instants are ISO 8601 UTC.
 */
import { z } from 'zod';
import { ERASED_NOW, KEPT_WITH_POLICY, RETAINED_UNTIL_RETENTION_ENDS } from './erasure-rules';

export const BuyerErasure = z
  .object({
    id: z.number().int().meta({ description: 'The erasure’s id' }),
    buyer_id: z.string().meta({ description: 'The buyer’s `idp_accnt_uuid` (the id newConnect and checkIfBuyerExists answer)' }),
    erased_at: z.string().meta({ description: 'When the contact data was erased (UTC)' }),
    purchases: z.number().int().meta({ description: 'How many of the buyer’s purchases in this account and mode it reached' }),
    erased: z.array(z.enum(ERASED_NOW)).meta({ description: 'Erased at once: contact data the insurance record does not need' }),
    retained: z.array(z.enum(RETAINED_UNTIL_RETENTION_ENDS)).meta({
      description:
        'The names on the policies: shown nowhere from now on (every answer, page and new document reads `(name erased)`), kept apart as part of the insurance record until `retention_ends_at`, then dropped for good',
    }),
    kept: z.array(z.enum(KEPT_WITH_POLICY)).meta({
      description:
        'Kept with the policy: the risk location, the certificate holders, the ledger and the certificates already issued (valid documents)',
    }),
    retention_ends_at: z.string().meta({
      description:
        'When the retained names are dropped: the account’s retention period (default 7 years) after the last coverage of the buyer’s purchases ends',
    }),
    pseudonymised_at: z.string().nullable().meta({ description: 'When the retained names were dropped; null until then' }),
  })
  .meta({
    id: 'BuyerErasure',
    example: {
      id: 12,
      buyer_id: '0b7e2a4c-8f4d-4a57-9a55-1c3d2e4f5a6b',
      erased_at: '2026-12-09T10:00:00.000Z',
      purchases: 2,
      erased: [...ERASED_NOW],
      retained: [...RETAINED_UNTIL_RETENTION_ENDS],
      kept: [...KEPT_WITH_POLICY],
      retention_ends_at: '2034-05-03T05:00:00.000Z',
      pseudonymised_at: null,
    },
  });
export type BuyerErasure = z.infer<typeof BuyerErasure>;
