/**
 * Splits a multi-page PDF printed by Chromium into one PDF per page (pdf-lib), for printing
 * several certificates in one render (issue 6 throughput; docs/decisions.md).
 *
 * `splitPdfPages(pdf, pages)`: `pages[i]` names page i's document: its title and its date
 * (`YYYY-MM-DD`, stamped at midnight UTC as creation and modification date). The output bytes
 * depend only on the input PDF and `pages` (no clock), so a re-split of the same print stores
 * the same objects. Throws `PdfPageCountError` when the PDF does not have exactly one page per
 * entry (e.g. a certificate overflowed onto a second page); callers then print one at a time.
 *
 * Each PDF stays accessible (issue 50 item 6): Chromium prints a tagged PDF (a structure tree,
 * `/MarkInfo`, the document's `/Lang` from `<html lang>`), which pdf-lib's page copy leaves
 * behind. Each page takes along the part of the structure tree that marks its own content (an
 * element is kept when it or a descendant has content on the page, so nothing of another
 * certificate in the print comes along), its parent-tree entry, the language, `/Marked true`, and
 * `/DisplayDocTitle` so a reader shows the title rather than the file name.
 */
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFNumber, PDFObjectCopier, PDFRef, type PDFObject, type PDFPage } from 'pdf-lib';

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
    copyStructure(source, i, doc, page!);
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

/** The structure-tree element a ref or object is, or undefined. */
function elementOf(doc: PDFDocument, o: PDFObject | undefined): { ref: PDFRef | undefined; dict: PDFDict } | undefined {
  const dict = o instanceof PDFRef ? doc.context.lookup(o) : o;
  return dict instanceof PDFDict ? { ref: o instanceof PDFRef ? o : undefined, dict } : undefined;
}

/**
 * Copies the tagged structure of page `index` of `source` onto `page` (its copy, the only page of
 * `doc`): see the module comment. A source without a structure tree is left as it was.
 */
function copyStructure(source: PDFDocument, index: number, doc: PDFDocument, page: PDFPage): void {
  const catalog = source.catalog;
  const root = catalog.lookupMaybe(PDFName.of('StructTreeRoot'), PDFDict);
  const sourcePage = source.getPage(index).ref;
  const copier = PDFObjectCopier.for(source.context, doc.context);
  const lang = catalog.get(PDFName.of('Lang'));
  if (lang) doc.catalog.set(PDFName.of('Lang'), copier.copy(lang));
  doc.catalog.set(PDFName.of('ViewerPreferences'), doc.context.obj({ DisplayDocTitle: true }));
  if (!root) return;
  const K = PDFName.of('K');
  const Pg = PDFName.of('Pg');
  const P = PDFName.of('P');
  const onPage = (pg: PDFObject | undefined) => pg instanceof PDFRef && pg === sourcePage;
  /** Old element ref → its copy, for the parent tree. */
  const copied = new Map<PDFRef, PDFRef>();

  /** The copy of element `el` (inheriting page `pg`) with only this page's content, or undefined. */
  const prune = (el: { ref: PDFRef | undefined; dict: PDFDict }, inherited: PDFObject | undefined): PDFRef | undefined => {
    const pg = el.dict.get(Pg) ?? inherited;
    const kids: PDFObject[] = [];
    const newRef = doc.context.nextRef();
    const consider = (k: PDFObject) => {
      if (k instanceof PDFNumber) {
        if (onPage(pg)) kids.push(k); // a marked-content id on the element's page
        return;
      }
      const kid = elementOf(source, k);
      if (!kid) return;
      const type = kid.dict.get(PDFName.of('Type'));
      if (type === PDFName.of('MCR') || type === PDFName.of('OBJR')) {
        const kidPage = kid.dict.get(Pg) ?? pg;
        if (!onPage(kidPage)) return;
        const copy = PDFDict.withContext(doc.context);
        for (const [key, value] of kid.dict.entries()) if (key !== Pg) copy.set(key, copier.copy(value));
        copy.set(Pg, page.ref);
        kids.push(copy);
        return;
      }
      const child = prune(kid, pg);
      if (child) {
        (doc.context.lookup(child) as PDFDict).set(P, newRef);
        kids.push(child);
      }
    };
    const k = el.dict.get(K);
    const list = k instanceof PDFRef ? source.context.lookup(k) : k;
    if (list instanceof PDFArray) for (let j = 0; j < list.size(); j++) consider(list.get(j));
    else if (list !== undefined) consider(k!);
    if (kids.length === 0) return undefined;
    const copy = PDFDict.withContext(doc.context);
    for (const [key, value] of el.dict.entries()) {
      if (key === K || key === P || key === Pg || key === PDFName.of('ID')) continue;
      copy.set(key, copier.copy(value));
    }
    if (el.dict.get(Pg)) copy.set(Pg, page.ref);
    copy.set(K, kids.length === 1 ? kids[0]! : doc.context.obj(kids));
    doc.context.assign(newRef, copy);
    if (el.ref) copied.set(el.ref, newRef);
    return newRef;
  };

  const newRoot = doc.context.obj({ Type: 'StructTreeRoot' });
  const rootRef = doc.context.register(newRoot);
  const top = root.get(K);
  const topList = top instanceof PDFRef ? source.context.lookup(top) : top;
  const tops: PDFRef[] = [];
  const addTop = (o: PDFObject) => {
    const el = elementOf(source, o);
    const ref = el ? prune(el, undefined) : undefined;
    if (ref) {
      (doc.context.lookup(ref) as PDFDict).set(P, rootRef);
      tops.push(ref);
    }
  };
  if (topList instanceof PDFArray) for (let j = 0; j < topList.size(); j++) addTop(topList.get(j));
  else if (top) addTop(top);
  newRoot.set(K, tops.length === 1 ? tops[0]! : doc.context.obj(tops));

  // The page's parent-tree entry: its marked-content ids' elements, as copied.
  const key = page.node.get(PDFName.of('StructParents'));
  const nums = root.lookupMaybe(PDFName.of('ParentTree'), PDFDict)?.lookupMaybe(PDFName.of('Nums'), PDFArray);
  if (key instanceof PDFNumber && nums) {
    for (let j = 0; j + 1 < nums.size(); j += 2) {
      if ((nums.get(j) as PDFNumber).asNumber() !== key.asNumber()) continue;
      const entry = nums.lookup(j + 1);
      const mapped =
        entry instanceof PDFArray
          ? doc.context.obj(entry.asArray().map((e) => (e instanceof PDFRef ? (copied.get(e) ?? doc.context.obj(null)) : e)))
          : entry instanceof PDFRef
            ? (copied.get(entry) ?? doc.context.obj(null))
            : doc.context.obj(null);
      newRoot.set(PDFName.of('ParentTree'), doc.context.obj({ Nums: [key, doc.context.register(mapped)] }));
      newRoot.set(PDFName.of('ParentTreeNextKey'), PDFNumber.of(key.asNumber() + 1));
    }
  }
  doc.catalog.set(PDFName.of('StructTreeRoot'), rootRef);
  doc.catalog.set(PDFName.of('MarkInfo'), doc.context.obj({ Marked: true }));
}
