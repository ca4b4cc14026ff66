/**
 * Reading generated documents back in tests: PDF text and first-page image through poppler
 * (`pdftotext`, `pdftoppm`; Debian's poppler-utils, installed by .ci/run), QR codes through
 * jsQR, zips through yauzl.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import yauzl from 'yauzl';

function withTempDir<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(path.join(tmpdir(), 'doc-test-'));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The PDF's text: `layout` keeps the page's columns (`pdftotext -layout`); `raw` follows the
 * content stream (`-raw`), which keeps rotated text such as a watermark in one piece.
 */
export function pdfText(pdf: Buffer, mode: 'layout' | 'raw' = 'layout'): string {
  return withTempDir((dir) => {
    const file = path.join(dir, 'doc.pdf');
    writeFileSync(file, pdf);
    return execFileSync('pdftotext', [`-${mode}`, file, '-'], { encoding: 'utf8' });
  });
}

/** `pdfinfo [flag] <pdf>`'s output (`-struct-text` prints the structure tree with its text); its stderr is dropped. */
export function pdfInfo(pdf: Buffer, flag?: string): string {
  return withTempDir((dir) => {
    const file = path.join(dir, 'doc.pdf');
    writeFileSync(file, pdf);
    return execFileSync('pdfinfo', [...(flag ? [flag] : []), file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  });
}

/** Number of pages of the PDF (`pdfinfo`). */
export function pdfPages(pdf: Buffer): number {
  return Number(/^Pages:\s+(\d+)/m.exec(pdfInfo(pdf))?.[1] ?? NaN);
}

/** The PDF's first page as a PNG at `dpi`. */
export function pdfFirstPagePng(pdf: Buffer, dpi = 150): Buffer {
  return withTempDir((dir) => {
    const file = path.join(dir, 'doc.pdf');
    writeFileSync(file, pdf);
    execFileSync('pdftoppm', ['-png', '-r', String(dpi), '-singlefile', '-f', '1', '-l', '1', file, path.join(dir, 'page')]);
    return readFileSync(path.join(dir, 'page.png'));
  });
}

/**
 * The text of the QR code a certificate prints in its page's top right corner, or null: that
 * region (the right 45 % of the first page's top quarter, from `pdfinfo`'s page size) rendered at
 * 300, 350, 250 and 200 dpi in turn until one reads, as a phone frames the code rather than the
 * page. On a whole page jsQR finds the finder patterns of a dense code (a signed verification URL,
 * about 600 characters) at some resolutions and not others (a run failed at 300 dpi, read at 250).
 */
export function pdfQr(pdf: Buffer): string | null {
  const [widthPt, heightPt] = (/^Page size:\s+([\d.]+) x ([\d.]+) pts/m.exec(pdfInfo(pdf)) ?? []).slice(1).map(Number);
  if (!widthPt || !heightPt) throw new Error('pdfinfo printed no page size');
  return withTempDir((dir) => {
    const file = path.join(dir, 'doc.pdf');
    writeFileSync(file, pdf);
    for (const dpi of [300, 350, 250, 200]) {
      const [w, h] = [(widthPt / 72) * dpi, (heightPt / 72) * dpi];
      const region = ['-x', Math.round(w * 0.55), '-y', 0, '-W', Math.round(w * 0.45), '-H', Math.round(h * 0.25)].map(String);
      execFileSync('pdftoppm', [
        '-png',
        '-r',
        String(dpi),
        '-singlefile',
        '-f',
        '1',
        '-l',
        '1',
        ...region,
        file,
        path.join(dir, `qr-${dpi}`),
      ]);
      const text = decodeQr(readFileSync(path.join(dir, `qr-${dpi}.png`)));
      if (text !== null) return text;
    }
    return null;
  });
}

/** The text of the QR code in a PNG, or null when none is found. */
export function decodeQr(png: Buffer): string | null {
  const image = PNG.sync.read(png);
  return jsQR(new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length), image.width, image.height)?.data ?? null;
}

/** Every file of a zip, by entry name, in archive order. */
export function readZip(zip: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(zip, { lazyEntries: true }, (err, file) => {
      if (err || !file) return reject(err ?? new Error('no zip'));
      const out = new Map<string, Buffer>();
      file.on('error', reject);
      file.on('end', () => resolve(out));
      file.on('entry', (entry: yauzl.Entry) => {
        file.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error('no stream'));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', reject);
          stream.on('end', () => {
            out.set(entry.fileName, Buffer.concat(chunks));
            file.readEntry();
          });
        });
      });
      file.readEntry();
    });
  });
}

/** GETs `url` and returns its body (throws on a non-2xx answer). */
export async function download(url: string): Promise<Buffer> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url} answered ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

/** The names of the PDFs in the zip at `url` (each entry's file name without its folder and `.pdf`: a certificate number), sorted. */
export async function pdfNamesInZip(url: string): Promise<string[]> {
  return [...(await readZip(await download(url))).keys()]
    .filter((n) => n.endsWith('.pdf'))
    .map((n) => path.posix.basename(n, '.pdf'))
    .sort();
}
