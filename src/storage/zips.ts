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

/**
 * The `proof-of-coverage.png` QR code for `verificationUrl` (the product's verification link):
 * a PNG of 512×512 px, error correction M, quiet zone 4 modules. Deterministic for a URL.
 */
export function proofOfCoveragePng(verificationUrl: string): Promise<Buffer> {
  // The "Up" filter alone (pngjs's `filterType`, passed through by qrcode though its types omit
  // it): a QR code's rows repeat, so it compresses them to nothing, where trying all five filters
  // per row (the default) took 25 ms of CPU per image (issue 16).
  const rendererOpts = { deflateLevel: 9, filterType: 2 };
  return QRCode.toBuffer(verificationUrl, { type: 'png', errorCorrectionLevel: 'M', margin: 4, width: 512, rendererOpts });
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
