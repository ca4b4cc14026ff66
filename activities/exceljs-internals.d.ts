/**
 * Types of the two exceljs 4.4 modules the bordereau's XLSX writer reads (activities/bordereau-xlsx-thread.ts):
 * its XML text escape and Excel date serial, and its column letters. exceljs ships no types for them.
 */
declare module 'exceljs/lib/utils/utils' {
  const utils: {
    /** `text` with `&<>"'` as entities and the control characters XML cannot hold left out. */
    xmlEncode(text: string): string;
    /** Excel's date serial of `d` (days since 1899-12-30, UTC; `date1904`: the 1904 system). */
    dateToExcel(d: Date, date1904: boolean): number;
  };
  export default utils;
}

declare module 'exceljs/lib/utils/col-cache' {
  const colCache: {
    /** The column letters of column `n` (1: A). */
    n2l(n: number): string;
  };
  export default colCache;
}
