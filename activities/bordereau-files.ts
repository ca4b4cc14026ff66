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
import { addToTotals, BORDEREAU_COLUMNS, bordereauCells, bordereauRow, type BordereauTotals, type Cell } from '../src/reports/bordereau';

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

/** One file of a bordereau being written: the ledger's batches in order (`R`: a row as that file takes it), then the totals. */
export interface BordereauFileWriter<R> {
  /** Writes one batch; resolves once its upload has taken it in (memory stays flat). Rejects when the upload failed. */
  write(rows: R[]): Promise<void>;
  /** Ends the file (the XLSX with a totals row per currency) and answers it once stored. */
  finish(totals: BordereauTotals): Promise<BordereauFile>;
  /** Abandons the file: its upload ends in `err`, nothing is stored. */
  abort(err: Error): Promise<void>;
}

/**
 * An upload of `body` into `b`'s file of `format` (`upload`: the stored file), `ended`: rejects
 * once the upload has ended, and `drained(out)`: a wait for `out` to take in what it was given,
 * settled by the upload's failure too.
 */
export function streamedUpload(store: ObjectStore, b: BordereauRecord, format: BordereauFormat, body: Readable) {
  const upload = put(store, b, format, body);
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
 * The CSV file of `b` (RFC 4180, CRLF, a header row, amounts as text) streamed into its upload,
 * one chunk per batch (a chunk per row made the upload's socket writes most of the CSV's cost).
 */
export function createCsvWriter(store: ObjectStore, b: BordereauRecord): BordereauFileWriter<string[]> {
  const out = new PassThrough();
  const { upload, drained } = streamedUpload(store, b, 'csv', out);
  out.write(csvRecords([BORDEREAU_COLUMNS.map((c) => c.name)]));
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
