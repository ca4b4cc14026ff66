/**
 * Temporal payload codec that encrypts every payload with AES-256-GCM before it leaves the
 * process (workflow inputs and results, activity arguments and results, signals, updates,
 * queries, memos and user metadata), so workflow histories on the Temporal server hold no
 * personal data in clear (buyer names, emails, addresses in certificate data).
 *
 * Encoded payload: metadata `encoding: binary/encrypted`, `encryption-key-id: <id>`; data =
 * 12-byte random IV ‖ ciphertext ‖ 16-byte GCM tag of the original payload serialized as a
 * `temporal.api.common.v1.Payload` protobuf (its own metadata included). The shape follows
 * Temporal's TypeScript encryption sample, so the CLI and UI codec-server conventions apply.
 *
 * Decoding passes through payloads that are not encrypted (histories recorded before the codec
 * and search attributes), and decrypts with the key named in the metadata: rotation = put a new
 * key first in TEMPORAL_PAYLOAD_KEYS and keep the old ones until nothing retained needs them.
 * Errors: decoding a payload whose key id is not configured, or whose tag does not verify,
 * throws `PayloadDecryptionError` (the workflow task then fails and retries; nothing is lost).
 */
import crypto from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { PayloadKey } from '../config';

export const ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A payload that cannot be decrypted with the configured keys. */
export class PayloadDecryptionError extends Error {
  override name = 'PayloadDecryptionError';
}

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array | null | undefined): string => (b ? Buffer.from(b).toString('utf8') : '');

/** True when `payload` was produced by this codec. */
export function isEncrypted(payload: Payload): boolean {
  return text(payload.metadata?.encoding) === ENCODING;
}

export class AesGcmPayloadCodec implements PayloadCodec {
  private readonly currentId: string;
  /**
   * The keys as KeyObjects, made once: a raw Buffer handed to createCipheriv is checked and
   * wrapped again on every call, about three times the cost of encrypting a small payload.
   */
  private readonly currentKey: crypto.KeyObject;
  private readonly byId: Map<string, crypto.KeyObject>;

  /** `keys[0]` encrypts; every key decrypts payloads carrying its id. Throws Error without keys. */
  constructor(keys: readonly PayloadKey[]) {
    if (keys.length === 0) throw new Error('AesGcmPayloadCodec needs at least one key');
    const objects = keys.map((k) => crypto.createSecretKey(k.key));
    this.byId = new Map(keys.map((k, i) => [k.id, objects[i]!]));
    this.currentId = keys[0]!.id;
    this.currentKey = objects[0]!;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const iv = crypto.randomBytes(IV_BYTES);
      const cipher = crypto.createCipheriv('aes-256-gcm', this.currentKey, iv);
      const plain = temporal.api.common.v1.Payload.encode(payload).finish();
      const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return { metadata: { encoding: utf8(ENCODING), [KEY_ID_METADATA]: utf8(this.currentId) }, data };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (!isEncrypted(payload)) return payload;
      const keyId = text(payload.metadata?.[KEY_ID_METADATA]);
      const key = this.byId.get(keyId);
      if (!key) throw new PayloadDecryptionError(`payload encrypted with key "${keyId}", which is not in TEMPORAL_PAYLOAD_KEYS`);
      const data = Buffer.from(payload.data ?? new Uint8Array());
      if (data.length < IV_BYTES + TAG_BYTES) throw new PayloadDecryptionError('encrypted payload is too short');
      const decipher = crypto.createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      let plain: Buffer;
      try {
        plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
      } catch {
        throw new PayloadDecryptionError(`encrypted payload does not verify with key "${keyId}"`);
      }
      return temporal.api.common.v1.Payload.decode(plain) as Payload;
    });
  }
}

/**
 * The data converter every Temporal client and worker of the service uses: payloads encrypted by
 * this codec, and failures' messages and stack traces encoded into payloads first
 * (./failure-converter.ts), so they are encrypted too.
 */
export function dataConverterFor(keys: readonly PayloadKey[]): { payloadCodecs: PayloadCodec[]; failureConverterPath: string } {
  return { payloadCodecs: [new AesGcmPayloadCodec(keys)], failureConverterPath: require.resolve('./failure-converter') };
}
