/**
 * Certificate zips (issue 6: "build and upload the per-payment zip and one per-product zip
 * (archiver, streamed, never the whole archive in memory) holding the PDFs and a
 * `proof-of-coverage.png` QR code (qrcode) for the product's verification link").
 *
 * The archive is a pipeline: each stored PDF is streamed from storage into archiver, one entry
 * at a time, and archiver's output is streamed into a create-only upload (`putIfAbsent`), so
 * memory stays at a few stream buffers whatever the archive size. A zip of entries that are all
 * in memory already (the PDFs a small purchase just rendered) is built in memory too.
 *
 * Zips are byte-deterministic: every entry carries the fixed date `ZIP_ENTRY_DATE` and entries
 * are written in the order given, so the same inputs give the same bytes and the same SHA-256.
 * That is what makes a retried build idempotent (`created: false`) under the store's
 * no-overwrite rule, and a changed input an `ObjectConflictError` instead of a silent overwrite.
 */
import archiver from 'archiver';
import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import type { ObjectStore, PutResult } from './object-store';

/** The date stamped on every zip entry (DOS time, local zone of the process; TZ is UTC here). */
export const ZIP_ENTRY_DATE = new Date('2020-01-01T00:00:00Z');

/** The QR image's entry name inside each zip. */
export const PROOF_OF_COVERAGE_NAME = 'proof-of-coverage.png';

/** An entry read from storage (`key`) or from a stream opened only when its turn comes (`open`). */
export type ZipEntry = { name: string; key: string } | { name: string; open: () => Readable };

/** A small in-memory entry (e.g. the QR PNG). */
export interface ZipExtra {
  name: string;
  body: Buffer;
}

export interface ZipBuildOptions {
  /**
   * zlib level 1–9 to deflate entries; default 0 = store. PDFs and PNGs are already
   * compressed, so deflating costs CPU for a few percent (decision, docs/decisions.md).
   */
  compressionLevel?: number;
  /**
   * A different zip already stored at the key: `conflict` (default) throws `ObjectConflictError`;
   * `keep` keeps it (see `PutOptions.onExisting`).
   */
  onExisting?: 'conflict' | 'keep';
}

/**
 * Builds a zip of `extra` (first, in memory) and `entries` (streamed from storage one at a time)
 * and stores it at `key` with the store's create-only semantics. Returns the store's result:
 * `{ key, created, size (bytes), sha256 }`; `created: false` when the identical zip is already
 * stored (a retry). When no entry is read from storage (all `open`), the zip is built in memory
 * and stored in one request. Throws `ObjectConflictError` when a different zip is stored at `key`,
 * `RangeError` for an unsafe or duplicate entry name, and the storage error (code 404) when an
 * entry's object is missing: in that case nothing is stored.
 */
export async function buildZipToStore(
  store: ObjectStore,
  key: string,
  entries: readonly ZipEntry[],
  extra: readonly ZipExtra[] = [],
  options: ZipBuildOptions = {},
): Promise<PutResult> {
  checkNames([...extra.map((e) => e.name), ...entries.map((e) => e.name)]);
  const level = options.compressionLevel ?? 0;
  const archive = archiver('zip', level > 0 ? { zlib: { level } } : { store: true });
  const stop = new AbortController();
  archive.once('close', () => stop.abort());
  // `on`, not `once`: archiver may emit a second error while shutting down.
  archive.on('error', () => stop.abort());

  const feed = async () => {
    const add = async (source: Buffer | Readable, name: string) => {
      const added = once(archive, 'entry', { signal: stop.signal });
      archive.append(source, { name, date: ZIP_ENTRY_DATE });
      await added;
    };
    for (const e of extra) await add(e.body, e.name);
    // One entry at a time: the next object is opened only after the previous one is written,
    // so at most one download is in flight and buffered.
    for (const e of entries) await add(guarded('key' in e ? store.openRead(e.key) : e.open()), e.name);
    await archive.finalize();
  };
  // A failing source (e.g. a missing object) fails the whole archive, once, with its own error:
  // archiver's own handling of source errors re-emits them without a listener.
  const guarded = (source: Readable): Readable => {
    const pass = new PassThrough();
    source.once('error', (err) => archive.destroy(err));
    return source.pipe(pass);
  };
  feed().catch((err: unknown) => {
    if (!stop.signal.aborted) archive.destroy(err instanceof Error ? err : new Error(String(err)));
  });

  const put = { contentType: 'application/zip', onExisting: options.onExisting };
  if (entries.some((e) => 'key' in e)) return store.putIfAbsent(key, archive, put);
  // Every entry is in memory already (PDFs just rendered): so is the zip, which then goes up in
  // one request with its digest, instead of a look-up, a streamed upload and a metadata patch.
  const chunks: Buffer[] = [];
  for await (const chunk of archive) chunks.push(chunk as Buffer);
  return store.putIfAbsent(key, Buffer.concat(chunks), put);
}

/** Side of `proof-of-coverage.png` in pixels. */
const QR_WIDTH_PX = 512;
/** Its quiet zone, in modules. */
const QR_MARGIN_MODULES = 4;

/**
 * The `proof-of-coverage.png` QR code for `verificationUrl` (the product's verification link):
 * a PNG of 512×512 px, black on white, error correction M, quiet zone 4 modules. Deterministic
 * for a URL.
 *
 * The symbol comes from qrcode (`QRCode.create`); its pixels are laid out as qrcode's own PNG
 * renderer lays them (the same scale, margin and rounding, so the same picture), but written by
 * pngjs as 8-bit grayscale with the "Up" filter: a quarter of the bytes of qrcode's RGBA, and
 * each row of pixels is built once per module row and copied. That took the image from about
 * 6 ms of CPU to about 3 ms (a third of it qrcode's symbol), once per product of every purchase
 * (issue 28, the cluster at 8 purchases/s). Throws qrcode's error for a URL too long for a QR
 * code.
 */
export async function proofOfCoveragePng(verificationUrl: string): Promise<Buffer> {
  const { modules } = QRCode.create(verificationUrl, { errorCorrectionLevel: 'M' });
  const size = modules.size;
  const scale = QR_WIDTH_PX / (size + QR_MARGIN_MODULES * 2);
  const side = Math.floor((size + QR_MARGIN_MODULES * 2) * scale);
  const margin = QR_MARGIN_MODULES * scale;
  const png = new PNG({ width: side, height: side, colorType: 0, inputColorType: 0, inputHasAlpha: false, bitDepth: 8 });
  const data = png.data;
  data.fill(255);
  const inside = (i: number) => i >= margin && i < side - margin;
  // Which module column each pixel column shows (-1 in the quiet zone).
  const column = Array.from({ length: side }, (_, j) => (inside(j) ? Math.floor((j - margin) / scale) : -1));
  let builtFor = -1;
  let built = 0;
  for (let i = 0; i < side; i++) {
    if (!inside(i)) continue;
    const moduleRow = Math.floor((i - margin) / scale);
    const at = i * side;
    if (moduleRow === builtFor) {
      data.copy(data, at, built, built + side);
      continue;
    }
    for (let j = 0; j < side; j++) {
      const c = column[j]!;
      if (c >= 0 && modules.get(moduleRow, c)) data[at + j] = 0;
    }
    builtFor = moduleRow;
    built = at;
  }
  return PNG.sync.write(png, { colorType: 0, inputColorType: 0, inputHasAlpha: false, bitDepth: 8, deflateLevel: 9, filterType: 2 });
}

function checkNames(names: readonly string[]): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (!name || name.startsWith('/') || name.includes('\\') || name.split('/').some((p) => p === '..' || p === '.' || p === '')) {
      throw new RangeError(`unsafe zip entry name: ${JSON.stringify(name)}`);
    }
    if (seen.has(name)) throw new RangeError(`duplicate zip entry name: ${name}`);
    seen.add(name);
  }
}
