/**
 * The certificate renderer against Debian's real Chromium (issue 6: renderer building block).
 * Text is read back with poppler's `pdftotext` when it is installed; otherwise the HTML is
 * loaded in a page of a separate browser and `document.body.innerText` is checked instead.
 */
import { execFileSync } from 'node:child_process';
import puppeteer from 'puppeteer-core';
import { PDFDict, PDFDocument, PDFName, PDFString } from 'pdf-lib';
import { createBrowserPool, RenderTimeoutError } from '../../src/pdf/browser-pool';
import { CHROMIUM_PATH, PDF_PAGE_FORMAT, useBrowserPool, withBrowserPool } from '../helpers/browser-pool';
import { renderCertificateHtml, renderCertificatesHtml } from '../../src/pdf/certificate-template';
import { CertificateTemplateError, escapeHtml } from '../../src/pdf/certificate-format';
import { PdfPageCountError, splitPdfPages } from '../../src/pdf/split-pdf';
import { TEMPLATE_TAGS, certificateData as certificate } from '../helpers/certificate-data';
import { pdfInfo, pdfPages, pdfText } from '../helpers/documents';
import { processAlive } from '../helpers/run';

const format = PDF_PAGE_FORMAT;

const HOSTILE_NAME = `<img src=x onerror=alert(1)><script>fetch('http://127.0.0.1:9/x')</script>`;
const HOSTILE_HOLDER = `<link rel=stylesheet href=http://127.0.0.1:9/a.css>`;

function hasPdftotext(): boolean {
  try {
    execFileSync('which', ['pdftotext'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const PDFTOTEXT = hasPdftotext();

/** Reads the text a user would see: `pdftotext` if present, else innerText of the HTML in a JS-off page. */
async function visibleText(pdf: Buffer, html: string): Promise<string> {
  if (PDFTOTEXT) return pdfText(pdf, 'raw');
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    pipe: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage();
    await page.setJavaScriptEnabled(false);
    await page.setContent(html, { waitUntil: 'load' });
    return (await page.evaluate('document.body.innerText')) as string;
  } finally {
    await browser.close();
  }
}

function expectValidPdf(pdf: Buffer): void {
  expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
  expect(pdf.subarray(-32).toString('latin1')).toContain('%%EOF');
  expect(pdf.length).toBeGreaterThan(5_000);
  expect(pdf.length).toBeLessThan(2_000_000);
}

function pageCount(pdf: Buffer): number {
  return (pdf.toString('latin1').match(/\/Type\s*\/Page(?![a-zA-Z])/g) ?? []).length;
}

function childPids(): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(process.pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

describe('PDF renderer', () => {
  const shared = useBrowserPool({ pageCount: 2, rendersPerBrowser: 100, renderTimeoutMs: 15_000 });

  test('when a certificate is rendered, then it is a one-page PDF carrying the certificate number and named insured', async () => {
    const html = await renderCertificateHtml(certificate(), { format });

    const started = Date.now();
    const pdf = await shared.pool.render(html, { format });
    const firstMs = Date.now() - started;
    const again = Date.now();
    const second = await shared.pool.render(html, { format });
    process.stderr.write(`pdf render: first (with launch) ${firstMs} ms, warm ${Date.now() - again} ms, ${pdf.length} bytes\n`);

    expectValidPdf(pdf);
    expectValidPdf(second);
    expect(pageCount(pdf)).toBe(1);
    const text = await visibleText(pdf, html);
    const data = certificate();
    // The data's own values, and the money as printed (the first limit and the deductible).
    for (const printed of [
      data.certificateNumber,
      data.namedInsured.name,
      '$1,000,000.00',
      '$500.00',
      data.coverage.timeZone,
      data.masterPolicyNumber,
      data.policyNumberTwo!,
      data.certificateHolder!.name,
    ])
      expect(text).toContain(printed);
    expect(text).not.toContain('SPECIMEN');
    expect(shared.pool.blockedRequests).toBe(0);
  });

  test('when the format is A4, then the @page size and the PDF media box follow it', async () => {
    const html = await renderCertificateHtml(certificate(), { format: 'A4' });
    expect(html).toContain('size: A4');

    const pdf = await shared.pool.render(html, { format: 'A4' });

    expectValidPdf(pdf);
    // A4 is 595 × 842 points (Letter would be 612 × 792).
    expect(pdf.toString('latin1')).toMatch(/\/MediaBox \[0 0 595\.\d+ 841\.\d+\]|\/MediaBox \[0 0 595 842\]/);
  });

  test('when buyer strings hold markup, then the HTML carries them only as escaped text and Chromium makes no request', async () => {
    const html = await renderCertificateHtml(
      certificate({
        namedInsured: { name: HOSTILE_NAME },
        certificateHolder: { name: HOSTILE_HOLDER, address: '"><iframe src=http://127.0.0.1:9/>' },
      }),
      { format },
    );
    const blockedBefore = shared.pool.blockedRequests;

    const pdf = await shared.pool.render(html, { format });

    expect(html).toContain(escapeHtml(HOSTILE_NAME));
    expect(html).toContain(escapeHtml(HOSTILE_HOLDER));
    // the only tags are the template's own: none of the injected ones
    const tags = new Set([...html.matchAll(/<([a-zA-Z][a-zA-Z0-9]*)/g)].map((m) => m[1]!.toLowerCase()));
    expect([...tags].filter((t) => !TEMPLATE_TAGS.includes(t))).toEqual([]);
    expect(html).not.toMatch(/<(script|link|iframe)\b/i);
    expect(html).not.toMatch(/<img src=x/i);
    expectValidPdf(pdf);
    expect(shared.pool.blockedRequests).toBe(blockedBefore);
    const text = await visibleText(pdf, html);
    expect(text).toContain('<script>fetch(');
    expect(text).toContain('<link rel=stylesheet');
  });

  test('when raw unescaped HTML points at the network, then every such request is blocked and counted and the render still succeeds', async () => {
    // Deliberately not built with the template: proves the interception layer on its own.
    const raw = `<!DOCTYPE html><html><head><link rel="stylesheet" href="http://127.0.0.1:9/a.css"></head>
      <body><p>raw</p><img src="http://127.0.0.1:9/x"><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></body></html>`;
    const before = shared.pool.blockedRequests;

    const pdf = await shared.pool.render(raw, { format });

    expectValidPdf(pdf);
    expect(shared.pool.blockedRequests - before).toBe(2);
  });

  test('when in test mode, then the certificate carries SPECIMEN, and the QR code is an inline data: SVG', async () => {
    const live = await renderCertificateHtml(certificate(), { format });
    const specimen = await renderCertificateHtml(certificate({ testMode: true }), { format });

    const pdf = await shared.pool.render(specimen, { format });

    expect(live).not.toContain('SPECIMEN');
    expect(specimen).toContain('SPECIMEN');
    // the watermark is rotated: text extraction may split it into letters, so ignore whitespace
    expect((await visibleText(pdf, specimen)).replace(/\s+/g, '')).toContain('SPECIMEN');
    expect((await visibleText(await shared.pool.render(live, { format }), live)).replace(/\s+/g, '')).not.toContain('SPECIMEN');
    expect(pageCount(pdf)).toBe(1);
    const qr = /<img id="qr"[^>]* src="([^"]+)"/.exec(specimen)?.[1];
    expect(qr).toMatch(/^data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+$/);
    const svg = Buffer.from(qr!.split(',')[1]!, 'base64').toString('utf8');
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).not.toMatch(/<script|href=/i);
  });

  test('when a render exceeds its deadline, then it fails with RenderTimeoutError and the same pool renders afterwards', async () => {
    await withBrowserPool({ pageCount: 1, rendersPerBrowser: 100, renderTimeoutMs: 1 }, async (tight) => {
      const html = await renderCertificateHtml(certificate(), { format });

      await expect(tight.render(html, { format })).rejects.toBeInstanceOf(RenderTimeoutError);
      await expect(tight.render(html, { format })).rejects.toThrow('PDF render did not finish within 1 ms');
      const pdf = await tight.render(html, { format, timeoutMs: 15_000 });

      expectValidPdf(pdf);
      expect(tight.launches).toBe(1);
    });
  });

  test('when rendersPerBrowser is 2, then 5 renders relaunch the browser and every PDF is valid', async () => {
    await withBrowserPool({ pageCount: 1, rendersPerBrowser: 2, renderTimeoutMs: 15_000 }, async (recycling) => {
      const html = await renderCertificateHtml(certificate(), { format });
      const pids = new Set<number>();
      const pdfs: Buffer[] = [];

      for (let i = 0; i < 5; i++) {
        pdfs.push(await recycling.render(html, { format }));
        pids.add(recycling.__browserPidForTests()!);
      }

      expect(recycling.launches).toBe(3);
      expect(pids.size).toBe(3);
      pdfs.forEach(expectValidPdf);
    });
  });

  test('when documents are written over the last (freshDocumentPerRender false), then each PDF shows its own certificate only', async () => {
    await withBrowserPool(
      { pageCount: 1, rendersPerBrowser: 100, renderTimeoutMs: 15_000, freshDocumentPerRender: false },
      async (reusing) => {
        const numbers = ['COI-000123-0001', 'COI-000456-0002', 'COI-000789-0003'];
        for (const certificateNumber of numbers) {
          const pdf = await reusing.render(
            await renderCertificateHtml(
              certificate({
                certificateNumber,
                verificationUrl: `http://127.0.0.1:3000/verify/${certificateNumber}`,
                testMode: certificateNumber.endsWith('2'),
              }),
              { format },
            ),
            { format },
          );
          expectValidPdf(pdf);
          expect(pageCount(pdf)).toBe(1);
          if (PDFTOTEXT) {
            const text = pdfText(pdf, 'raw');
            expect(text).toContain(certificateNumber);
            for (const other of numbers.filter((n) => n !== certificateNumber)) expect(text).not.toContain(other);
            expect(text.replace(/\s+/g, '').includes('SPECIMEN')).toBe(certificateNumber.endsWith('2'));
          }
        }
        expect(reusing.pages).toEqual({ idle: 1, busy: 0 });
      },
    );
  });

  test('when 8 renders are submitted at once to 2 pages, then all succeed', async () => {
    await withBrowserPool({ pageCount: 2, rendersPerBrowser: 100, renderTimeoutMs: 30_000 }, async (concurrent) => {
      const htmls = await Promise.all(
        Array.from({ length: 8 }, (_, i) => renderCertificateHtml(certificate({ certificateNumber: `COI-CONC-${i}` }), { format })),
      );
      await concurrent.render(htmls[0]!, { format }); // warm up: launch is not part of the timing

      const started = Date.now();
      const pdfs = await Promise.all(htmls.map((h) => concurrent.render(h, { format })));
      const elapsed = Date.now() - started;
      process.stderr.write(`pdf render: 8 concurrent on pageCount 2: ${elapsed} ms total, ${(elapsed / 8).toFixed(0)} ms per PDF\n`);

      pdfs.forEach(expectValidPdf);
      if (PDFTOTEXT) pdfs.forEach((pdf, i) => expect(pdfText(pdf, 'raw')).toContain(`COI-CONC-${i}`));
      expect(concurrent.launches).toBe(1);
    });
  });

  test('when the browser process is killed, then the next render relaunches it and succeeds', async () => {
    await withBrowserPool({ pageCount: 1, rendersPerBrowser: 100, renderTimeoutMs: 15_000 }, async (crashy) => {
      const html = await renderCertificateHtml(certificate(), { format });
      await crashy.render(html, { format });
      const pid = crashy.__browserPidForTests()!;

      process.kill(pid, 'SIGKILL');
      await waitFor(() => !processAlive(pid) || crashy.__browserPidForTests() === undefined);
      const pdf = await crashy.render(html, { format });

      expectValidPdf(pdf);
      expect(crashy.launches).toBe(2);
      expect(crashy.__browserPidForTests()).not.toBe(pid);
    });
  });

  test('when three certificates are printed as one document and split, then each is a one-page PDF of its own, and a re-split gives the same bytes', async () => {
    const certs = ['A', 'B', 'C'].map((n) =>
      certificate({ certificateNumber: `COI-9-1-${n}-0000000000`, namedInsured: { name: `Insured ${n}` } }),
    );
    const print = await shared.pool.render(await renderCertificatesHtml(certs, { format }), { format });
    const pages = certs.map((c) => ({ title: `Certificate of Insurance ${c.certificateNumber}`, date: '2026-03-01' }));
    const pdfs = await splitPdfPages(print, pages);
    expect(pdfs).toHaveLength(3);
    for (const [i, one] of pdfs.entries()) {
      expect(pdfPages(one)).toBe(1);
      const text = pdfText(one);
      expect(text).toContain(certs[i]!.certificateNumber);
      expect(text).toContain(`Insured ${'ABC'[i]}`);
      for (const other of certs.filter((_, j) => j !== i)) expect(text).not.toContain(other.certificateNumber);
    }
    const again = await splitPdfPages(print, pages);
    expect(again.map((b, i) => b.equals(pdfs[i]!))).toEqual([true, true, true]);
    await expect(renderCertificatesHtml([certificate(), certificate({ testMode: true })], { format })).rejects.toThrow(
      CertificateTemplateError,
    );
  });

  test('when certificates are printed together and split, or printed alone, then each PDF is tagged, titled, in English, and its text copies out in reading order (issue 50 item 6)', async () => {
    const certs = ['A', 'B', 'C'].map((n) =>
      certificate({ certificateNumber: `COI-9-2-${n}-0000000000`, namedInsured: { name: `Insured ${n}` } }),
    );
    const print = await shared.pool.render(await renderCertificatesHtml(certs, { format }), { format });
    const pdfs = await splitPdfPages(
      print,
      certs.map((c) => ({ title: `Certificate of Insurance ${c.certificateNumber}`, date: '2026-03-01' })),
    );
    const alone = await shared.pool.render(await renderCertificateHtml(certs[0]!, { format }), { format });
    for (const [i, one] of [...pdfs, alone].entries()) {
      const number = certs[i % 3]!.certificateNumber;
      const info = pdfInfo(one);
      expect(info).toMatch(/^Tagged:\s+yes$/m);
      expect(info).toMatch(new RegExp(`^Title:\\s+Certificate of Insurance ${number}$`, 'm'));
      const doc = await PDFDocument.load(one, { updateMetadata: false });
      expect(doc.catalog.lookup(PDFName.of('Lang'), PDFString).decodeText()).toBe('en');
      expect(String(doc.catalog.lookup(PDFName.of('MarkInfo'), PDFDict).get(PDFName.of('Marked')))).toBe('true');
      // The structure tree marks this certificate's text and none of the other certificates'.
      const structure = pdfInfo(one, '-struct-text');
      expect(structure).toContain(`"Insured ${'ABC'[i % 3]}"`);
      for (const other of ['A', 'B', 'C'].filter((x) => x !== 'ABC'[i % 3])) expect(structure).not.toContain(`Insured ${other}`);
      // Copied out (content order), the boxes come as the page reads, top to bottom.
      const text = pdfText(one, 'raw');
      const order = [
        'CERTIFICATE OF LIABILITY INSURANCE',
        number,
        'PRODUCER',
        'INSURED',
        `Insured ${'ABC'[i % 3]}`,
        'INSURER(S) AFFORDING COVERAGE',
        'POLICY EFFECTIVE',
        'LIMITS',
        'DESCRIPTION OF OPERATIONS',
        'CERTIFICATE HOLDER',
        'CANCELLATION',
        'Verify this certificate',
      ].map((label) => text.indexOf(label));
      expect(order.every((at) => at >= 0)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
    }
  });

  test('when the named insured is 10 000 characters, then it prints as text, and a shared print that no longer has one page per certificate is refused for splitting', async () => {
    const long = `${'Longname'.repeat(1249)}Endmarks`;
    expect(long).toHaveLength(10_000);
    const blockedBefore = shared.pool.blockedRequests;
    const single = await shared.pool.render(await renderCertificateHtml(certificate({ namedInsured: { name: long } }), { format }), {
      format,
    });
    expect(pdfText(single).replace(/\s+/g, '')).toContain('LongnameLongnameLongname');
    expect(pdfText(single).replace(/\s+/g, '')).toContain('Endmark');
    expect(shared.pool.blockedRequests).toBe(blockedBefore);

    const certs = [certificate({ namedInsured: { name: long } }), certificate()];
    const print = await shared.pool.render(await renderCertificatesHtml(certs, { format }), { format });
    await expect(
      splitPdfPages(
        print,
        certs.map(() => ({ title: 't', date: '2026-03-01' })),
      ),
    ).rejects.toBeInstanceOf(PdfPageCountError);
  });

  test('when the pool is closed, then no Chromium process of it is left and render refuses', async () => {
    const closing = createBrowserPool({ executablePath: CHROMIUM_PATH, pageCount: 2, rendersPerBrowser: 100, renderTimeoutMs: 15_000 });
    const html = await renderCertificateHtml(certificate(), { format });
    await closing.render(html, { format });
    const pid = closing.__browserPidForTests()!;
    expect(childPids()).toContain(pid);

    await closing.close();

    expect(processAlive(pid)).toBe(false);
    expect(childPids()).not.toContain(pid);
    await expect(closing.render(html, { format })).rejects.toThrow(/closed/);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
