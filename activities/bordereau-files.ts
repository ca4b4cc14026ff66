/**
 * A premium bordereau's two files, written from its month's ledger into the bucket under
 * `reports/bordereaux/<agency>/<party>/<mode>/<YYYY-MM>.<format>`:
 *
 * - CSV: RFC 4180, CRLF line ends, a header row of `BORDEREAU_COLUMNS`, amounts as text with two
 *   decimals (csv-stringify);
 * - XLSX: one sheet `Bordereau` with a frozen header row, typed cells (dates, counts, amounts as
 *   numbers shown with two decimals) and a totals row per currency (exceljs' streaming writer).
 *
 * Run in a thread of its own by the `generateBordereau` activity (./bordereau-thread.ts).
 */
import { once } from 'node:events';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { stringify } from 'csv-stringify';
import ExcelJS from 'exceljs';
import type { ObjectStore } from '../src/storage/object-store';
import type { BordereauFile, BordereauFormat, BordereauRecord, ReportsRepository } from '../src/reports/repository';
import {
  addToTotals,
  BORDEREAU_COLUMNS,
  bordereauCells,
  bordereauRow,
  totalsCells,
  XLSX_FORMATS,
  type BordereauTotals,
} from '../src/reports/bordereau';

const CONTENT_TYPES: Record<BordereauFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** Ledger rows read per cursor fetch (the next fetched while one is written). */
const LEDGER_BATCH_ROWS = 1000;

/** Where a bordereau's file of `format` lives in the bucket. */
export function bordereauStorageKey(
  b: { rootAccountId: number; partyRootAccountId: number; mode: string; month: string },
  format: BordereauFormat,
): string {
  return `reports/bordereaux/${b.rootAccountId}/${b.partyRootAccountId}/${b.mode}/${b.month}.${format}`;
}

async function put(store: ObjectStore, b: BordereauRecord, format: BordereauFormat, body: Readable): Promise<BordereauFile> {
  const key = bordereauStorageKey(b, format);
  const stored = await store.putIfAbsent(key, body, { contentType: CONTENT_TYPES[format], onExisting: 'keep' });
  return { storageKey: key, sizeBytes: stored.size, sha256: stored.sha256 };
}

/** What writing a bordereau's files answers: both files, the row count and the totals per currency (minor units). */
export interface WrittenBordereau {
  csv: BordereauFile;
  xlsx: BordereauFile;
  rows: number;
  totals: BordereauTotals;
}

/**
 * Writes both files of `b` (month `range`) in one pass over the ledger (one cursor, one
 * snapshot): each entry goes to the CSV and to the XLSX sheet, the totals add up as they go, and
 * after each batch the writer waits for both uploads to take what they were given (memory stays
 * flat however long the month). Throws (both uploads abandoned) when the ledger or either upload
 * fails; a file already stored under its key is kept.
 */
export async function writeBordereauFiles(
  deps: { reports: Pick<ReportsRepository, 'ledger'>; store: ObjectStore },
  b: BordereauRecord,
  range: { from: Date; to: Date },
): Promise<WrittenBordereau> {
  const { reports } = deps;
  const totals: BordereauTotals = {};
  const csvOut = stringify({ record_delimiter: 'windows' });
  const xlsxOut = new PassThrough();
  const uploads = [put(deps.store, b, 'csv', csvOut), put(deps.store, b, 'xlsx', xlsxOut)] as const;
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
    for await (const batch of reports.ledger(b, range, LEDGER_BATCH_ROWS)) {
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
  return { csv, xlsx, rows, totals };
}
