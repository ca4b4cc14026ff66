/**
 * Activities of the premium bordereaux: `generateBordereau` writes one bordereau's CSV file
 * (RFC 4180, CRLF line ends, a header row of `BORDEREAU_COLUMNS`) from its month's ledger into the
 * bucket under `reports/bordereaux/<agency>/<party>/<mode>/<YYYY-MM>.csv`, streamed (the ledger
 * in batches through a cursor, the file through csv-stringify into a stream upload), then records
 * it ready with its size, SHA-256, row count and totals. Safe to retry: a file already stored
 * under the key is kept (a delivered file is never rewritten) and a ready bordereau is never
 * changed. Storage failures throw, so the workflow retries until storage is back.
 */
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { Db } from '../src/db/knex';
import type { ObjectStore } from '../src/storage/object-store';
import { createReportsRepository } from '../src/reports/repository';
import { addToTotals, BORDEREAU_COLUMNS, bordereauRow, monthRange, type BordereauTotals } from '../src/reports/bordereau';

/** Where a bordereau's CSV file lives in the bucket. */
export function bordereauStorageKey(b: { rootAccountId: number; partyRootAccountId: number; mode: string; month: string }): string {
  return `reports/bordereaux/${b.rootAccountId}/${b.partyRootAccountId}/${b.mode}/${b.month}.csv`;
}

export function createReportActivities(deps: { db: Db; store: ObjectStore }) {
  const reports = createReportsRepository(deps.db);
  return {
    /** Generates bordereau `bordereauId`'s file and records it ready; returns its row count and SHA-256. */
    async generateBordereau(input: { bordereauId: number }): Promise<{ rows: number; sha256: string }> {
      const b = await reports.find(input.bordereauId);
      if (!b) throw new Error(`bordereau ${input.bordereauId} does not exist`);
      if (b.status === 'ready') return { rows: b.rowCount ?? 0, sha256: b.sha256 ?? '' };
      const range = monthRange(b.month)!;
      const totals: BordereauTotals = {};
      let rows = 0;
      async function* records(): AsyncGenerator<string[]> {
        yield BORDEREAU_COLUMNS.map((c) => c.name);
        for await (const batch of reports.ledger(b!, range)) {
          for (const entry of batch) {
            addToTotals(totals, entry);
            rows += 1;
            yield bordereauRow(b!.month, entry);
          }
        }
      }
      const csv = Readable.from(records()).pipe(stringify({ record_delimiter: 'windows' }));
      const key = bordereauStorageKey(b);
      const stored = await deps.store.putIfAbsent(key, csv, { contentType: 'text/csv; charset=utf-8', onExisting: 'keep' });
      await reports.markReady(b.id, { storageKey: key, sizeBytes: stored.size, sha256: stored.sha256, rowCount: rows, totals });
      return { rows, sha256: stored.sha256 };
    },
  };
}

export type ReportActivities = ReturnType<typeof createReportActivities>;
