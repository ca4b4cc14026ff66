/**
 * The bordereau's workbook with its data rows rendered by `sheetRowsXml` (the XLSX writer of
 * activities/bordereau-xlsx-thread.ts) is the workbook exceljs writes when each row goes through
 * its own `addRow` (the writer before, kept here as the reference): every file of the two
 * archives byte for byte equal, for any rows of the bordereau's cell kinds (text with markup,
 * quotes, control and non-Latin characters, empty text, amounts, counts, instants, empty cells)
 * and any number of batches and totals rows. The upload is a store that keeps the bytes (the
 * storage is not what is tested here).
 */
import { PassThrough, type Readable } from 'node:stream';
import fc from 'fast-check';
import ExcelJS from 'exceljs';
import { createXlsxWriter } from '../../activities/bordereau-xlsx-thread';
import { BORDEREAU_COLUMNS, totalsCells, XLSX_FORMATS, type BordereauTotals, type Cell } from '../../src/reports/bordereau';
import type { BordereauRecord } from '../../src/reports/repository';
import type { ObjectStore } from '../../src/storage/object-store';
import { readZip } from '../helpers/documents';

const RANGE = { from: new Date('2026-10-01T00:00:00Z'), to: new Date('2026-11-01T00:00:00Z') };
const RECORD = { id: 1, rootAccountId: 2, partyRootAccountId: 3, month: '2026-10', mode: 'live' } as BordereauRecord;

const collect = async (body: Readable) => {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks);
};

/** A store whose one upload is kept in `bytes`. */
function keepingStore(): { store: ObjectStore; bytes: () => Buffer } {
  let kept: Buffer | undefined;
  const store = {
    async putIfAbsent(key: string, body: Readable) {
      kept = await collect(body);
      return { key, created: true, size: kept.length, sha256: '' };
    },
  } as unknown as ObjectStore;
  return { store, bytes: () => kept! };
}

/** The writer before `sheetRowsXml`: every row through exceljs' addRow, each cell given its column's style object. */
async function referenceWorkbook(batches: Cell[][][], totals: BordereauTotals): Promise<Buffer> {
  const out = new PassThrough();
  const bytes = collect(out);
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: false });
  workbook.creator = 'insurance-coi-service';
  workbook.created = workbook.modified = RANGE.to;
  const sheet = workbook.addWorksheet('Bordereau', { views: [{ state: 'frozen', ySplit: 1 }] });
  const styles = BORDEREAU_COLUMNS.map((c) => (XLSX_FORMATS[c.name] ? { numFmt: XLSX_FORMATS[c.name] } : {}));
  sheet.columns = BORDEREAU_COLUMNS.map((c, k) => ({
    header: c.name,
    key: c.name,
    width: Math.max(12, c.name.length + 2),
    style: styles[k]!,
  }));
  sheet.getRow(1).font = { bold: true };
  sheet.getRow(1).commit();
  for (const rows of batches)
    for (const cells of rows) {
      const row = sheet.addRow(cells);
      row.eachCell({ includeEmpty: true }, (cell, col) => (cell.style = styles[col - 1]!));
      row.commit();
    }
  for (const currency of Object.keys(totals).sort()) {
    const row = sheet.addRow(totalsCells(RECORD.month, currency, totals[currency]!));
    row.font = { bold: true };
    row.commit();
  }
  sheet.commit();
  await workbook.commit();
  return bytes;
}

async function writtenWorkbook(batches: Cell[][][], totals: BordereauTotals): Promise<Buffer> {
  const { store, bytes } = keepingStore();
  const writer = createXlsxWriter(store, RECORD, RANGE);
  for (const rows of batches) await writer.write(rows);
  await writer.finish(totals);
  return bytes();
}

const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({
    unit: fc.constantFrom('a', 'Z', '<', '>', '&', '"', "'", ',', '\n', '\r', '\t', '\u0001', '\u007f', 'é', '日', '😀', ' '),
    maxLength: 10,
  }),
);
const amount = fc.integer({ min: -1_000_000_00, max: 1_000_000_00 }).map((minor) => minor / 100);
const instant = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) }).map((ms) => new Date(ms));
/** A cell of what each column holds in a bordereau row (bordereauCells), empty where a column may be empty. */
const cellOf = (name: string): fc.Arbitrary<Cell> => {
  const format = XLSX_FORMATS[name];
  if (name === 'covered_units') return fc.integer({ min: 0, max: 400 });
  if (format === '0.00') return fc.option(amount, { nil: null });
  if (format) return fc.option(instant, { nil: null });
  return text;
};
const row = fc.tuple(...BORDEREAU_COLUMNS.map((c) => cellOf(c.name))) as fc.Arbitrary<Cell[]>;
const totalsArb = fc.dictionary(
  fc.constantFrom('USD', 'EUR', 'GBP'),
  fc.record({
    rows: fc.nat(1000),
    gross_premium: fc.integer({ min: -10_000_000, max: 10_000_000 }),
    platform_fee: fc.nat(100_000),
    tax: fc.nat(100_000),
    commission: fc.integer({ min: -1_000_000, max: 1_000_000 }),
    net_premium: fc.integer({ min: -10_000_000, max: 10_000_000 }),
  }),
  { maxKeys: 3 },
);

test('when any rows are written a batch at a time, then every file of the workbook is byte for byte the one exceljs writes row by row', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.array(row, { minLength: 1, maxLength: 4 }), { maxLength: 3 }), totalsArb, async (batches, totals) => {
      const [mine, reference] = await Promise.all([writtenWorkbook(batches, totals), referenceWorkbook(batches, totals)]);
      const [a, b] = await Promise.all([readZip(mine), readZip(reference)]);
      expect([...a.keys()]).toEqual([...b.keys()]);
      for (const [name, bytes] of b) expect({ name, xml: a.get(name)!.toString('utf8') }).toEqual({ name, xml: bytes.toString('utf8') });
    }),
    { numRuns: 60 },
  );
}, 120_000);
