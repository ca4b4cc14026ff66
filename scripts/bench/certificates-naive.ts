/**
 * The naive baseline of the certificates benchmark: what a script without a page pool does for
 * each certificate, one after another — launch a fresh Chromium (puppeteer-core, the worker's
 * binary and `CHROMIUM_ARGS`), open a page, set the certificate's HTML (the same template and
 * data the activity renders), print the PDF, close the browser, upload the PDF to the same
 * bucket. Nothing is recorded in the database (the naive script has no rows to keep).
 *
 * Units: durations in ms, rate in certificates per second.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import puppeteer, { type PaperFormat } from 'puppeteer-core';
import { CHROMIUM_ARGS, type PdfPageFormat } from '../../src/pdf/browser-pool';
import { renderCertificateHtml } from '../../src/pdf/certificate-template';
import { toCertificateData } from '../../src/certificates/certificate-data';
import type { IssuanceRow } from '../../src/certificates/repository';
import type { ObjectStore } from '../../src/storage/object-store';

export interface NaiveResult {
  certificates: number;
  /** Wall time of the whole loop, ms. */
  wallMs: number;
  perSecond: number;
  /** Mean time of each step per certificate, ms. */
  meanMs: { launch: number; render: number; close: number; upload: number };
  bytes: number;
}

/**
 * Runs the naive loop over `rows` (one certificate each) and uploads each PDF under
 * `<keyPrefix>/<certificate number>.pdf`. Throws on the first failure (the baseline must not
 * look faster by skipping certificates).
 */
export async function runNaiveBaseline(opts: {
  rows: readonly IssuanceRow[];
  executablePath: string;
  publicBaseUrl: string;
  format: PdfPageFormat;
  store: ObjectStore;
  keyPrefix: string;
}): Promise<NaiveResult> {
  const sum = { launch: 0, render: 0, close: 0, upload: 0 };
  let bytes = 0;
  const started = performance.now();
  for (const row of opts.rows) {
    const html = await renderCertificateHtml(toCertificateData(row, opts.publicBaseUrl), { format: opts.format });
    // A fresh profile per launch, as a script calling puppeteer.launch() gets by default.
    const userDataDir = await mkdtemp(path.join(tmpdir(), 'naive-chromium-'));
    try {
      const t0 = performance.now();
      const browser = await puppeteer.launch({
        executablePath: opts.executablePath,
        headless: true,
        pipe: true,
        userDataDir,
        args: [...CHROMIUM_ARGS],
      });
      const t1 = performance.now();
      let pdf: Uint8Array;
      let t2 = t1;
      try {
        const page = await browser.newPage();
        await page.setContent(html, { waitUntil: 'load' });
        pdf = await page.pdf({ format: opts.format as PaperFormat, printBackground: true });
      } finally {
        t2 = performance.now();
        await browser.close();
      }
      const t3 = performance.now();
      await opts.store.putIfAbsent(`${opts.keyPrefix}/${row.certificateNumber}.pdf`, Buffer.from(pdf), { contentType: 'application/pdf' });
      const t4 = performance.now();
      sum.launch += t1 - t0;
      sum.render += t2 - t1;
      sum.close += t3 - t2;
      sum.upload += t4 - t3;
      bytes += pdf.length;
    } finally {
      await rm(userDataDir, { recursive: true, force: true });
    }
  }
  const wallMs = performance.now() - started;
  const n = opts.rows.length;
  return {
    certificates: n,
    wallMs,
    perSecond: n / (wallMs / 1000),
    meanMs: { launch: sum.launch / n, render: sum.render / n, close: sum.close / n, upload: sum.upload / n },
    bytes,
  };
}
