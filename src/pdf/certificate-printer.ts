/**
 * Prints certificates of several purchases of one account in one Chromium print, then splits the
 * print into one PDF per certificate (issue 16, "Cost of a purchase": a print costs Chromium
 * about 0.045 CPU-s whatever its length, a further page under 0.01; see docs/decisions.md).
 *
 * Each certificate activity hands its purchase's pages in as one job; jobs that share a batch
 * key (the account and the mode; a printer has one paper format) wait in one queue. A print
 * starts when a print slot is free and either the queue holds `maxPagesPerPrint` pages or its oldest job has
 * waited `batchWaitMs`; it takes whole jobs, oldest first, up to `maxPagesPerPrint` pages (a
 * larger job is printed alone). With `printsAtOnce` prints running, new jobs queue, so the
 * busier the worker the more pages a print holds; a quiet worker prints a job after
 * `batchWaitMs` at most.
 *
 * Accounts never share a print: a split page keeps the print's font subsets, which list every
 * character used on any page of that print.
 *
 * Failure isolation: a print that does not split into one page per certificate (one overflowed
 * onto a second page) is printed again job by job, and a job that still does not split is
 * printed one certificate at a time (`withFixedPdfDates` in place of the split's metadata). Any
 * other print error (render timeout, browser crash, closed pool) rejects every job of that
 * print with that error; the activity's retry prints it again.
 */
import type { BrowserPool, PdfPageFormat } from './browser-pool';
import { certificatesDocumentHtml, checkCertificatePages, type CertificatePage } from './certificate-template';
import { PdfPageCountError, splitPdfPages } from './split-pdf';
import { withFixedPdfDates } from './stable-pdf';

/** What one split PDF is stamped with: its title and its date (`YYYY-MM-DD`, midnight UTC). */
export interface PrintedPageMeta {
  title: string;
  date: string;
}

export interface CertificatePrintJob {
  /** Who the certificates belong to (the root account id): only one account's pages share a print. */
  account: string | number;
  /** One entry per certificate, from `certificatePage`; all of one mode (test or live). */
  pages: readonly CertificatePage[];
  /** Title and date per page, same order and length as `pages`. */
  meta: readonly PrintedPageMeta[];
}

export interface CertificatePrinterOptions {
  pool: Pick<BrowserPool, 'render'>;
  format: PdfPageFormat;
  /** Most certificate pages in one print (≥ 1; config `PDF_PAGES_PER_PRINT`). */
  maxPagesPerPrint: number;
  /** Prints running at once (≥ 1; at most the pool's pages are used; config `PDF_PRINTS_AT_ONCE`). */
  printsAtOnce: number;
  /** How long, in ms, the oldest job waits for others to share its print (≥ 0; config `PDF_PRINT_BATCH_WAIT_MS`). */
  batchWaitMs: number;
  /** Called once per print with its page and job counts (metrics). */
  onPrint?: (print: { pages: number; jobs: number }) => void;
}

export interface CertificatePrinter {
  /**
   * Prints the job's certificates, possibly together with other jobs of the same account, and
   * resolves with one PDF per page in the job's order. Rejects with the print's error (see the
   * module comment), `RangeError` for a job whose `meta` does not match `pages` or has a
   * malformed date, and `CertificateTemplateError` for an empty job or mixed modes.
   */
  print(job: CertificatePrintJob): Promise<Buffer[]>;
  /** Jobs waiting for a print now. */
  readonly queued: number;
  /** Prints run at once at most (the option). */
  readonly printsAtOnce: number;
}

interface Pending {
  job: CertificatePrintJob;
  since: number;
  resolve: (pdfs: Buffer[]) => void;
  reject: (err: unknown) => void;
}

/** Throws `RangeError` on a non-integer or out-of-range option. */
export function createCertificatePrinter(options: CertificatePrinterOptions): CertificatePrinter {
  const { pool, format, maxPagesPerPrint, printsAtOnce, batchWaitMs, onPrint } = options;
  for (const [name, value, min] of [
    ['maxPagesPerPrint', maxPagesPerPrint, 1],
    ['printsAtOnce', printsAtOnce, 1],
    ['batchWaitMs', batchWaitMs, 0],
  ] as const) {
    if (!Number.isInteger(value) || value < min) throw new RangeError(`${name} must be an integer ≥ ${min}, got ${value}`);
  }

  /** Waiting jobs per batch key, oldest first; a key is removed when its queue empties. */
  const queues = new Map<string, Pending[]>();
  let running = 0;
  let queued = 0;
  let timer: NodeJS.Timeout | undefined;

  function schedule(): void {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    const now = Date.now();
    let nextDue = Infinity;
    while (running < printsAtOnce) {
      // The ready queue whose oldest job has waited longest.
      let chosen: string | undefined;
      let chosenSince = Infinity;
      for (const [key, queue] of queues) {
        const pages = queue.reduce((n, p) => n + p.job.pages.length, 0);
        const due = queue[0]!.since + batchWaitMs;
        if (pages >= maxPagesPerPrint || due <= now) {
          if (queue[0]!.since < chosenSince) {
            chosen = key;
            chosenSince = queue[0]!.since;
          }
        } else {
          nextDue = Math.min(nextDue, due);
        }
      }
      if (chosen === undefined) break;
      const queue = queues.get(chosen)!;
      const batch: Pending[] = [queue.shift()!];
      let pages = batch[0]!.job.pages.length;
      while (queue.length > 0 && pages + queue[0]!.job.pages.length <= maxPagesPerPrint) {
        pages += queue[0]!.job.pages.length;
        batch.push(queue.shift()!);
      }
      if (queue.length === 0) queues.delete(chosen);
      queued -= batch.length;
      running += 1;
      void printBatch(batch).finally(() => {
        running -= 1;
        schedule();
      });
    }
    if (running < printsAtOnce && nextDue < Infinity) timer = setTimeout(schedule, Math.max(0, nextDue - now));
  }

  async function printBatch(batch: Pending[]): Promise<void> {
    onPrint?.({ pages: batch.reduce((n, p) => n + p.job.pages.length, 0), jobs: batch.length });
    try {
      const pdfs = await splitPdfPages(
        await printOf(batch.flatMap((p) => p.job.pages)),
        batch.flatMap((p) => p.job.meta),
      );
      let at = 0;
      for (const p of batch) {
        p.resolve(pdfs.slice(at, at + p.job.pages.length));
        at += p.job.pages.length;
      }
    } catch (err) {
      if (!(err instanceof PdfPageCountError)) {
        for (const p of batch) p.reject(err);
        return;
      }
      // Some page overflowed: each job on its own, and a job that still overflows page by page.
      await Promise.all(batch.map((p) => printAlone(p.job).then(p.resolve, p.reject)));
    }
  }

  const printOf = (pages: readonly CertificatePage[]) => pool.render(certificatesDocumentHtml(pages, { format }), { format });

  async function printAlone(job: CertificatePrintJob): Promise<Buffer[]> {
    const print = await printOf(job.pages);
    try {
      return await splitPdfPages(print, job.meta);
    } catch (err) {
      if (!(err instanceof PdfPageCountError)) throw err;
      // One certificate longer than a page is kept whole, as Chromium printed it.
      if (job.pages.length === 1) return [withFixedPdfDates(Buffer.from(print), job.meta[0]!.date)];
      const one = (i: number) => printAlone({ account: job.account, pages: [job.pages[i]!], meta: [job.meta[i]!] });
      return Promise.all(job.pages.map((_, i) => one(i).then((pdfs) => pdfs[0]!)));
    }
  }

  return {
    print(job) {
      if (job.meta.length !== job.pages.length)
        return Promise.reject(new RangeError(`${job.pages.length} pages but ${job.meta.length} titles and dates`));
      for (const m of job.meta) {
        if (!/^\d{4}-\d{2}-\d{2}$/.test(m.date))
          return Promise.reject(new RangeError(`date must be YYYY-MM-DD, got ${JSON.stringify(m.date)}`));
      }
      let testMode: boolean;
      try {
        // Checks the job on its own (empty, mixed modes) so that it cannot fail another job's print.
        testMode = checkCertificatePages(job.pages);
      } catch (err) {
        return Promise.reject(err);
      }
      const key = JSON.stringify([String(job.account), testMode]);
      return new Promise<Buffer[]>((resolve, reject) => {
        const queue = queues.get(key) ?? [];
        queue.push({ job, since: Date.now(), resolve, reject });
        queues.set(key, queue);
        queued += 1;
        schedule();
      });
    },
    get queued() {
      return queued;
    },
    printsAtOnce,
  };
}
