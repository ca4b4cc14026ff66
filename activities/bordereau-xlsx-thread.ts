/**
 * The XLSX thread of a bordereau (started by ./bordereau-thread.ts with a `ThreadInput`): the
 * workbook written with exceljs' streaming writer into an upload of its own, batch by batch as
 * the ledger thread hands them over the port, each message answered (`FromXlsx`) in order.
 * Loads no knex or pg.
 */
import { once } from 'node:events';
import { PassThrough, type Writable } from 'node:stream';
import { isMainThread, workerData } from 'node:worker_threads';
import ExcelJS from 'exceljs';
// exceljs' own XML text escape, Excel date serial and column letters, so the rows written here
// carry exactly what its row writer would (pinned 4.4.0; test/unit/bordereau-xlsx-rows.test.ts).
import excelUtils from 'exceljs/lib/utils/utils';
import colCache from 'exceljs/lib/utils/col-cache';
import { createObjectStore, type ObjectStore } from '../src/storage/object-store';
import { countStorageErrors, type StorageOperation } from '../src/storage/error-counting';
import { BORDEREAU_COLUMNS, type BordereauTotals, type Cell } from '../src/reports/bordereau';
import type { BordereauRecord } from '../src/reports/repository';
import { PREMIUM_SHEET, streamedUpload, type BordereauFileWriter, type BordereauSheet } from './bordereau-files';
import { errorOf, type ThreadInput, type ToXlsx, type XlsxReply } from './bordereau-thread';

/**
 * The sheet XML of `rows` (typed cells, `BORDEREAU_COLUMNS` order) from sheet row `firstRow` on,
 * byte for byte what exceljs 4.4's streaming writer renders for them when each cell of column `k`
 * carries the style whose id is `styleIds[k]` (0: none): a text cell `t="str"` with its text
 * escaped as exceljs does, a number or an instant (as Excel's date serial) as its value, an empty
 * cell only when it has a style. exceljs builds a cell object, a style lookup and an XML node list
 * per cell; at 20 cells a row this string is a small part of that cost (the XLSX pass dominated a
 * month's bordereau).
 */
export function sheetRowsXml(rows: readonly Cell[][], firstRow: number, styleIds: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < rows.length; i++) {
    const cells = rows[i]!;
    const r = firstRow + i;
    parts.push(`<row r="${r}"${cells.length ? ` spans="1:${cells.length}"` : ''} x14ac:dyDescent="0.25">`);
    for (let k = 0; k < cells.length; k++) {
      const v = cells[k];
      const at = `<c r="${COLUMN_LETTERS[k] ?? colCache.n2l(k + 1)}${r}"${styleIds[k] ? ` s="${styleIds[k]}"` : ''}`;
      if (v === null || v === undefined) {
        if (styleIds[k]) parts.push(`${at}/>`);
      } else if (typeof v === 'string') parts.push(`${at} t="str"><v>${excelUtils.xmlEncode(v)}</v></c>`);
      else if (typeof v === 'number') parts.push(`${at}><v>${v}</v></c>`);
      else parts.push(`${at}><v>${excelUtils.dateToExcel(v, false)}</v></c>`);
    }
    parts.push('</row>');
  }
  return parts.join('');
}
const COLUMN_LETTERS = BORDEREAU_COLUMNS.map((_, k) => colCache.n2l(k + 1) as string);

/**
 * The XLSX file of `b` (month `range`) as `sheet` says (default the premium bordereau's: one sheet
 * `Bordereau`): frozen header, typed cells, its totals rows, exceljs' streaming writer into its
 * upload; the data rows' XML from `sheetRowsXml`, a batch at a time, into the writer's sheet.
 */
export function createXlsxWriter<T = BordereauTotals>(
  store: ObjectStore,
  b: BordereauRecord,
  range: { from: Date; to: Date },
  sheetOf: BordereauSheet<T> = PREMIUM_SHEET as unknown as BordereauSheet<T>,
): BordereauFileWriter<Cell[], T> {
  const out = new PassThrough();
  const { upload, ended, drained } = streamedUpload(store, b, 'xlsx', out, sheetOf.storageKey(b, 'xlsx'));
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: false });
  // Fixed document dates (the month's end): the same month always writes the same workbook.
  workbook.creator = 'insurance-coi-service';
  workbook.created = workbook.modified = range.to;
  const sheet = workbook.addWorksheet(sheetOf.sheetName, { views: [{ state: 'frozen', ySplit: 1 }] });
  // One style object per column, given to each of its cells: the workbook recognises a style
  // object it has seen, where a copy per cell is serialised and looked up cell by cell.
  const styles = sheetOf.columns.map((c) => (sheetOf.formats[c.name] ? { numFmt: sheetOf.formats[c.name] } : {}));
  sheet.columns = sheetOf.columns.map((c, k) => ({
    header: c.name,
    key: c.name,
    width: Math.max(12, c.name.length + 2),
    style: styles[k]!,
  }));
  sheet.getRow(1).font = { bold: true };
  sheet.getRow(1).commit();
  // Reads exceljs 4.4's WorksheetWriter: its sheet stream (open once the header is committed), the
  // number of its next row, and the workbook's style ids (the id each column's cells get).
  const internals = sheet as unknown as { stream: { write(xml: string): void }; _rowZero: number };
  const workbookStyles = (workbook as unknown as { styles: { addStyleModel(style: object, cellType: number): number } }).styles;
  const styleIds = styles.map((style) => workbookStyles.addStyleModel(style, ExcelJS.ValueType.Number));
  // exceljs' streaming sheet hands its XML to the zip's entry stream without waiting for it (its
  // write never reports a full buffer), so when compression is slower than the rows come the
  // sheet's XML would pile up there, up to the whole month's. Wait for that stream as for the
  // upload. Reads exceljs 4.4's WorksheetWriter.stream (a StreamBuf with `pipes`, each a
  // readable-stream Writable): the version is pinned, and the bench's memory rows fail if it moves.
  const sheetDrained = async () => {
    const pipes = (sheet as unknown as { stream?: { pipes?: Writable[] } }).stream?.pipes ?? [];
    for (const entry of pipes) {
      const state = (entry as unknown as { _writableState?: { needDrain?: boolean } })._writableState;
      if (state?.needDrain) await Promise.race([once(entry, 'drain'), ended]);
    }
  };
  return {
    async write(rows) {
      // Rendered here instead of by sheet.addRow per row (what exceljs would write, see
      // sheetRowsXml), into the sheet's stream after the committed header; the sheet's next row
      // number moves past them so its own rows (the totals) follow on.
      internals.stream.write(sheetRowsXml(rows, internals._rowZero, styleIds));
      internals._rowZero += rows.length;
      await sheetDrained();
      await drained(out);
    },
    async finish(totals) {
      for (const cells of sheetOf.totalsRows(b.month, totals)) {
        const row = sheet.addRow(cells);
        row.font = { bold: true };
        row.commit();
      }
      sheet.commit();
      await workbook.commit();
      return upload;
    },
    async abort(err) {
      out.destroy(err);
      await upload.catch(() => undefined);
    },
  };
}

/** The XLSX thread: the workbook into its own upload, batch by batch as the ledger thread hands them over. */
function xlsxThread(input: ThreadInput): void {
  const storageFailures: StorageOperation[] = [];
  const store = countStorageErrors(createObjectStore(input.config), (operation) => storageFailures.push(operation));
  const writer = createXlsxWriter(store, input.bordereau, input.range);
  const reply = (m: XlsxReply) => input.port.postMessage({ ...m, storageFailures: storageFailures.splice(0) });
  // One message at a time, in order: a batch is written (and its upload has taken it) before the next.
  let previous: Promise<unknown> = Promise.resolve();
  input.port.on('message', (m: ToXlsx) => {
    const handle = async (): Promise<XlsxReply> => {
      if (m.kind === 'batch') await writer.write(m.rows);
      else if (m.kind === 'finish') return { kind: 'finished', file: await writer.finish(m.totals) };
      else await writer.abort(new Error(m.message));
      return { kind: m.kind === 'batch' ? 'written' : 'aborted' };
    };
    previous = previous.then(handle).then(reply, (err: unknown) => reply({ kind: 'failed', ...errorOf(err) }));
  });
  // The thread ends when the ledger thread closes the channel (nothing else keeps it alive).
  input.port.on('close', () => input.port.unref());
}

if (!isMainThread && (workerData as Partial<ThreadInput> | null)?.bordereauThread === 'xlsx') xlsxThread(workerData as ThreadInput);
