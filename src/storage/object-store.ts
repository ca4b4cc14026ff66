/**
 * Object storage adapter (Google Cloud Storage; fake-gcs-server locally and in tests) for
 * certificate PDFs and zips (issue 6: "Upload each PDF to object storage … with content type,
 * SHA-256 and no-overwrite semantics (a retry never makes a second object …)"; getCertificates'
 * time-limited download URLs, spec §4.5).
 *
 * - Writes are create-only: every upload carries the precondition `ifGenerationMatch=0`, so GCS
 *   refuses (412) to replace an existing object. An object that already exists with the same
 *   SHA-256 is an idempotent retry (`created: false`); with a different one it is an
 *   `ObjectConflictError`, and the stored object is left untouched.
 * - The SHA-256 (lowercase hex) lives in the object's custom metadata `sha256`.
 * - Uploads are single-request (`resumable: false`): fake-gcs-server mishandles the resumable
 *   protocol from Node (ARCHITECTURE §1), and certificate objects are small. The body may be a
 *   stream; it is piped through, never collected in memory.
 * - Reads and signed URLs go to `STORAGE_API_ENDPOINT` when set; requests to a custom endpoint
 *   are sent without credentials (the library's behaviour), which is what fake-gcs wants.
 *
 * Nothing here reads `process.env` (STYLE practice 9): the caller passes the config.
 */
import { Storage, type File } from '@google-cloud/storage';
import { GoogleAuth } from 'google-auth-library';
import { createHash, createPrivateKey, generateKeyPairSync, sign as rsaSign, type KeyObject } from 'node:crypto';
import { Readable, Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../config';

/** V4 signed URLs may live at most 7 days (GCS limit). */
export const MAX_SIGNED_URL_SECONDS = 7 * 24 * 3600;

/** Credentials that can sign V4 URLs locally (a service-account key's two fields). */
export interface SigningCredentials {
  client_email: string;
  private_key: string;
}

/** The scopes `@google-cloud/storage` asks for when it builds its own auth client. */
const STORAGE_SCOPES = [
  'https://www.googleapis.com/auth/iam',
  'https://www.googleapis.com/auth/cloud-platform',
  'https://www.googleapis.com/auth/devstorage.full_control',
];

/**
 * The storage client's auth for given credentials, signing URLs with the private key parsed once.
 * google-auth-library signs with the key's PEM text, which Node parses again for every signature:
 * half the CPU of signing one URL (about 0.3 of 0.6 ms), and a purchase signs three for its
 * `certificates.issued` event and one per PDF for every certificate listing. The signature is the
 * same (RSA-SHA256, PKCS #1 v1.5, base64); everything else is GoogleAuth's. Throws Node's error
 * for a private key it cannot parse.
 */
export class KeySigningAuth extends GoogleAuth {
  readonly #key: KeyObject;

  constructor(credentials: SigningCredentials) {
    super({ credentials, scopes: STORAGE_SCOPES });
    this.#key = createPrivateKey(credentials.private_key);
  }

  /** Signs `data` (a V4 string-to-sign) with the credentials' key: base64 of its RSA-SHA256 signature. */
  override async sign(data: string): Promise<string> {
    return rsaSign('sha256', Buffer.from(data), this.#key).toString('base64');
  }
}

export interface PutOptions {
  /** MIME type stored on the object, e.g. `application/pdf`. */
  contentType: string;
  /** The body's SHA-256 in lowercase hex when the caller already knows it (Buffers: computed here). */
  sha256Hex?: string;
  /**
   * What an object already stored under the key with other bytes means: `conflict` (default)
   * throws `ObjectConflictError`; `keep` keeps and returns it (`created` false, its own size and
   * SHA-256), for objects whose content a retry reproduces but not byte for byte (a certificate
   * printed again embeds other font subsets).
   */
  onExisting?: 'conflict' | 'keep';
}

export interface PutResult {
  key: string;
  /** true when this call created the object; false when an identical object (or, with `onExisting: 'keep'`, any object) was already there. */
  created: boolean;
  /** Object size in bytes. */
  size: number;
  /** SHA-256 of the object's bytes, lowercase hex. */
  sha256: string;
}

export interface ObjectInfo {
  /** Size in bytes. */
  size: number;
  /** SHA-256 from the object's metadata (lowercase hex), or null for an object written elsewhere. */
  sha256: string | null;
  contentType: string | null;
}

/**
 * Thrown when a create-only write meets an existing object with different bytes. The existing
 * object is never overwritten: a different body under the same key means a bug (unstable
 * certificate numbers, non-deterministic zips), not something to retry. Not retryable.
 */
export class ObjectConflictError extends Error {
  override name = 'ObjectConflictError';
  constructor(
    readonly key: string,
    readonly existingSha256: string,
    readonly newSha256: string,
  ) {
    super(`object ${key} already exists with sha256 ${existingSha256}, refusing to replace it with ${newSha256}`);
  }
}

/** Thrown when a stream body's bytes do not match the `sha256Hex` the caller promised. */
export class ObjectIntegrityError extends Error {
  override name = 'ObjectIntegrityError';
}

export interface ObjectStore {
  /** The bucket name, for logs. */
  readonly bucket: string;
  /**
   * Creates `key` with `body` unless it exists (precondition `ifGenerationMatch=0`).
   * Returns `{ created: true }` on creation, `{ created: false }` when the same bytes (by
   * SHA-256) are already stored; throws `ObjectConflictError` when different bytes are stored
   * (unless `onExisting: 'keep'`). A Buffer is uploaded in one request (the precondition
   * decides; an existing object costs a metadata read after the refused upload). A stream body
   * is looked up first and streamed to storage (hashed on the way); if the object already
   * exists it is still read to the end to hash it, but nothing is uploaded.
   */
  putIfAbsent(key: string, body: Buffer | Readable, options: PutOptions): Promise<PutResult>;
  /** Size, SHA-256 and content type of `key`, or null when it does not exist. */
  stat(key: string): Promise<ObjectInfo | null>;
  /** Whether each key exists: `{ [key]: boolean }` (checked concurrently, 8 at a time). */
  exists(keys: readonly string[]): Promise<Record<string, boolean>>;
  /** Object names under `prefix`, sorted. */
  list(prefix: string): Promise<string[]>;
  /** A readable stream of the object's bytes (errors with code 404 when it does not exist). */
  openRead(key: string): Readable;
  /**
   * A V4 signed GET URL for `key`, valid `expiresInSeconds` seconds (1 … 604 800). With
   * `downloadName` the response carries `Content-Disposition: attachment; filename="…"`.
   * Signing is local (no network) when the store has a private key; a missing object's URL
   * answers 404 when fetched.
   */
  signedReadUrl(key: string, options: { expiresInSeconds: number; downloadName?: string }): Promise<string>;
  /**
   * A V4 signed PUT URL that creates `key` (never replaces it), valid `expiresInSeconds` seconds
   * (1 … 604 800), for a file a client uploads straight to storage (a claim's attachment: the API
   * never carries its bytes). The URL is signed over the headers the uploader must send, answered
   * in `headers`: `Content-Type` (`contentType`), `x-goog-content-length-range` (`0,maxBytes`: GCS
   * refuses a larger body) and `x-goog-if-generation-match: 0` (create-only). The emulator does not
   * enforce them, so whoever accepts the object checks it (`stat`) as well.
   */
  signedUploadUrl(
    key: string,
    options: { expiresInSeconds: number; contentType: string; maxBytes: number },
  ): Promise<{ url: string; headers: Record<string, string> }>;
  /** Deletes every object under `prefix` (tests and tooling only); returns how many. */
  deletePrefix(prefix: string): Promise<number>;
  /**
   * Moves the object at `key` to `toKey` (a copy, then the original deleted), so that `key` is free
   * for a new object while the old bytes stay for inspection (the document sweep's damaged
   * objects). Returns false when `key` does not exist; a copy already at `toKey` is replaced.
   */
  moveAside(key: string, toKey: string): Promise<boolean>;
}

export type ObjectStoreConfig = Pick<Config, 'STORAGE_API_ENDPOINT' | 'STORAGE_BUCKET' | 'STORAGE_PROJECT_ID'>;

/**
 * Builds the store over `@google-cloud/storage`.
 *
 * - `STORAGE_API_ENDPOINT` set (fake-gcs-server): the client talks to it without credentials;
 *   URLs are signed with `options.signingCredentials`, or, when none are given, with a throwaway
 *   RSA key generated at the process's first signed URL (fake-gcs does not verify signatures; the
 *   URL's host is the endpoint's). A store that never signs (the bordereau threads) never pays for
 *   the key.
 * - Unset (real GCS): the workload's Application Default Credentials authenticate requests and
 *   sign URLs (a key file's private key locally, or IAM `signBlob` for a service account on
 *   GCE/Cloud Run, which needs `iam.serviceAccounts.signBlob` on itself);
 *   `options.signingCredentials` overrides that.
 */
export function createObjectStore(config: ObjectStoreConfig, options: { signingCredentials?: SigningCredentials } = {}): ObjectStore {
  const endpoint = config.STORAGE_API_ENDPOINT?.replace(/\/+$/, '');
  const client = (credentials?: SigningCredentials) =>
    new Storage({
      projectId: config.STORAGE_PROJECT_ID,
      ...(endpoint ? { apiEndpoint: endpoint } : {}),
      ...(credentials ? { authClient: new KeySigningAuth(credentials) } : {}),
    }).bucket(config.STORAGE_BUCKET);
  const bucket = client(options.signingCredentials);
  const file = (key: string): File => bucket.file(key);
  // Against the emulator without given credentials, URLs are signed by a second client holding the throwaway key, made at the first URL.
  let signingBucket = endpoint && !options.signingCredentials ? undefined : bucket;
  const signingFile = (key: string): File => (signingBucket ??= client(throwawaySigningCredentials(config.STORAGE_PROJECT_ID))).file(key);

  async function stat(key: string): Promise<ObjectInfo | null> {
    try {
      const [meta] = await file(key).getMetadata();
      const sha = meta.metadata?.sha256;
      return {
        size: Number(meta.size ?? 0),
        sha256: typeof sha === 'string' && sha ? sha : null,
        contentType: meta.contentType ?? null,
      };
    } catch (err) {
      if (statusOf(err) === 404) return null;
      throw err;
    }
  }

  /** The stored object's SHA-256; hashes its bytes (and records the result) when metadata lacks it. */
  async function storedSha256(key: string, info: ObjectInfo): Promise<string> {
    if (info.sha256) return info.sha256;
    // An upload of a stream whose hash was unknown up front, interrupted between the upload and
    // the metadata patch: hash what is stored and repair the metadata.
    const hash = createHash('sha256');
    await pipeline(file(key).createReadStream(), new Writable({ write: (c: Buffer, _e, cb) => (hash.update(c), cb()) }));
    const sha = hash.digest('hex');
    await file(key)
      .setMetadata({ metadata: { sha256: sha } })
      .catch(() => undefined);
    return sha;
  }

  async function settleExisting(key: string, info: ObjectInfo, sha256: string, onExisting: PutOptions['onExisting']): Promise<PutResult> {
    const existing = await storedSha256(key, info);
    if (existing !== sha256 && onExisting !== 'keep') throw new ObjectConflictError(key, existing, sha256);
    return { key, created: false, size: info.size, sha256: existing };
  }

  async function putIfAbsent(key: string, body: Buffer | Readable, opts: PutOptions): Promise<PutResult> {
    const known = Buffer.isBuffer(body) ? sha256Of(body) : opts.sha256Hex;
    if (Buffer.isBuffer(body) && opts.sha256Hex && opts.sha256Hex !== known) {
      throw new ObjectIntegrityError(`sha256 of ${key} is ${known}, not the promised ${opts.sha256Hex}`);
    }
    const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
    const hash = createHash('sha256');
    let size = 0;
    const hasher = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        hash.update(chunk);
        size += chunk.length;
        cb(null, chunk);
      },
    });

    // A stream is looked up first, so an object already there is not uploaded again for nothing.
    // A Buffer is uploaded at once: the create-only precondition is the check, and an object
    // already there is settled below (one request where the object is new, the usual case).
    const before = Buffer.isBuffer(body) ? null : await stat(key);
    if (before) {
      // Already there: learn the new body's hash without uploading anything.
      return settleExisting(key, before, await drainHash(source), opts.onExisting);
    }

    const target = file(key).createWriteStream({
      resumable: false,
      metadata: { contentType: opts.contentType, ...(known ? { metadata: { sha256: known } } : {}) },
      preconditionOpts: { ifGenerationMatch: 0 },
    });
    let generation: string | number | undefined;
    target.on('metadata', (meta: { generation?: string | number }) => (generation = meta.generation));
    try {
      await pipeline(source, hasher, target);
    } catch (err) {
      if (statusOf(err) !== 412) throw err;
      // Already there, or lost a race with a concurrent writer: compare with theirs.
      const sha = Buffer.isBuffer(body) && known ? known : hash.digest('hex');
      const info = await stat(key);
      if (!info) throw err;
      return settleExisting(key, info, sha, opts.onExisting);
    }
    const sha = hash.digest('hex');
    if (known && known !== sha) {
      await file(key)
        .delete({ ifGenerationMatch: Number(generation) })
        .catch(() => undefined);
      throw new ObjectIntegrityError(`sha256 of ${key} is ${sha}, not the promised ${known}`);
    }
    if (!known) {
      // Metadata generation 1 is the one the upload made; nobody else may have changed it.
      await file(key).setMetadata({ metadata: { sha256: sha } }, { ifMetagenerationMatch: 1 });
    }
    return { key, created: true, size, sha256: sha };
  }

  async function exists(keys: readonly string[]): Promise<Record<string, boolean>> {
    const out: Record<string, boolean> = {};
    const queue = [...keys];
    const worker = async () => {
      for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
        out[key] = (await file(key).exists())[0];
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, queue.length) }, worker));
    return out;
  }

  async function list(prefix: string): Promise<string[]> {
    const [files] = await bucket.getFiles({ prefix });
    return files.map((f) => f.name).sort();
  }

  async function signedReadUrl(key: string, opts: { expiresInSeconds: number; downloadName?: string }): Promise<string> {
    const seconds = opts.expiresInSeconds;
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_SIGNED_URL_SECONDS) {
      throw new RangeError(`expiresInSeconds must be an integer in 1…${MAX_SIGNED_URL_SECONDS}, got ${seconds}`);
    }
    const [url] = await signingFile(key).getSignedUrl({
      version: 'v4',
      action: 'read',
      expires: Date.now() + seconds * 1000,
      ...(opts.downloadName ? { responseDisposition: contentDisposition(opts.downloadName) } : {}),
    });
    return url;
  }

  async function signedUploadUrl(
    key: string,
    opts: { expiresInSeconds: number; contentType: string; maxBytes: number },
  ): Promise<{ url: string; headers: Record<string, string> }> {
    const seconds = opts.expiresInSeconds;
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_SIGNED_URL_SECONDS) {
      throw new RangeError(`expiresInSeconds must be an integer in 1…${MAX_SIGNED_URL_SECONDS}, got ${seconds}`);
    }
    const extensionHeaders = { 'x-goog-content-length-range': `0,${opts.maxBytes}`, 'x-goog-if-generation-match': '0' };
    const [url] = await signingFile(key).getSignedUrl({
      version: 'v4',
      action: 'write',
      contentType: opts.contentType,
      expires: Date.now() + seconds * 1000,
      extensionHeaders,
    });
    return { url, headers: { 'Content-Type': opts.contentType, ...extensionHeaders } };
  }

  async function deletePrefix(prefix: string): Promise<number> {
    const names = await list(prefix);
    await Promise.all(names.map((n) => file(n).delete({ ignoreNotFound: true })));
    return names.length;
  }

  async function moveAside(key: string, toKey: string): Promise<boolean> {
    try {
      await file(key).copy(file(toKey));
    } catch (err) {
      if (statusOf(err) === 404) return false;
      throw err;
    }
    await file(key).delete({ ignoreNotFound: true });
    return true;
  }

  return {
    bucket: config.STORAGE_BUCKET,
    putIfAbsent,
    moveAside,
    stat,
    exists,
    list,
    openRead: (key) => file(key).createReadStream(),
    signedReadUrl,
    signedUploadUrl,
    deletePrefix,
  };
}

/**
 * `purchases/<purchaseId>/certificates/<certificateNumber>.pdf`: the key of one certificate PDF.
 * Both parts must be path-safe (letters, digits, `-`, `_`, `.`); throws `RangeError` otherwise.
 */
export function certificateKey(purchaseId: number | string, certificateNumber: string): string {
  return `${purchasePrefix(purchaseId)}certificates/${safeSegment(certificateNumber)}.pdf`;
}

/**
 * Keys of a purchase's zips: `purchases/<id>/zips/payment-<paymentIntent>[-<tag>].zip` for the
 * per-payment zip and `purchases/<id>/zips/product-<productLineId>[-<tag>].zip` per product.
 * `tag` (path-safe) names the zip's content, e.g. a digest of its certificate numbers, so a
 * database reset that reuses purchase ids against the same bucket never meets an old zip.
 */
export const zipKeys = {
  payment: (purchaseId: number | string, paymentIntentId: string, tag?: string) =>
    `${purchasePrefix(purchaseId)}zips/payment-${safeSegment(paymentIntentId)}${tag ? `-${safeSegment(tag)}` : ''}.zip`,
  product: (purchaseId: number | string, productLineId: number | string, tag?: string) =>
    `${purchasePrefix(purchaseId)}zips/product-${safeSegment(String(productLineId))}${tag ? `-${safeSegment(tag)}` : ''}.zip`,
};

/** `purchases/<id>/`: every object of a purchase lives under it. */
export function purchasePrefix(purchaseId: number | string): string {
  return `purchases/${safeSegment(String(purchaseId))}/`;
}

/** SHA-256 of `bytes`, lowercase hex. */
export function sha256Of(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function safeSegment(value: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(value) || value.length > 200) {
    throw new RangeError(`not a safe storage key segment: ${JSON.stringify(value)}`);
  }
  return value;
}

function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

async function drainHash(source: Readable): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(source, new Writable({ write: (c: Buffer, _e, cb) => (hash.update(c), cb()) }));
  return hash.digest('hex');
}

let throwawayKey: string | undefined;

/** A per-process RSA key (made once, at the first call) for signing URLs against the emulator, which ignores signatures. */
function throwawaySigningCredentials(projectId: string): SigningCredentials {
  throwawayKey ??= generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  }).privateKey;
  return { client_email: `local-url-signer@${projectId}.iam.gserviceaccount.com`, private_key: throwawayKey };
}
