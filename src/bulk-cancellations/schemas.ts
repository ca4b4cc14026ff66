/**
 * Wire contracts of `/api/v1/bulk_cancellations`: a batch of cancellations and its progress.
 * snake_case; amounts integer minor units of each purchase's currency; instants ISO 8601 UTC.
 */
import { z } from 'zod';

/** Most purchases one batch cancels. */
export const BULK_CANCELLATION_MAX = 1000;

/** Which units of a purchase found by product and date a batch cancels: the product's on that date, or all of the purchase's on that date. */
export const BULK_SCOPES = ['product_units', 'purchase_date'] as const;

const id = z.number().int().min(1).max(2_147_483_647);

/** Body of `POST /api/v1/bulk_cancellations`: purchases by id, or a product and a covered date. */
export const CreateBulkCancellationRequest = z
  .strictObject({
    purchase_ids: z
      .array(id)
      .min(1)
      .max(BULK_CANCELLATION_MAX)
      .refine((ids) => new Set(ids).size === ids.length, { message: 'must not repeat a purchase' })
      .optional()
      .meta({ description: `The purchases to cancel (every covered unit not started yet), at most ${BULK_CANCELLATION_MAX}, each once` }),
    product_id: id.optional().meta({
      description:
        'With coverage_date: every purchase in force of this product with a covered unit on that date; those units are cancelled',
    }),
    coverage_date: z.iso.date().optional().meta({
      description:
        'The local date (YYYY-MM-DD, in each risk’s own time zone) whose covered units are cancelled, e.g. the day of an event called off',
    }),
    scope: z.enum(BULK_SCOPES).optional().meta({
      description:
        'With product_id and coverage_date, which units of each purchase found are cancelled: `product_units` (default: that product’s units on that date) or `purchase_date` (every unit of the purchase on that date, whatever its product: a bundle’s other products too, e.g. the equipment day beside the liability day)',
    }),
    requested_by: z
      .enum(['agency', 'insurer'])
      .default('agency')
      .meta({ description: 'Who asks: `agency` (default) or `insurer` (the product may give the insurer another refund method)' }),
    reason: z.string().trim().min(1).max(500).optional().meta({ description: 'Why, in a few words (kept with each cancellation)' }),
  })
  .superRefine((b, ctx) => {
    const byIds = b.purchase_ids !== undefined;
    const byDate = b.product_id !== undefined || b.coverage_date !== undefined;
    if (byIds === byDate)
      ctx.addIssue({ code: 'custom', path: ['purchase_ids'], message: 'send either purchase_ids, or product_id with coverage_date' });
    else if (byDate && (b.product_id === undefined || b.coverage_date === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [b.product_id === undefined ? 'product_id' : 'coverage_date'],
        message: 'product_id and coverage_date go together',
      });
    if (byIds && b.scope !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['scope'],
        message: 'scope goes with product_id and coverage_date (named purchases lose every unit not started)',
      });
  })
  .meta({
    id: 'CreateBulkCancellationRequest',
    example: { product_id: 12, coverage_date: '2027-05-01', scope: 'purchase_date', reason: 'Festival called off by the city' },
  });
export type CreateBulkCancellationRequest = z.infer<typeof CreateBulkCancellationRequest>;

const BulkItem = z
  .object({
    purchase_id: z.number().int(),
    status: z.enum(['pending', 'accepted', 'skipped', 'failed']).meta({
      description:
        '`pending` (not handled yet), `accepted` (its cancellation was accepted; see cancellation_status), `skipped` (nothing to cancel: not a purchase of this key, not in force, or its units started or were taken) or `failed` (refused; see error)',
    }),
    covered_unit_ids: z.array(z.number().int()).nullable().meta({ description: 'The units it cancels (null: every unit not started)' }),
    cancellation_id: z.number().int().nullable(),
    cancellation_status: z
      .string()
      .nullable()
      .meta({ description: 'The cancellation’s own status (`accepted`, `refund_pending`, `completed`, `refund_failed`); null before' }),
    refund_total: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Its refund, integer minor units of the purchase’s currency; null before' }),
    error: z
      .object({ code: z.string(), message: z.string() })
      .nullable()
      .meta({ description: 'Why it was skipped or failed (the code a single cancel would have answered)' }),
  })
  .meta({ id: 'BulkCancellationItem' });

export const BulkCancellation = z
  .object({
    object: z.literal('bulk_cancellation'),
    id: z.number().int(),
    status: z.enum(['running', 'completed']).meta({
      description: '`running` until every purchase was handled, then `completed` (refunds may still be on their way: see each item)',
    }),
    selection: z.union([
      z.object({ purchase_ids: z.array(z.number().int()) }),
      z.object({ product_id: z.number().int(), coverage_date: z.string(), scope: z.enum(BULK_SCOPES) }),
    ]),
    requested_by: z.enum(['agency', 'insurer']),
    reason: z.string().nullable(),
    counts: z.object({
      total: z.number().int().meta({ description: 'Purchases of the batch (each counted once below by its outcome)' }),
      pending: z.number().int(),
      accepted: z.number().int(),
      skipped: z.number().int(),
      failed: z.number().int(),
      refunded: z.number().int().meta({ description: 'Accepted cancellations whose refund succeeded (completed)' }),
      units: z
        .object({
          total: z.number().int().meta({ description: 'Covered units the batch cancels' }),
          of_product: z
            .number()
            .int()
            .nullable()
            .meta({ description: 'Of them, units of the selected product (null: purchases named by id)' }),
          of_other_products: z.number().int().nullable().meta({
            description:
              'Of them, units of the purchases’ other products on that date (scope `purchase_date`; null: purchases named by id)',
          }),
        })
        .meta({
          description:
            'The covered units of the batch’s items: those selected by product and date, or, for a purchase named by id, those its accepted cancellation took (none before)',
        }),
      purchases_with_other_products: z.number().int().meta({
        description: 'Purchases of the batch with units of other products cancelled too (scope `purchase_date`, e.g. a bundle’s)',
      }),
    }),
    items: z.array(BulkItem).meta({ description: 'Each purchase of the batch, by id' }),
    created_at: z.string(),
    completed_at: z.string().nullable(),
  })
  .meta({ id: 'BulkCancellation' });
export type BulkCancellation = z.infer<typeof BulkCancellation>;
