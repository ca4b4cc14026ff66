/**
 * Activities of the premium bordereaux: `generateBordereau` writes one bordereau's files from its
 * month's ledger (a provisional one's: the month up to when it was asked for) into the bucket under
 * `reports/bordereaux/<agency>/<party>/<mode>/<YYYY-MM>.<format>` (provisional: `<YYYY-MM>-provisional-<id>`):
 *
 * - CSV: RFC 4180, CRLF line ends, a header row of `BORDEREAU_COLUMNS`, amounts as text with two
 *   decimals (a batch at a time);
 * - XLSX: one sheet `Bordereau` with a frozen header row, typed cells (dates, counts, amounts as
 *   numbers shown with two decimals) and a totals row per currency (exceljs' streaming writer).
 *
 * Both files are streamed from one pass over the ledger (batches through a cursor), each into a
 * stream upload, the writer waiting for the uploads after each batch (./bordereau-files.ts), in
 * two worker threads with capped heaps, one for the ledger and the CSV, one for the XLSX
 * (./bordereau-thread.ts). Then the bordereau is recorded ready with both files' sizes and
 * SHA-256, its row count and totals, with its loss bordereau beside it (the month's claims:
 * ./loss-bordereau-files.ts, written in this process). Safe to retry: a file already stored under its key is kept (a
 * delivered file is never rewritten) and a ready bordereau is never changed. Then `report.ready`
 * goes to the agency's webhook endpoints (once per bordereau: its event id is derived from the
 * bordereau). Storage failures throw, so the workflow retries until storage is back.
 */
import type { Db } from '../src/db/knex';
import type { EventEmitter } from '../src/events/emitter';
import type { Payproc } from '../src/payproc/client';
import { reconcileMonth } from '../src/reports/reconciliation';
import { createReportsRepository, type BordereauFormat } from '../src/reports/repository';
import { monthRange } from '../src/reports/bordereau';
import type { StorageOperation } from '../src/storage/error-counting';
import { writeBordereauFilesInThread, type BordereauThreadConfig } from './bordereau-thread';
import { createLossRepository } from '../src/reports/loss-repository';
import { createObjectStore } from '../src/storage/object-store';
import { countStorageErrors } from '../src/storage/error-counting';
import { writeLossBordereauFiles } from './loss-bordereau-files';

export { bordereauStorageKey } from './bordereau-files';

export function createReportActivities(deps: {
  payproc: Payproc;
  db: Db;
  /** Where the writer thread connects: the worker's database and bucket. */
  config: BordereauThreadConfig;
  /** Counts a storage operation that failed in the writer thread (the worker's dependency-error metric). */
  onStorageError?: (operation: StorageOperation) => void;
  events: Pick<EventEmitter, 'reportReady'>;
  /** Starts a bordereau's generation once (`bordereau-<id>`). */
  startBordereau: (bordereauId: number) => Promise<void>;
}) {
  const reports = createReportsRepository(deps.db);
  const losses = createLossRepository(deps.db);
  const store = countStorageErrors(createObjectStore(deps.config), (operation) => deps.onStorageError?.(operation));

  return {
    /**
     * Reconciles `month` in `mode` with the processor (src/reports/reconciliation.ts) and keeps the
     * run (the worker's `reconciliation_differences` reads it); answers how many differences it found.
     */
    async reconcileMonth(input: { month: string; mode: 'live' | 'test' }): Promise<number> {
      return (await reconcileMonth({ reports, payproc: deps.payproc }, input)).differences.length;
    },

    /**
     * The monthly run: a bordereau of `month` (YYYY-MM) for every agency, party and mode with a
     * transaction recorded in it, each created once and its generation started (again harmless).
     * Returns their ids.
     */
    async requestMonthlyBordereaux(input: { month: string }): Promise<number[]> {
      const range = monthRange(input.month);
      if (!range) throw new Error(`not a month: ${input.month}`);
      const ids: number[] = [];
      for (const party of await reports.activeParties(range)) {
        const { record } = await reports.findOrCreate({ ...party, month: input.month });
        if (record.status !== 'ready') await deps.startBordereau(record.id);
        ids.push(record.id);
      }
      return ids;
    },

    /** Generates bordereau `bordereauId`'s files and records it ready; returns its row count and the files' SHA-256. */
    async generateBordereau(input: { bordereauId: number }): Promise<{ rows: number; sha256: Record<BordereauFormat, string> }> {
      const b = await reports.find(input.bordereauId);
      if (!b) throw new Error(`bordereau ${input.bordereauId} does not exist`);
      if (b.status === 'ready') {
        await deps.events.reportReady(b); // a retry after a lost answer: the same event id, published once
        return { rows: b.rowCount ?? 0, sha256: { csv: b.files?.csv?.sha256 ?? '', xlsx: b.files?.xlsx?.sha256 ?? '' } };
      }
      // A provisional bordereau covers its month up to when it was asked for.
      const month = monthRange(b.month)!;
      const range = b.coversUntil ? { from: month.from, to: b.coversUntil } : month;
      const { csv, xlsx, rows, totals } = await writeBordereauFilesInThread(deps.config, b, range, deps.onStorageError);
      // Beside it, the loss bordereau: the month's claims, few enough to write here in one batch.
      const loss = await writeLossBordereauFiles(store, b, range, await losses.lossEntries(b, range));
      await reports.markReady(b.id, { files: { csv, xlsx }, rowCount: rows, totals, loss });
      await deps.events.reportReady((await reports.find(b.id))!);
      return { rows, sha256: { csv: csv.sha256, xlsx: xlsx.sha256 } };
    },
  };
}

export type ReportActivities = ReturnType<typeof createReportActivities>;
