/**
 * A loss bordereau's two files (src/reports/loss-bordereau.ts), written beside its premium
 * bordereau's by the same writers (./bordereau-files.ts's CSV, ./bordereau-xlsx-thread.ts's XLSX)
 * with the loss sheet: `reports/bordereaux/<agency>/<party>/<mode>/<YYYY-MM>-loss.<format>` (a
 * provisional one: `<YYYY-MM>-provisional-<id>-loss`), the XLSX's sheet `Loss bordereau` with a
 * totals row per currency. A month's claims are few, so they are written in the activity's own
 * process in one batch. A file already stored under its key is kept (a retry rewrites nothing).
 */
import type { ObjectStore } from '../src/storage/object-store';
import type { BordereauFile, BordereauRecord } from '../src/reports/repository';
import {
  addToLossTotals,
  LOSS_BORDEREAU_COLUMNS,
  LOSS_XLSX_FORMATS,
  lossCells,
  lossRow,
  lossTotalsCells,
  type LossEntry,
  type LossTotals,
} from '../src/reports/loss-bordereau';
import { bordereauStorageKey, createCsvWriter, rowPerCurrency, type BordereauSheet } from './bordereau-files';
import { createXlsxWriter } from './bordereau-xlsx-thread';

/** The loss bordereau's file kind. */
export const LOSS_SHEET: BordereauSheet<LossTotals> = {
  sheetName: 'Loss bordereau',
  columns: LOSS_BORDEREAU_COLUMNS,
  formats: LOSS_XLSX_FORMATS,
  totalsRows: rowPerCurrency<LossTotals>(lossTotalsCells),
  storageKey: (b, format) => bordereauStorageKey(b, format).replace(new RegExp(`\\.${format}$`), `-loss.${format}`),
};

/** What a loss bordereau's writing answers: both files, the claim rows and the totals per currency. */
export interface WrittenLossBordereau {
  files: { csv: BordereauFile; xlsx: BordereauFile };
  rows: number;
  totals: LossTotals;
}

/** Writes `entries` (the claims of `b`'s month `range`) as the loss bordereau's CSV and XLSX. Throws when storage fails (nothing recorded). */
export async function writeLossBordereauFiles(
  store: ObjectStore,
  b: BordereauRecord,
  range: { from: Date; to: Date },
  entries: LossEntry[],
): Promise<WrittenLossBordereau> {
  const csv = createCsvWriter<LossTotals>(store, b, LOSS_SHEET);
  const xlsx = createXlsxWriter(store, b, range, LOSS_SHEET);
  const totals: LossTotals = {};
  for (const e of entries) addToLossTotals(totals, e, range);
  try {
    await Promise.all([csv.write(entries.map((e) => lossRow(b.month, e))), xlsx.write(entries.map((e) => lossCells(b.month, e)))]);
    const [csvFile, xlsxFile] = await Promise.all([csv.finish(totals), xlsx.finish(totals)]);
    return { files: { csv: csvFile, xlsx: xlsxFile }, rows: entries.length, totals };
  } catch (err) {
    await Promise.allSettled([csv.abort(err as Error), xlsx.abort(err as Error)]);
    throw err;
  }
}
