/**
 * The only writer of `buyer_withdrawal_quotes`: which cancellation quotes the buyer's withdrawal
 * page showed, per purchase. The quotes themselves are the purchases domain's
 * (`cancellation_quotes`, written by src/purchases/ledger-repository.ts); a row here says one of them was
 * priced for the buyer's own withdrawal, so a confirm can name only such a quote of its own
 * purchase, and the link counts as used once a cancellation carries one of them out.
 */
import type { Db } from '../db/knex';

export function createWithdrawalsRepository(db: Db) {
  return {
    /** Records that the withdrawal page of `purchaseId` showed quote `quoteId` (a repeat changes nothing). */
    async recordQuote(purchaseId: number, quoteId: string): Promise<void> {
      await db('buyer_withdrawal_quotes').insert({ quote_id: quoteId, purchase_id: purchaseId }).onConflict('quote_id').ignore();
    },

    /** Whether `quoteId` was shown by the withdrawal page of `purchaseId`. */
    async isQuoteOf(purchaseId: number, quoteId: string): Promise<boolean> {
      return (await db('buyer_withdrawal_quotes').where({ quote_id: quoteId, purchase_id: purchaseId }).first('quote_id')) !== undefined;
    },

    /** Every quote the withdrawal page of `purchaseId` showed. */
    async quoteIdsOf(purchaseId: number): Promise<Set<string>> {
      const rows: Array<{ quote_id: string }> = await db('buyer_withdrawal_quotes').where({ purchase_id: purchaseId }).select('quote_id');
      return new Set(rows.map((r) => r.quote_id));
    },
  };
}

export type WithdrawalsRepository = ReturnType<typeof createWithdrawalsRepository>;
