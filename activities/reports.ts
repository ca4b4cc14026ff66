/**
 * Activities of the premium bordereaux: `generateBordereau` writes one bordereau's files from its
 * month's ledger into the bucket under `reports/bordereaux/<agency>/<party>/<mode>/<YYYY-MM>.<format>`:
 *
 * - CSV: RFC 4180, CRLF line ends, a header row of `BORDEREAU_COLUMNS`, amounts as text with two
 *   decimals (csv-stringify);
 * - XLSX: one sheet `Bordereau` with a frozen header row, typed cells (dates, counts, amounts as
 *   numbers shown with two decimals) and a totals row per currency (exceljs' streaming writer).
 *
 * Both files are streamed from one pass over the ledger (batches through a cursor), each into a
 * stream upload, the writer waiting for the uploads after each batch. Then the bordereau is recorded ready with both files' sizes and SHA-256, its row
 * count and totals. Safe to retry: a file already stored under its key is kept (a delivered file
 * is never rewritten) and a ready bordereau is never changed. Then `report.ready` goes to the
 * agency's webhook endpoints (once per bordereau: its event id is derived from the bordereau). Storage failures throw, so the
 * workflow retries until storage is back.
 */
import { once } from 'node:events';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { stringify } from 'csv-stringify';
import ExcelJS from 'exceljs';
import type { Db } from '../src/db/knex';
import type { EventEmitter } from '../src/events/emitter';
import type { ObjectStore } from '../src/storage/object-store';
import type { Payproc } from '../src/payproc/client';
import { reconcileMonth } from '../src/reports/reconciliation';
import { createReportsRepository, type BordereauFile, type BordereauFormat, type BordereauRecord } from '../src/reports/repository';
import {
  addToTotals,
  BORDEREAU_COLUMNS,
  bordereauCells,
  bordereauRow,
  monthRange,
  totalsCells,
  XLSX_FORMATS,
  type BordereauTotals,
} from '../src/reports/bordereau';

const CONTENT_TYPES: Record<BordereauFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** Where a bordereau's file of `format` lives in the bucket. */
export function bordereauStorageKey(
  b: { rootAccountId: number; partyRootAccountId: number; mode: string; month: string },
  format: BordereauFormat,
): string {
  return `reports/bordereaux/${b.rootAccountId}/${b.partyRootAccountId}/${b.mode}/${b.month}.${format}`;
}

export function createReportActivities(deps: {
  payproc: Payproc;
  db: Db;
  store: ObjectStore;
  events: Pick<EventEmitter, 'reportReady'>;
  /** Starts a bordereau's generation once (`bordereau-<id>`). */
  startBordereau: (bordereauId: number) => Promise<void>;
}) {
  const reports = createReportsRepository(deps.db);

  async function put(b: BordereauRecord, format: BordereauFormat, body: Readable): Promise<BordereauFile> {
    const key = bordereauStorageKey(b, format);
    const stored = await deps.store.putIfAbsent(key, body, { contentType: CONTENT_TYPES[format], onExisting: 'keep' });
    return { storageKey: key, sizeBytes: stored.size, sha256: stored.sha256 };
  }

  /**
   * Writes both files of `b` in one pass over the ledger (one cursor, one snapshot): each entry
   * goes to the CSV and to the XLSX sheet, the totals add up as they go, and after each batch the
   * writer waits for both uploads to take what they were given (memory stays flat however long the
   * month). Answers both files and the row count; throws (both uploads abandoned) when the ledger
   * or either upload fails.
   */
  async function writeFiles(
    b: BordereauRecord,
    range: { from: Date; to: Date },
    totals: BordereauTotals,
  ): Promise<{ csv: BordereauFile; xlsx: BordereauFile; rows: number }> {
    const csvOut = stringify({ record_delimiter: 'windows' });
    const xlsxOut = new PassThrough();
    const uploads = [put(b, 'csv', csvOut), put(b, 'xlsx', xlsxOut)] as const;
    // An upload that ends early (storage refused it) settles the wait for its drain with its error.
    const settled = Promise.all(uploads).then(() => {
      throw new Error(`bordereau ${b.id}: an upload ended before its file was written`);
    });
    settled.catch(() => undefined);
    const drained = async (out: Writable) => {
      if (out.writableNeedDrain) await Promise.race([once(out, 'drain'), settled]);
    };
    // exceljs' streaming sheet hands its XML to the zip's entry stream without waiting for it (its
    // write never reports a full buffer), so when compression is slower than the rows come the
    // sheet's XML would pile up there, up to the whole month's. Wait for that stream as for the
    // uploads. Reads exceljs 4.4's WorksheetWriter.stream (a StreamBuf with `pipes`, each a
    // readable-stream Writable): the version is pinned, and the bench's memory rows fail if it moves.
    const sheetDrained = async (sheet: ExcelJS.Worksheet) => {
      const pipes = (sheet as unknown as { stream?: { pipes?: Writable[] } }).stream?.pipes ?? [];
      for (const entry of pipes) {
        const state = (entry as unknown as { _writableState?: { needDrain?: boolean } })._writableState;
        if (state?.needDrain) await Promise.race([once(entry, 'drain'), settled]);
      }
    };
    let rows = 0;
    try {
      const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: xlsxOut, useStyles: true, useSharedStrings: false });
      // Fixed document dates (the month's end): the same month always writes the same workbook.
      workbook.creator = 'insurance-coi-service';
      workbook.created = workbook.modified = range.to;
      const sheet = workbook.addWorksheet('Bordereau', { views: [{ state: 'frozen', ySplit: 1 }] });
      // One style object per column, given to each of its cells: the workbook recognises a style
      // object it has seen, where a copy per cell is serialised and looked up cell by cell.
      const styles = BORDEREAU_COLUMNS.map((c) => (XLSX_FORMATS[c.name] ? { numFmt: XLSX_FORMATS[c.name] } : {}));
      sheet.columns = BORDEREAU_COLUMNS.map((c, k) => ({
        header: c.name,
        key: c.name,
        width: Math.max(12, c.name.length + 2),
        style: styles[k]!,
      }));
      sheet.getRow(1).font = { bold: true };
      sheet.getRow(1).commit();
      csvOut.write(BORDEREAU_COLUMNS.map((c) => c.name));
      for await (const batch of reports.ledger(b, range)) {
        for (const entry of batch) {
          addToTotals(totals, entry);
          rows += 1;
          const text = bordereauRow(b.month, entry);
          csvOut.write(text);
          const row = sheet.addRow(bordereauCells(b.month, entry, text));
          row.eachCell({ includeEmpty: true }, (cell, col) => (cell.style = styles[col - 1]!));
          row.commit();
        }
        await drained(csvOut);
        await sheetDrained(sheet);
        await drained(xlsxOut);
      }
      csvOut.end();
      for (const currency of Object.keys(totals).sort()) {
        const row = sheet.addRow(totalsCells(b.month, currency, totals[currency]!));
        row.font = { bold: true };
        row.commit();
      }
      sheet.commit();
      await workbook.commit();
    } catch (err) {
      csvOut.destroy(err as Error);
      xlsxOut.destroy(err as Error);
      await Promise.allSettled(uploads);
      throw err;
    }
    const [csv, xlsx] = await Promise.all(uploads);
    return { csv, xlsx, rows };
  }

  return {
    /**
     * The monthly run: a bordereau of `month` (YYYY-MM) for every agency, party and mode with a
     * transaction recorded in it, each created once and its generation started (again harmless).
     * Returns their ids.
     */
    /**
     * Reconciles `month` in `mode` with the processor (src/reports/reconciliation.ts) and keeps the
     * run (the worker's `reconciliation_differences` reads it); answers how many differences it found.
     */
    async reconcileMonth(input: { month: string; mode: 'live' | 'test' }): Promise<number> {
      return (await reconcileMonth({ reports, payproc: deps.payproc }, input)).differences.length;
    },

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
      const range = monthRange(b.month)!;
      const totals: BordereauTotals = {};
      const { csv, xlsx, rows } = await writeFiles(b, range, totals);
      await reports.markReady(b.id, { files: { csv, xlsx }, rowCount: rows, totals });
      await deps.events.reportReady((await reports.find(b.id))!);
      return { rows, sha256: { csv: csv.sha256, xlsx: xlsx.sha256 } };
    },
  };
}

export type ReportActivities = ReturnType<typeof createReportActivities>;
