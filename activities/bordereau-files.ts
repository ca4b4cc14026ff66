/**
 * A premium bordereau's two files, written from its month's ledger into the bucket under
 * `reports/bordereaux/<agency>/<party>/<mode>/<YYYY-MM>.<format>` (a provisional one:
 * `<YYYY-MM>-provisional-<id>.<format>`):
 *
 * - CSV: RFC 4180, CRLF line ends, a header row of `BORDEREAU_COLUMNS`, amounts as text with two
 *   decimals (`csvRecords`, a batch at a time);
 * - XLSX: one sheet `Bordereau` with a frozen header row, typed cells (dates, counts, amounts as
 *   numbers shown with two decimals) and a totals row per currency (exceljs' streaming writer,
 *   in ./bordereau-xlsx-thread.ts, so the ledger's thread never loads exceljs).
 *
 * Run in the threads of the `generateBordereau` activity (./bordereau-thread.ts).
 */
import { once } from 'node:events';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import type { ObjectStore } from '../src/storage/object-store';
import type { BordereauFile, BordereauFormat, BordereauRecord, ReportsRepository } from '../src/reports/repository';
import {
  addToTotals,
  BORDEREAU_COLUMNS,
  bordereauCells,
  bordereauRow,
  totalsCells,
  XLSX_FORMATS,
  type BordereauColumn,
  type BordereauTotals,
  type Cell,
} from '../src/reports/bordereau';

const CONTENT_TYPES: Record<BordereauFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** Ledger rows read per cursor fetch (the next fetched while one is written). */
const LEDGER_BATCH_ROWS = 1000;

/**
 * Where a bordereau's file of `format` lives in the bucket: a final one under its month, a
 * provisional one (month to date) under its month and its own id, so the two never share a file.
 */
export function bordereauStorageKey(
  b: { id?: number; rootAccountId: number; partyRootAccountId: number; mode: string; month: string; provisional?: boolean },
  format: BordereauFormat,
): string {
  const name = b.provisional ? `${b.month}-provisional-${b.id}` : b.month;
  return `reports/bordereaux/${b.rootAccountId}/${b.partyRootAccountId}/${b.mode}/${name}.${format}`;
}

/**
 * What one kind of bordereau file holds (the premium bordereau's, the loss bordereau's): its
 * columns, how the XLSX shows them (`formats`: Excel number formats by column) and names its sheet,
 * the totals rows it ends with (`T`: its totals per currency), and where its files are stored.
 */
export interface BordereauSheet<T> {
  sheetName: string;
  columns: readonly BordereauColumn[];
  formats: Partial<Record<string, string>>;
  totalsRows: (month: string, totals: T) => Cell[][];
  storageKey: (b: BordereauRecord, format: BordereauFormat) => string;
}

/** Totals rows one per currency, in currency order, each made by `cells` from that currency's totals. */
export function rowPerCurrency<T extends Record<string, unknown>>(
  cells: (month: string, currency: string, t: T[string]) => Cell[],
): BordereauSheet<T>['totalsRows'] {
  return (month, totals) =>
    Object.keys(totals)
      .sort()
      .map((currency) => cells(month, currency, totals[currency] as T[string]));
}

/** The premium bordereau's file: `BORDEREAU_COLUMNS`, a totals row per currency, under `bordereauStorageKey`. */
export const PREMIUM_SHEET: BordereauSheet<BordereauTotals> = {
  sheetName: 'Bordereau',
  columns: BORDEREAU_COLUMNS,
  formats: XLSX_FORMATS,
  totalsRows: rowPerCurrency<BordereauTotals>(totalsCells),
  storageKey: bordereauStorageKey,
};

async function put(store: ObjectStore, key: string, format: BordereauFormat, body: Readable): Promise<BordereauFile> {
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

/** One file of a bordereau being written: the ledger's batches in order (`R`: a row as that file takes it), then the totals. */
export interface BordereauFileWriter<R, T = BordereauTotals> {
  /** Writes one batch; resolves once its upload has taken it in (memory stays flat). Rejects when the upload failed. */
  write(rows: R[]): Promise<void>;
  /** Ends the file (the XLSX with its totals rows) and answers it once stored. */
  finish(totals: T): Promise<BordereauFile>;
  /** Abandons the file: its upload ends in `err`, nothing is stored. */
  abort(err: Error): Promise<void>;
}

/**
 * An upload of `body` into `b`'s file of `format` under `key` (default: the premium bordereau's)
 * (`upload`: the stored file), `ended`: rejects once the upload has ended, and `drained(out)`: a
 * wait for `out` to take in what it was given, settled by the upload's failure too.
 */
export function streamedUpload(
  store: ObjectStore,
  b: BordereauRecord,
  format: BordereauFormat,
  body: Readable,
  key = bordereauStorageKey(b, format),
) {
  const upload = put(store, key, format, body);
  // An upload that ends early (storage refused it) settles the waits for drains with its error.
  const ended = upload.then(() => {
    throw new Error(`bordereau ${b.id}: the ${format} upload ended before its file was written`);
  });
  ended.catch(() => undefined);
  const drained = async (out: Writable) => {
    if (out.writableNeedDrain) await Promise.race([once(out, 'drain'), ended]);
  };
  return { upload, ended, drained };
}

/** A field as RFC 4180 writes it: in double quotes, its quotes doubled, when it holds a quote, a comma, CR or LF. */
const csvField = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);

/**
 * `records` as CSV text (RFC 4180: a field quoted only when it holds a quote, a comma, CR or LF,
 * each record ended by CRLF): csv-stringify's text with `record_delimiter: 'windows'`, except that
 * a field with a lone CR or LF is quoted too (csv-stringify left it bare, which no reader splits
 * back); test/unit/bordereau-csv.test.ts checks both. csv-stringify's general machinery (a cast
 * and an options merge per field) was the ledger thread's largest cost.
 */
export function csvRecords(records: readonly (readonly string[])[]): string {
  let text = '';
  for (const record of records) text += `${record.map(csvField).join(',')}\r\n`;
  return text;
}

/**
 * The CSV file of `b` (RFC 4180, CRLF, a header row of `sheet`'s columns, amounts as text) streamed into its upload,
 * one chunk per batch (a chunk per row made the upload's socket writes most of the CSV's cost).
 */
export function createCsvWriter<T = BordereauTotals>(
  store: ObjectStore,
  b: BordereauRecord,
  sheet: Pick<BordereauSheet<T>, 'columns' | 'storageKey'> = PREMIUM_SHEET as unknown as BordereauSheet<T>,
): BordereauFileWriter<string[], T> {
  const out = new PassThrough();
  const { upload, drained } = streamedUpload(store, b, 'csv', out, sheet.storageKey(b, 'csv'));
  out.write(csvRecords([sheet.columns.map((c) => c.name)]));
  return {
    async write(rows) {
      out.write(csvRecords(rows));
      await drained(out);
    },
    async finish() {
      out.end();
      return upload;
    },
    async abort(err) {
      out.destroy(err);
      await upload.catch(() => undefined);
    },
  };
}

/** XLSX batches handed over and not yet written: two, so the XLSX writer always has the next one. */
const XLSX_BATCHES_IN_HAND = 2;

/**
 * Writes both files of `b` (month `range`) in one pass over the ledger (one cursor, one
 * snapshot): each batch's rows go to the CSV and its typed cells to the XLSX writer (`xlsx`:
 * ./bordereau-ledger-thread.ts gives the XLSX thread's, over createXlsxWriter), which may
 * hold two batches not yet written while the CSV writes and the next is read; the totals add up
 * as they go. Throws (both uploads abandoned) when the ledger or either file fails; a file
 * already stored under its key is kept.
 */
export async function writeBordereauFiles(
  deps: { reports: Pick<ReportsRepository, 'ledger'>; store: ObjectStore },
  b: BordereauRecord,
  range: { from: Date; to: Date },
  xlsx: BordereauFileWriter<Cell[]>,
): Promise<WrittenBordereau> {
  const csv = createCsvWriter(deps.store, b);
  const totals: BordereauTotals = {};
  let rows = 0;
  const inHand: Array<Promise<void>> = [];
  try {
    for await (const batch of deps.reports.ledger(b, range, LEDGER_BATCH_ROWS)) {
      const texts = batch.map((entry) => bordereauRow(b.month, entry));
      for (const entry of batch) addToTotals(totals, entry);
      rows += batch.length;
      if (inHand.length >= XLSX_BATCHES_IN_HAND) await inHand.shift();
      const written = xlsx.write(batch.map((entry, k) => bordereauCells(b.month, entry, texts[k])));
      written.catch(() => undefined);
      inHand.push(written);
      await csv.write(texts);
    }
    await Promise.all(inHand);
    const [csvFile, xlsxFile] = await Promise.all([csv.finish(totals), xlsx.finish(totals)]);
    return { csv: csvFile, xlsx: xlsxFile, rows, totals };
  } catch (err) {
    await Promise.allSettled([csv.abort(err as Error), xlsx.abort(err as Error)]);
    throw err;
  }
}
