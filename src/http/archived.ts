/**
 * The answer of an archive call (products and question sets of `/api/v1`, camelCase like their
 * other bodies): the resource's id and when it was archived.
 */
import { z } from 'zod';

export const ArchivedResource = z
  .object({
    id: z.number().int(),
    archivedAt: z.string().meta({ description: 'When it was archived, ISO 8601 UTC (the first time, when archived again)' }),
  })
  .meta({ id: 'ArchivedResource' });
export type ArchivedResource = z.infer<typeof ArchivedResource>;
