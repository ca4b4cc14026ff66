/**
 * The certificate printer (src/pdf/certificate-printer.ts): which jobs share a Chromium print and
 * which page of a print goes back to which job, over a fake page pool that prints real PDFs with
 * pdf-lib (one page per certificate section, the page's width standing for its certificate), so
 * the split is the real one. test/integration/certificates.test.ts prints for real.
 */
import { PDFDocument } from 'pdf-lib';
import { createCertificatePrinter, type CertificatePrinterOptions } from '../../src/pdf/certificate-printer';
import { certificatePage, type CertificateData, type CertificatePage } from '../../src/pdf/certificate-template';
import { CertificateTemplateError } from '../../src/pdf/certificate-format';

function data(n: number, testMode = false): CertificateData {
  return {
    certificateNumber: `COI-1-1-${n}-abcdef0123`,
    issueDate: '2026-03-01',
    testMode,
    producer: { name: 'Acme Agency LLC' },
    namedInsured: { name: `Insured ${n}` },
    insurers: [{ name: 'First Mutual' }],
    masterPolicyNumber: 'MP-1',
    productName: 'Daily Event Liability',
    coverage: { startsAtLocal: '2026-03-07T00:00', endsAtLocal: '2026-03-08T00:00', timeZone: 'America/New_York' },
    limits: [{ label: 'Each occurrence', amount_minor: 100_000_000, currency: 'USD' }],
    deductible: { amount_minor: 50_000, currency: 'USD' },
    claimsPhone: '+1 800 555 0100',
    certificateHolder: { name: 'Hall', address: '1 Hall Ave' },
    verificationUrl: `http://127.0.0.1:3000/verify/${n}`,
  };
}

async function job(account: number, numbers: number[], testMode = false) {
  const pages: CertificatePage[] = await Promise.all(numbers.map((n) => certificatePage(data(n, testMode))));
  return { account, pages, meta: numbers.map((n) => ({ title: `Certificate ${n}`, date: '2026-03-01' })) };
}

/** The certificate number's unit (`COI-1-1-<n>-…`) of every certificate in a printed document, in order. */
function unitsIn(html: string): number[] {
  return [...html.matchAll(/id="certificate-number">COI-1-1-(\d+)-/g)].map((m) => Number(m[1]));
}

/**
 * A page pool whose prints are PDFs of one page per certificate, `100 + n` points wide for unit n
 * (`extraPageFor` adds a second page after that unit's, as an overflowing certificate would).
 * `gate` holds every print until the test opens it.
 */
function fakePool(opts: { extraPageFor?: number; fail?: Error } = {}) {
  const prints: number[][] = [];
  let gate: Promise<void> = Promise.resolve();
  let open: () => void = () => undefined;
  return {
    prints,
    hold() {
      gate = new Promise((r) => (open = r));
    },
    release: () => open(),
    pool: {
      async render(html: string): Promise<Buffer> {
        const units = unitsIn(html);
        prints.push(units);
        await gate;
        if (opts.fail) throw opts.fail;
        const doc = await PDFDocument.create();
        for (const n of units) {
          doc.addPage([100 + n, 200]);
          if (n === opts.extraPageFor) doc.addPage([999, 200]);
        }
        return Buffer.from(await doc.save());
      },
    },
  };
}

async function widths(pdfs: Buffer[]): Promise<number[]> {
  return Promise.all(
    pdfs.map(async (pdf) => {
      const doc = await PDFDocument.load(pdf);
      expect(doc.getPageCount()).toBe(1);
      return Math.round(doc.getPage(0).getWidth()) - 100;
    }),
  );
}

function printer(pool: ReturnType<typeof fakePool>, overrides: Partial<CertificatePrinterOptions> = {}) {
  return createCertificatePrinter({
    pool: pool.pool,
    format: 'Letter',
    maxPagesPerPrint: 10,
    printsAtOnce: 1,
    batchWaitMs: 50,
    ...overrides,
  });
}

describe('certificate printer', () => {
  it('prints jobs of one account that arrive within the wait in one print and gives each job its own pages', async () => {
    const pool = fakePool();
    const printed: Array<{ pages: number; jobs: number }> = [];
    const p = printer(pool, { onPrint: (x) => printed.push(x) });
    const jobs = [await job(7, [1, 2]), await job(7, [3])];
    const [a, b] = (await Promise.all(jobs.map((j) => p.print(j)))) as [Buffer[], Buffer[]];
    expect(pool.prints).toEqual([[1, 2, 3]]);
    expect(printed).toEqual([{ pages: 3, jobs: 2 }]);
    expect(await widths(a)).toEqual([1, 2]);
    expect(await widths(b)).toEqual([3]);
    const titles = await Promise.all([...a, ...b].map(async (pdf) => (await PDFDocument.load(pdf)).getTitle()));
    expect(titles).toEqual(['Certificate 1', 'Certificate 2', 'Certificate 3']);
  });

  it('never puts two accounts, or test and live certificates, in one print', async () => {
    const pool = fakePool();
    const p = printer(pool, { printsAtOnce: 3 });
    const jobs = [await job(1, [1]), await job(2, [2]), await job(1, [3], true), await job(1, [4])];
    const out = await Promise.all(jobs.map((j) => p.print(j)));
    expect(pool.prints.map((units) => [...units].sort())).toEqual(expect.arrayContaining([[1, 4], [2], [3]]));
    expect(pool.prints).toHaveLength(3);
    expect(await Promise.all(out.map(widths))).toEqual([[1], [2], [3], [4]]);
  });

  it('waits for a free print slot, and what queued meanwhile shares the next print up to the page limit', async () => {
    const pool = fakePool();
    const p = printer(pool, { batchWaitMs: 0, maxPagesPerPrint: 4 });
    pool.hold();
    const jobs = [await job(1, [1]), await job(1, [2, 3]), await job(1, [4]), await job(1, [5, 6])];
    const first = p.print(jobs[0]!);
    await new Promise((r) => setImmediate(r));
    expect(pool.prints).toEqual([[1]]); // no wait: printed at once
    const rest = jobs.slice(1).map((j) => p.print(j));
    expect(p.queued).toBe(3);
    pool.release();
    const out = await Promise.all([first, ...rest]);
    expect(pool.prints).toEqual([[1], [2, 3, 4], [5, 6]]);
    expect(await Promise.all(out.map(widths))).toEqual([[1], [2, 3], [4], [5, 6]]);
    expect(p.queued).toBe(0);
  });

  it('prints a job larger than the page limit alone', async () => {
    const pool = fakePool();
    const p = printer(pool, { maxPagesPerPrint: 2 });
    const jobs = [await job(1, [1, 2, 3]), await job(1, [4])];
    const out = await Promise.all(jobs.map((j) => p.print(j)));
    expect(pool.prints).toEqual([[1, 2, 3], [4]]);
    expect(await Promise.all(out.map(widths))).toEqual([[1, 2, 3], [4]]);
  });

  it('reprints job by job when a certificate overflows onto a second page, and that certificate alone and whole', async () => {
    const pool = fakePool({ extraPageFor: 2 });
    const p = printer(pool);
    const jobs = [await job(1, [1, 2]), await job(1, [3])];
    const [a, b] = (await Promise.all(jobs.map((j) => p.print(j)))) as [Buffer[], Buffer[]];
    // The shared print, then each job, then job a page by page.
    expect(pool.prints).toEqual(expect.arrayContaining([[1, 2, 3], [1, 2], [3], [1], [2]]));
    expect(await widths(b)).toEqual([3]);
    expect(await widths([a[0]!])).toEqual([1]);
    const overflowed = await PDFDocument.load(a[1]!);
    expect(overflowed.getPageCount()).toBe(2);
  });

  it('rejects every job of a print that fails with the error of that print', async () => {
    const failing = fakePool({ fail: new Error('chromium crashed') });
    const p = printer(failing);
    const jobs = [await job(1, [1]), await job(1, [2])];
    const results = await Promise.allSettled(jobs.map((j) => p.print(j)));
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'fulfilled'))).toEqual([
      'chromium crashed',
      'chromium crashed',
    ]);
    expect(failing.prints).toEqual([[1, 2]]);
  });

  it('refuses a malformed job without touching the queue', async () => {
    const pool = fakePool();
    const p = printer(pool);
    const one = await job(1, [1]);
    await expect(p.print({ ...one, meta: [] })).rejects.toThrow(RangeError);
    await expect(p.print({ ...one, meta: [{ title: 't', date: '1.3.2026' }] })).rejects.toThrow(RangeError);
    await expect(p.print({ account: 1, pages: [], meta: [] })).rejects.toThrow(CertificateTemplateError);
    const mixed = [(await job(1, [1])).pages[0]!, (await job(1, [2], true)).pages[0]!];
    await expect(p.print({ account: 1, pages: mixed, meta: [one.meta[0]!, one.meta[0]!] })).rejects.toThrow(CertificateTemplateError);
    expect(p.queued).toBe(0);
    expect(pool.prints).toEqual([]);
  });

  it('rejects options out of range', () => {
    const pool = fakePool();
    expect(() => printer(pool, { maxPagesPerPrint: 0 })).toThrow(RangeError);
    expect(() => printer(pool, { printsAtOnce: 0 })).toThrow(RangeError);
    expect(() => printer(pool, { batchWaitMs: -1 })).toThrow(RangeError);
  });
});
