/**
 * Wire contracts of `/api/v1/reports/bordereaux` (snake_case, the `/api/v1` envelope): the request
 * for one month's premium bordereau of one party, the list filters, and the bordereau object.
 * Amounts in the API are integer minor units; the file itself has major units (see the column reference).
 */
import { z } from 'zod';
import { pageQueryFields, queryInt } from '../http/query';
import { BORDEREAU_COLUMNS } from './bordereau';
import { LOSS_BORDEREAU_COLUMNS } from './loss-bordereau';

const month = z
  .string()
  .regex(/^\d{4}-(0[1-9]|1[0-2])$/, { message: 'must be a month YYYY-MM' })
  .meta({
    description:
      'Reporting month, YYYY-MM (UTC): a month that is over, or in test mode the current month (a provisional bordereau to date)',
    example: '2026-10',
  });
const mode = z.enum(['live', 'test']);

export const CreateBordereauRequest = z
  .strictObject({
    party_id: z
      .number()
      .int()
      .min(1)
      .meta({ description: 'The insurer or MGA root account the bordereau is for (a product’s insurer or MGA)' }),
    month,
    mode: mode.optional().meta({ description: 'Default: the key’s mode. A test key has test-mode bordereaux only.' }),
  })
  .meta({ id: 'CreateBordereauRequest', example: { party_id: 3, month: '2026-10' } });
export type CreateBordereauRequest = z.infer<typeof CreateBordereauRequest>;

export const ListBordereauxQuery = z.strictObject({
  party_id: queryInt(1, 2_147_483_647).optional().meta({ description: 'Only this party’s' }),
  month: month.optional(),
  mode: mode.optional().meta({ description: 'Only this mode’s (a test key: test only)' }),
  ...pageQueryFields(20),
});
export type ListBordereauxQuery = z.infer<typeof ListBordereauxQuery>;

/** A bordereau's totals per currency (the API and report.ready). */
export const BordereauTotals = z
  .record(
    z.string(),
    z.object({
      rows: z.number().int(),
      gross_premium: z.number().int(),
      platform_fee: z.number().int(),
      tax: z.number().int(),
      commission: z.number().int().optional().meta({ description: 'The agency’s commission; only when a row of the currency has one' }),
      net_premium: z.number().int().meta({ description: 'Gross premium less commission' }),
    }),
  )
  .meta({ description: 'Per currency (upper case): rows and sums in integer minor units (negative: more went back than was written)' });

/** One stored file of a bordereau (the API; report.ready carries it without the link). */
export const BordereauFile = z
  .object({
    download_url: z.string().meta({ description: 'Signed link to the file, valid for an hour (read the bordereau again for a fresh one)' }),
    size_bytes: z.number().int(),
    sha256: z.string().meta({ description: 'SHA-256 of the file, lower-case hex: the same file whenever it is asked for again' }),
  })
  .meta({ id: 'BordereauFile' });

/** The loss bordereau beside a premium bordereau: the month's claims (./loss-bordereau.ts). */
export const LossBordereau = z
  .object({
    rows: z.number().int().meta({ description: 'Claim rows: every claim open at some time in the month (the header and totals aside)' }),
    totals: z
      .record(
        z.string(),
        z.object({
          claims: z.number().int(),
          opened: z.number().int().meta({ description: 'Claims filed in the month' }),
          denied: z.number().int().meta({ description: 'Claims denied in the month' }),
          paid: z.number().int().meta({ description: 'Claims paid in the month' }),
          paid_this_month: z.number().int(),
          reserve: z.number().int().meta({ description: 'Outstanding at the month’s end' }),
          total_incurred: z.number().int(),
        }),
      )
      .meta({ description: 'Per currency (upper case): claim counts and sums in integer minor units' }),
    files: z.object({ csv: BordereauFile, xlsx: BordereauFile }),
  })
  .meta({
    id: 'LossBordereau',
    description: `The month’s claims on the party’s products, one row per claim open at some time in the month, as CSV and XLSX (a totals row per currency). Columns: ${LOSS_BORDEREAU_COLUMNS.map((c) => `\`${c.name}\` (${c.description})`).join('; ')}.`,
  });

export const Bordereau = z
  .object({
    object: z.literal('bordereau'),
    id: z.number().int(),
    party_id: z.number().int(),
    month: z.string().meta({ description: 'YYYY-MM' }),
    mode: mode,
    provisional: z.boolean().meta({
      description:
        'true: a test-mode bordereau of the current month to date (`covers_until`), made anew on each request and never the month’s final one; false: the final bordereau of a month that is over',
    }),
    covers_until: z.string().nullable().meta({
      description: 'A provisional bordereau’s end (exclusive), when it was asked for, ISO 8601 UTC; null for a final one (the whole month)',
    }),
    status: z.enum(['generating', 'ready']).meta({ description: '`generating` until its file is stored, then `ready` for good' }),
    rows: z.number().int().nullable().meta({ description: 'Transaction rows (the header and totals aside); null while generating' }),
    totals: BordereauTotals.nullable(),
    files: z.object({ csv: BordereauFile, xlsx: BordereauFile }).nullable().meta({
      description:
        'The same rows as CSV (RFC 4180, amounts as text with two decimals) and XLSX (typed cells, frozen header, a totals row per currency); null while generating',
    }),
    loss: LossBordereau.nullable().meta({
      description:
        'The loss bordereau beside it (the same agency, party, month and mode’s claims); null while generating, and for bordereaux made before loss bordereaux',
    }),
    created_at: z.string().meta({ description: 'When it was first asked for, ISO 8601 UTC' }),
    generated_at: z.string().nullable().meta({ description: 'When its file was stored, ISO 8601 UTC' }),
  })
  .meta({
    id: 'Bordereau',
    description: `A month’s premium bordereau for one insurer or MGA: one row per transaction and purchase item. Columns: ${BORDEREAU_COLUMNS.map((c) => `\`${c.name}\` (${c.description})`).join('; ')}.`,
  });
export type Bordereau = z.infer<typeof Bordereau>;
