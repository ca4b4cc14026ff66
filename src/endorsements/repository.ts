/**
 * The one writer of `endorsements` (migration 20261127000300): quotes of mid-term changes and,
 * once carried out, what they reissued. Reads the product lines' question sets for the longest
 * trip each product allows (a move is validated like a quote).
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import type { EndorsementChange } from './schemas';

export interface StoredEndorsement {
  id: number;
  quoteId: string;
  purchaseId: number;
  apiKeyId: number | null;
  status: 'quoted' | 'applied';
  changes: EndorsementChange[];
  currency: string;
  premiumDifferenceMinor: number;
  platformFeeDifferenceMinor: number;
  totalDifferenceMinor: number;
  reissues: Array<{ certificateNumber: string; coveredUnitId: number; certificateHolderId: number | null }>;
  fingerprint: string;
  reissued: Array<{ from: string; to: string }> | null;
  createdAt: Date;
  expiresAt: Date;
  appliedAt: Date | null;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const toEndorsement = (r: Record<string, any>): StoredEndorsement => ({
  id: r.id,
  quoteId: r.quote_id,
  purchaseId: r.purchase_id,
  apiKeyId: r.api_key_id ?? null,
  status: r.status,
  changes: r.changes,
  currency: r.currency,
  premiumDifferenceMinor: Number(r.premium_difference_minor),
  platformFeeDifferenceMinor: Number(r.platform_fee_difference_minor),
  totalDifferenceMinor: Number(r.total_difference_minor),
  reissues: r.reissues,
  fingerprint: r.fingerprint,
  reissued: r.reissued ?? null,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  appliedAt: r.applied_at ?? null,
});

export function createEndorsementsRepository(db: Db | Knex.Transaction) {
  return {
    async saveQuote(e: Omit<StoredEndorsement, 'id' | 'status' | 'reissued' | 'createdAt' | 'appliedAt'>): Promise<StoredEndorsement> {
      const [row] = await db('endorsements')
        .insert({
          quote_id: e.quoteId,
          purchase_id: e.purchaseId,
          api_key_id: e.apiKeyId,
          status: 'quoted',
          changes: JSON.stringify(e.changes),
          currency: e.currency,
          premium_difference_minor: e.premiumDifferenceMinor,
          platform_fee_difference_minor: e.platformFeeDifferenceMinor,
          total_difference_minor: e.totalDifferenceMinor,
          reissues: JSON.stringify(e.reissues),
          fingerprint: e.fingerprint,
          expires_at: e.expiresAt,
        })
        .returning('*');
      return toEndorsement(row);
    },

    async findByQuote(quoteId: string, opts: { forUpdate?: boolean } = {}): Promise<StoredEndorsement | undefined> {
      const q = db('endorsements').where({ quote_id: quoteId });
      if (opts.forUpdate) q.forUpdate();
      const row = await q.first();
      return row ? toEndorsement(row) : undefined;
    },

    /** The purchase's endorsements carried out, oldest first. */
    async applied(purchaseId: number): Promise<StoredEndorsement[]> {
      return (await db('endorsements').where({ purchase_id: purchaseId, status: 'applied' }).orderBy('applied_at')).map(toEndorsement);
    },

    /** Marks quote `quoteId` applied at `at` with the certificates it reissued (once). */
    async markApplied(quoteId: string, reissued: Array<{ from: string; to: string }>, at: Date): Promise<StoredEndorsement> {
      await db('endorsements')
        .where({ quote_id: quoteId, status: 'quoted' })
        .update({ status: 'applied', reissued: JSON.stringify(reissued), applied_at: at });
      return toEndorsement(await db('endorsements').where({ quote_id: quoteId }).first());
    },

    /** The longest trip (days) each of `productLineIds` allows: its question set's trips question (90 when it names none). */
    async maxTripDays(productLineIds: number[]): Promise<Map<number, number>> {
      const rows = productLineIds.length
        ? await db('product_lines as pl')
            .leftJoin('question_sets as qs', 'qs.id', 'pl.question_set_id')
            .whereIn('pl.id', productLineIds)
            .select('pl.id', 'qs.definition')
        : [];
      return new Map(
        rows.map((r) => {
          const questions: Array<{ kind?: string; max_trip_days?: number }> = r.definition?.questions ?? [];
          return [Number(r.id), questions.find((q) => q.kind === 'trips')?.max_trip_days ?? 90];
        }),
      );
    },
  };
}

export type EndorsementsRepository = ReturnType<typeof createEndorsementsRepository>;
