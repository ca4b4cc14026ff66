/**
 * Splits a multi-page PDF printed by Chromium into one PDF per page (pdf-lib), for printing
 * several certificates in one render (issue 6 throughput; docs/decisions.md).
 *
 * `splitPdfPages(pdf, pages)`: `pages[i]` names page i's document: its title and its date
 * (`YYYY-MM-DD`, stamped at midnight UTC as creation and modification date). The output bytes
 * depend only on the input PDF and `pages` (no clock), so a re-split of the same print stores
 * the same objects. Throws `PdfPageCountError` when the PDF does not have exactly one page per
 * entry (e.g. a certificate overflowed onto a second page); callers then print one at a time.
 */
import { PDFDocument } from 'pdf-lib';

export class PdfPageCountError extends Error {
  override name = 'PdfPageCountError';
  constructor(
    readonly expected: number,
    readonly actual: number,
  ) {
    super(`expected ${expected} pages, the PDF has ${actual}`);
  }
}

export async function splitPdfPages(pdf: Uint8Array, pages: ReadonlyArray<{ title: string; date: string }>): Promise<Buffer[]> {
  const source = await PDFDocument.load(pdf, { updateMetadata: false });
  if (source.getPageCount() !== pages.length) throw new PdfPageCountError(pages.length, source.getPageCount());
  const out: Buffer[] = [];
  for (const [i, meta] of pages.entries()) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(meta.date)) throw new RangeError(`date must be YYYY-MM-DD, got ${JSON.stringify(meta.date)}`);
    const doc = await PDFDocument.create({ updateMetadata: false });
    const [page] = await doc.copyPages(source, [i]);
    doc.addPage(page!);
    const at = new Date(`${meta.date}T00:00:00Z`);
    doc.setTitle(meta.title);
    doc.setCreator('Chromium');
    doc.setProducer('insurance-coi-service (pdf-lib)');
    doc.setCreationDate(at);
    doc.setModificationDate(at);
    out.push(Buffer.from(await doc.save({ useObjectStreams: false })));
  }
  return out;
}
