/**
 * Activities of the premium bordereaux: `generateBordereau` writes one bordereau's files from its
 * month's ledger into the bucket under `reports/bordereaux/<agency>/<party>/<mode>/<YYYY-MM>.<format>`:
 *
 * - CSV: RFC 4180, CRLF line ends, a header row of `BORDEREAU_COLUMNS`, amounts as text with two
 *   decimals (csv-stringify);
 * - XLSX: one sheet `Bordereau` with a frozen header row, typed cells (dates, counts, amounts as
 *   numbers shown with two decimals) and a totals row per currency (exceljs' streaming writer).
 *
 * Each file is streamed: the ledger in batches through a cursor (one pass per file), the file into
 * a stream upload. Then the bordereau is recorded ready with both files' sizes and SHA-256, its row
 * count and totals. Safe to retry: a file already stored under its key is kept (a delivered file
 * is never rewritten) and a ready bordereau is never changed. Then `report.ready` goes to the
 * agency's webhook endpoints (once per bordereau: its event id is derived from the bordereau). Storage failures throw, so the
 * workflow retries until storage is back.
 */
import { PassThrough, Readable } from 'node:stream';
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

  async function writeCsv(
    b: BordereauRecord,
    range: { from: Date; to: Date },
    totals: BordereauTotals,
  ): Promise<{ file: BordereauFile; rows: number }> {
    let rows = 0;
    async function* records(): AsyncGenerator<string[]> {
      yield BORDEREAU_COLUMNS.map((c) => c.name);
      for await (const batch of reports.ledger(b, range)) {
        for (const entry of batch) {
          addToTotals(totals, entry);
          rows += 1;
          yield bordereauRow(b.month, entry);
        }
      }
    }
    const file = await put(b, 'csv', Readable.from(records()).pipe(stringify({ record_delimiter: 'windows' })));
    return { file, rows };
  }

  async function writeXlsx(b: BordereauRecord, range: { from: Date; to: Date }, totals: BordereauTotals): Promise<BordereauFile> {
    const out = new PassThrough();
    const upload = put(b, 'xlsx', out);
    try {
      const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: false });
      // Fixed document dates (the month's end): the same month always writes the same workbook.
      workbook.creator = 'insurance-coi-service';
      workbook.created = workbook.modified = range.to;
      const sheet = workbook.addWorksheet('Bordereau', { views: [{ state: 'frozen', ySplit: 1 }] });
      sheet.columns = BORDEREAU_COLUMNS.map((c) => ({
        header: c.name,
        key: c.name,
        width: Math.max(12, c.name.length + 2),
        style: XLSX_FORMATS[c.name] ? { numFmt: XLSX_FORMATS[c.name] } : {},
      }));
      sheet.getRow(1).font = { bold: true };
      sheet.getRow(1).commit();
      for await (const batch of reports.ledger(b, range)) {
        for (const entry of batch) sheet.addRow(bordereauCells(b.month, entry)).commit();
      }
      for (const currency of Object.keys(totals).sort()) {
        const row = sheet.addRow(totalsCells(b.month, currency, totals[currency]!));
        row.font = { bold: true };
        row.commit();
      }
      sheet.commit();
      await workbook.commit();
    } catch (err) {
      out.destroy(err as Error);
      await upload.catch(() => undefined);
      throw err;
    }
    return upload;
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
      const csv = await writeCsv(b, range, totals);
      const xlsx = await writeXlsx(b, range, totals);
      await reports.markReady(b.id, { files: { csv: csv.file, xlsx }, rowCount: csv.rows, totals });
      await deps.events.reportReady((await reports.find(b.id))!);
      return { rows: csv.rows, sha256: { csv: csv.file.sha256, xlsx: xlsx.sha256 } };
    },
  };
}

export type ReportActivities = ReturnType<typeof createReportActivities>;
