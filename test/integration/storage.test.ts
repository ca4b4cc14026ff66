/**
 * Object storage and certificate zips (issue 6) against the real fake-gcs-server that the jest
 * global setup starts or reuses (STORAGE_API_ENDPOINT, bucket STORAGE_BUCKET).
 * Zips are read back with the `unzip` command (Info-ZIP), falling back to `python3 -m zipfile`.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { loadConfig } from '../../src/config';
import {
  certificateKey,
  createObjectStore,
  ObjectConflictError,
  purchasePrefix,
  sha256Of,
  zipKeys,
  type ObjectStore,
} from '../../src/storage/object-store';
import { buildZipToStore, PROOF_OF_COVERAGE_NAME, proofOfCoveragePng } from '../../src/storage/zips';

const RUN = `t${Date.now()}x${process.pid}`;
const MB = 1024 * 1024;
let store: ObjectStore;
let tmp: string;
let seq = 0;
const purchase = () => `${RUN}-${++seq}`;

/** A small, valid one-page PDF whose content names `label` (so each file's bytes differ). */
function fakePdf(label: string): Buffer {
  const text = `BT /F1 12 Tf 72 720 Td (${label}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${text.length} >>\nstream\n${text}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  out += offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('');
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

async function download(url: string, file: string): Promise<number> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url} → ${res.status}`);
  const bytes = Buffer.from(await res.arrayBuffer());
  fs.writeFileSync(file, bytes);
  return bytes.length;
}

const hasUnzip = (() => {
  try {
    execFileSync('unzip', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function zipNames(file: string): string[] {
  if (hasUnzip) return execFileSync('unzip', ['-Z1', file], { encoding: 'utf8' }).split('\n').filter(Boolean);
  const script = 'import sys,zipfile; print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))';
  return execFileSync('python3', ['-c', script, file], { encoding: 'utf8' }).split('\n').filter(Boolean);
}

function zipEntry(file: string, name: string): Buffer {
  if (hasUnzip) return execFileSync('unzip', ['-p', file, name], { maxBuffer: 64 * MB });
  const script = 'import sys,zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))';
  return execFileSync('python3', ['-c', script, file, name], { maxBuffer: 64 * MB });
}

/** Checks every entry's CRC (exit status 0 only when the archive is intact). */
function zipTest(file: string): void {
  if (hasUnzip) execFileSync('unzip', ['-tq', file]);
  else execFileSync('python3', ['-m', 'zipfile', '-t', file]);
}

beforeAll(() => {
  store = createObjectStore(loadConfig(process.env));
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'storage-test-'));
});

afterAll(async () => {
  fs.rmSync(tmp, { recursive: true, force: true });
  await store.deletePrefix(`purchases/${RUN}`);
});

describe('putIfAbsent', () => {
  /** A new purchase's certificate `number`, stored as a fake PDF of `text`: the purchase's id, the key and the bytes. */
  const storedCertificate = async (number: string, text: string) => {
    const id = purchase();
    const key = certificateKey(id, number);
    const pdf = fakePdf(text);
    await store.putIfAbsent(key, pdf, { contentType: 'application/pdf' });
    return { id, key, pdf };
  };

  /** Asserts that `key` reads back (through a signed URL) as `bytes` and is purchase `id`'s only object. */
  const expectOnlyObject = async (id: string, key: string, bytes: Buffer) => {
    const url = await store.signedReadUrl(key, { expiresInSeconds: 60 });
    expect(Buffer.from(await (await fetch(url)).arrayBuffer())).toEqual(bytes);
    expect(await store.list(purchasePrefix(id))).toEqual([key]);
  };

  test('when a PDF is uploaded, then it is created with its content type, size and sha256 metadata', async () => {
    const key = certificateKey(purchase(), 'COI-000001');
    const pdf = fakePdf('one');

    const result = await store.putIfAbsent(key, pdf, { contentType: 'application/pdf' });

    expect(result).toEqual({ key, created: true, size: pdf.length, sha256: sha256Of(pdf) });
    expect(await store.stat(key)).toEqual({ size: pdf.length, sha256: sha256Of(pdf), contentType: 'application/pdf' });
  });

  test('when the same bytes are uploaded again, then created is false and there is still one object', async () => {
    const { id, key, pdf } = await storedCertificate('COI-000002', 'two');

    const again = await store.putIfAbsent(key, Buffer.from(pdf), { contentType: 'application/pdf' });
    const asStream = await store.putIfAbsent(key, Readable.from([pdf.subarray(0, 10), pdf.subarray(10)]), {
      contentType: 'application/pdf',
    });

    expect(again).toEqual({ key, created: false, size: pdf.length, sha256: sha256Of(pdf) });
    expect(asStream.created).toBe(false);
    expect(await store.list(purchasePrefix(id))).toEqual([key]);
  });

  test('when different bytes are uploaded to an existing key, then ObjectConflictError and the original is unchanged', async () => {
    const { id, key, pdf: original } = await storedCertificate('COI-000003', 'original');

    const attempt = store.putIfAbsent(key, fakePdf('changed'), { contentType: 'application/pdf' });

    await expect(attempt).rejects.toBeInstanceOf(ObjectConflictError);
    await expect(attempt).rejects.toMatchObject({ key, existingSha256: sha256Of(original) });
    await expectOnlyObject(id, key, original);
  });

  test("when different bytes meet an existing key with onExisting 'keep', then the stored object is kept and described, as a Buffer or a stream", async () => {
    const { id, key, pdf: original } = await storedCertificate('COI-000013', 'earlier attempt');

    const reprint = await store.putIfAbsent(key, fakePdf('reprint'), { contentType: 'application/pdf', onExisting: 'keep' });
    const streamed = await store.putIfAbsent(key, Readable.from([fakePdf('streamed reprint')]), {
      contentType: 'application/pdf',
      onExisting: 'keep',
    });

    expect(reprint).toEqual({ key, created: false, size: original.length, sha256: sha256Of(original) });
    expect(streamed).toEqual(reprint);
    await expectOnlyObject(id, key, original);
  });

  test('when two identical uploads race, then one creates and the other reports created false', async () => {
    const key = certificateKey(purchase(), 'COI-000004');
    const pdf = fakePdf('race');

    const results = await Promise.all([1, 2, 3].map(() => store.putIfAbsent(key, pdf, { contentType: 'application/pdf' })));

    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.sha256))).toEqual(new Set([sha256Of(pdf)]));
  });

  test('when exists is asked about present and missing keys, then it answers per key', async () => {
    const id = purchase();
    const present = certificateKey(id, 'COI-000005');
    const missing = certificateKey(id, 'COI-999999');
    await store.putIfAbsent(present, fakePdf('five'), { contentType: 'application/pdf' });

    expect(await store.exists([present, missing])).toEqual({ [present]: true, [missing]: false });
    expect(await store.stat(missing)).toBeNull();
  });
});

describe('signedReadUrl', () => {
  test('when a signed URL is fetched over plain HTTP, then it returns the exact bytes from the emulator', async () => {
    const key = certificateKey(purchase(), 'COI-000010');
    const pdf = fakePdf('signed');
    await store.putIfAbsent(key, pdf, { contentType: 'application/pdf' });

    const url = await store.signedReadUrl(key, { expiresInSeconds: 900, downloadName: 'certificate COI-000010.pdf' });
    const res = await fetch(url);

    expect(new URL(url).host).toBe(new URL(process.env.STORAGE_API_ENDPOINT!).host);
    expect(new URL(url).searchParams.get('X-Goog-Algorithm')).toBe('GOOG4-RSA-SHA256');
    expect(new URL(url).searchParams.get('X-Goog-Expires')).toBe('900');
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(pdf);
  });

  test('when the signed URL of a missing key is fetched, then it answers 404', async () => {
    const url = await store.signedReadUrl(certificateKey(purchase(), 'COI-404'), { expiresInSeconds: 60 });

    const res = await fetch(url);
    await res.arrayBuffer(); // an unread body would hold the keep-alive socket (and jest) open

    expect(res.status).toBe(404);
  });

  test('when the lifetime is outside 1 s … 7 days, then it is refused', async () => {
    await expect(store.signedReadUrl('x', { expiresInSeconds: 0 })).rejects.toBeInstanceOf(RangeError);
    await expect(store.signedReadUrl('x', { expiresInSeconds: 8 * 86_400 })).rejects.toBeInstanceOf(RangeError);
  });
});

describe('buildZipToStore', () => {
  test('when 30 PDFs and the QR are zipped, then the downloaded zip holds exactly those files with their bytes', async () => {
    const id = purchase();
    const pdfs = Array.from({ length: 30 }, (_, i) => ({
      number: `COI-${String(i + 1).padStart(6, '0')}`,
      bytes: fakePdf(`unit ${i + 1}`),
    }));
    await Promise.all(pdfs.map((p) => store.putIfAbsent(certificateKey(id, p.number), p.bytes, { contentType: 'application/pdf' })));
    const qr = await proofOfCoveragePng(`http://127.0.0.1:3000/verify/${pdfs[0]!.number}`);
    const entries = pdfs.map((p) => ({ name: `${p.number}.pdf`, key: certificateKey(id, p.number) }));
    const key = zipKeys.payment(id, 'pi_test_123');

    const started = performance.now();
    const result = await buildZipToStore(store, key, entries, [{ name: PROOF_OF_COVERAGE_NAME, body: qr }]);
    const ms = performance.now() - started;
    const file = path.join(tmp, 'payment.zip');
    const size = await download(await store.signedReadUrl(key, { expiresInSeconds: 60 }), file);

    expect(result).toMatchObject({ key, created: true, size });
    expect(sha256Of(fs.readFileSync(file))).toBe(result.sha256);
    expect(await store.stat(key)).toMatchObject({ contentType: 'application/zip', sha256: result.sha256 });
    zipTest(file);
    expect(zipNames(file).sort()).toEqual([PROOF_OF_COVERAGE_NAME, ...entries.map((e) => e.name)].sort());
    expect(zipEntry(file, 'COI-000017.pdf')).toEqual(pdfs[16]!.bytes);
    expect(zipEntry(file, PROOF_OF_COVERAGE_NAME)).toEqual(qr);
    expect(qr.subarray(1, 4).toString()).toBe('PNG');
    process.stderr.write(`[storage] zip of 31 entries (${size} bytes) built and stored in ${ms.toFixed(0)} ms\n`);
  });

  test('when the same zip is built again, then it is byte-identical and created is false; a changed input is a conflict', async () => {
    const id = purchase();
    const entries = [1, 2, 3].map((n) => ({ name: `COI-${n}.pdf`, key: certificateKey(id, `COI-${n}`) }));
    await Promise.all(entries.map((e, i) => store.putIfAbsent(e.key, fakePdf(`again ${i}`), { contentType: 'application/pdf' })));
    const qr = await proofOfCoveragePng('http://127.0.0.1:3000/verify/COI-1');
    const key = zipKeys.product(id, 7);
    const first = await buildZipToStore(store, key, entries, [{ name: PROOF_OF_COVERAGE_NAME, body: qr }]);

    const second = await buildZipToStore(store, key, entries, [{ name: PROOF_OF_COVERAGE_NAME, body: qr }]);
    const changed = buildZipToStore(store, key, entries.slice(0, 2), [{ name: PROOF_OF_COVERAGE_NAME, body: qr }]);

    expect(first.created).toBe(true);
    expect(second).toEqual({ ...first, created: false });
    await expect(changed).rejects.toBeInstanceOf(ObjectConflictError);
    expect(await store.list(`${purchasePrefix(id)}zips/`)).toEqual([key]);
  });

  test("when every entry is in memory, then the zip is the same bytes as one streamed from storage, and with onExisting 'keep' a different zip already there is kept", async () => {
    const id = purchase();
    const pdfs = [1, 2].map((n) => ({ number: `COI-${n}`, bytes: fakePdf(`in memory ${n}`) }));
    await Promise.all(pdfs.map((p) => store.putIfAbsent(certificateKey(id, p.number), p.bytes, { contentType: 'application/pdf' })));
    const qr = await proofOfCoveragePng('http://127.0.0.1:3000/verify/POC-memory');
    const extras = [{ name: PROOF_OF_COVERAGE_NAME, body: qr }];
    const streamed = await buildZipToStore(
      store,
      zipKeys.product(id, 1),
      pdfs.map((p) => ({ name: `${p.number}.pdf`, key: certificateKey(id, p.number) })),
      extras,
    );

    const inMemory = await buildZipToStore(
      store,
      zipKeys.product(id, 2),
      pdfs.map((p) => ({ name: `${p.number}.pdf`, open: () => Readable.from([p.bytes]) })),
      extras,
    );
    const kept = await buildZipToStore(
      store,
      zipKeys.product(id, 2),
      [{ name: 'COI-1.pdf', open: () => Readable.from([pdfs[0]!.bytes]) }],
      extras,
      { onExisting: 'keep' },
    );

    expect(inMemory).toMatchObject({ created: true, size: streamed.size, sha256: streamed.sha256 });
    expect(await store.stat(zipKeys.product(id, 2))).toMatchObject({ contentType: 'application/zip', sha256: streamed.sha256 });
    expect(kept).toEqual({ ...inMemory, created: false });
  });

  test('when an entry object is missing, then the build fails and no zip is stored', async () => {
    const id = purchase();
    const key = zipKeys.payment(id, 'pi_missing');

    const attempt = buildZipToStore(store, key, [{ name: 'a.pdf', key: certificateKey(id, 'COI-absent') }]);

    await expect(attempt).rejects.toMatchObject({ code: 404 });
    expect(await store.stat(key)).toBeNull();
  });

  test('when entry names are unsafe or repeated, then the build is refused before any I/O', async () => {
    await expect(buildZipToStore(store, 'k', [{ name: '../x.pdf', key: 'a' }])).rejects.toBeInstanceOf(RangeError);
    await expect(
      buildZipToStore(store, 'k', [{ name: 'a.pdf', key: 'a' }], [{ name: 'a.pdf', body: Buffer.alloc(1) }]),
    ).rejects.toBeInstanceOf(RangeError);
  });

  test('when ~100 MB of stored objects are zipped, then RSS grows far less than the archive size', async () => {
    const id = purchase();
    const COUNT = 20;
    const SIZE = 5 * MB;
    const entries = Array.from({ length: COUNT }, (_, i) => ({ name: `big-${i}.bin`, key: certificateKey(id, `BIG-${i}`) }));
    const uploadStarted = performance.now();
    for (const e of entries) {
      await store.putIfAbsent(e.key, Readable.from(randomChunks(SIZE)), { contentType: 'application/octet-stream' });
    }
    const uploadMs = performance.now() - uploadStarted;
    const key = zipKeys.payment(id, 'pi_big');
    global.gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 25);

    const started = performance.now();
    let result;
    try {
      result = await buildZipToStore(store, key, entries);
    } finally {
      clearInterval(sampler);
    }
    const zipMs = performance.now() - started;
    peak = Math.max(peak, process.memoryUsage().rss);

    const growth = peak - baseline;
    process.stderr.write(
      `[storage] upload ${COUNT}×${SIZE / MB} MB streamed: ${((COUNT * SIZE) / MB / (uploadMs / 1000)).toFixed(1)} MB/s; ` +
        `zip ${(result.size / MB).toFixed(1)} MB: ${(result.size / MB / (zipMs / 1000)).toFixed(1)} MB/s in ${zipMs.toFixed(0)} ms; ` +
        `RSS growth during zip ${(growth / MB).toFixed(1)} MB (baseline ${(baseline / MB).toFixed(0)} MB)\n`,
    );
    expect(result.created).toBe(true);
    expect(result.size).toBeGreaterThan(COUNT * SIZE);
    expect(growth).toBeLessThan(60 * MB);
    expect((await store.stat(key))?.size).toBe(result.size);
  }, 120_000);
});

/** `total` random bytes in 256 KiB chunks, generated lazily (the test never holds them all). */
function* randomChunks(total: number): Generator<Buffer> {
  for (let left = total; left > 0; left -= 256 * 1024) yield randomBytes(Math.min(left, 256 * 1024));
}
