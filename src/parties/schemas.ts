/**
 * Wire contracts of `GET /api/v1/parties` (snake_case, the `/api/v1` envelope and list metadata):
 * the insurers and MGAs that appointed the key's account, each with the account's products naming it.
 */
import { z } from 'zod';
import { pageQueryFields } from '../http/query';

export const ListPartiesQuery = z.strictObject({ ...pageQueryFields(20) });
export type ListPartiesQuery = z.infer<typeof ListPartiesQuery>;

export const Party = z
  .object({
    object: z.literal('party'),
    id: z.number().int().meta({
      description:
        'The party’s root account id: what a product’s `insurerRootAccountID` / `mgaRootAccountID` and a bordereau’s `party_id` name',
    }),
    kind: z.enum(['insurer', 'mga']),
    name: z.string(),
    register_number: z
      .string()
      .nullable()
      .meta({ description: 'An insurer’s NAIC company code, an MGA’s register number; null when none is on record', example: '10001' }),
    product_ids: z.array(z.number().int()).meta({
      description: 'Ids of this account’s products naming the party as insurer or MGA, ascending (a test key: test-mode products only)',
    }),
    appointed_at: z.string().meta({ description: 'When the party appointed this account, ISO 8601 UTC' }),
  })
  .meta({
    id: 'Party',
    description: 'An insurer or MGA that appointed this account to sell for it: a product may name only such a party.',
    example: {
      object: 'party',
      id: 3,
      kind: 'insurer',
      name: 'Evergreen Mutual Insurance Co.',
      register_number: '10001',
      product_ids: [1, 3],
      appointed_at: '2026-12-08T10:00:00.000Z',
    },
  });
export type Party = z.infer<typeof Party>;
