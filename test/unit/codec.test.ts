/**
 * The payload codec (src/temporal/codec.ts) and its keys (TEMPORAL_PAYLOAD_KEYS): AES-256-GCM
 * round trip, the key id in the metadata, rotation, refusals, and the production guard on the
 * published development keys.
 */
import crypto from 'node:crypto';
import type { Payload } from '@temporalio/common';
import { defaultPayloadConverter } from '@temporalio/common';
import { AesGcmPayloadCodec, ENCODING, KEY_ID_METADATA, PayloadDecryptionError } from '../../src/temporal/codec';
import { ConfigError, loadConfig, parsePayloadKeys } from '../../src/config';
import { buyerEmailHash } from '../../src/purchases/buyer-email-hash';

const key = (id: string) => ({ id, key: crypto.randomBytes(32) });
const text = (b: Uint8Array | null | undefined) => Buffer.from(b ?? new Uint8Array()).toString('utf8');
const input = () => defaultPayloadConverter.toPayload({ buyerEmail: 'jordan@example.com', name: 'Jordan Lee' });

describe('AesGcmPayloadCodec', () => {
  test('when a payload is encoded and decoded, then it comes back identical and the encoded bytes hold none of it', async () => {
    const codec = new AesGcmPayloadCodec([key('k1')]);
    const original = input();
    const [encoded] = await codec.encode([original]);
    expect(text(encoded!.metadata!.encoding)).toBe(ENCODING);
    expect(text(encoded!.metadata![KEY_ID_METADATA])).toBe('k1');
    expect(text(encoded!.data)).not.toContain('jordan');
    expect(Buffer.from(encoded!.data!).toString('base64')).not.toContain(Buffer.from('jordan').toString('base64'));
    const [decoded] = await codec.decode([encoded!]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual({ buyerEmail: 'jordan@example.com', name: 'Jordan Lee' });
    expect(text(decoded!.metadata!.encoding)).toBe('json/plain');
  });

  test('when the same payload is encoded twice, then the ciphertexts differ (a fresh IV each time)', async () => {
    const codec = new AesGcmPayloadCodec([key('k1')]);
    const [a] = await codec.encode([input()]);
    const [b] = await codec.encode([input()]);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
  });

  test('when keys rotate, then new payloads use the new key and old ones still decode', async () => {
    const old = key('2026-01');
    const next = key('2026-11');
    const [before] = await new AesGcmPayloadCodec([old]).encode([input()]);
    const rotated = new AesGcmPayloadCodec([next, old]);
    const [after] = await rotated.encode([input()]);
    expect(text(after!.metadata![KEY_ID_METADATA])).toBe('2026-11');
    const decoded = await rotated.decode([before!, after!]);
    for (const p of decoded) expect(defaultPayloadConverter.fromPayload<{ name: string }>(p).name).toBe('Jordan Lee');
  });

  test('when a payload names a key that is not configured, then decoding refuses with the key id', async () => {
    const [encoded] = await new AesGcmPayloadCodec([key('gone')]).encode([input()]);
    await expect(new AesGcmPayloadCodec([key('other')]).decode([encoded!])).rejects.toThrow(
      new PayloadDecryptionError('payload encrypted with key "gone", which is not in TEMPORAL_PAYLOAD_KEYS'),
    );
  });

  test('when a ciphertext byte or the key is changed, then decoding refuses (GCM tag)', async () => {
    const k = key('k1');
    const [encoded] = await new AesGcmPayloadCodec([k]).encode([input()]);
    const tampered: Payload = { ...encoded!, data: Uint8Array.from(encoded!.data!, (b, i) => (i === 20 ? b ^ 1 : b)) };
    await expect(new AesGcmPayloadCodec([k]).decode([tampered])).rejects.toBeInstanceOf(PayloadDecryptionError);
    await expect(new AesGcmPayloadCodec([{ id: 'k1', key: crypto.randomBytes(32) }]).decode([encoded!])).rejects.toBeInstanceOf(
      PayloadDecryptionError,
    );
  });

  test('when a payload was never encrypted (an older history), then decoding passes it through', async () => {
    const plain = input();
    expect(await new AesGcmPayloadCodec([key('k1')]).decode([plain])).toEqual([plain]);
  });
});

describe('TEMPORAL_PAYLOAD_KEYS', () => {
  const b64 = crypto.randomBytes(32).toString('base64');
  test('when two keys are given, then the first encrypts and both are parsed', () => {
    const keys = parsePayloadKeys(`new:${b64}, old:${crypto.randomBytes(32).toString('base64')}`);
    expect(keys.map((k) => k.id)).toEqual(['new', 'old']);
    expect(keys[0]!.key.equals(Buffer.from(b64, 'base64'))).toBe(true);
  });

  test.each([
    ['short key', `k:${crypto.randomBytes(16).toString('base64')}`, 'must be 32 bytes'],
    ['no id', b64, 'expected id:base64key pairs'],
    ['bad id', `a b:${b64}`, 'must be 1-64 letters'],
    ['repeated id', `k:${b64},k:${b64}`, 'unique'],
    ['empty', ' , ', 'at least one key'],
  ])('when the value has a %s, then configuration fails naming the variable', (_case, value, message) => {
    expect(() => loadConfig({ TEMPORAL_PAYLOAD_KEYS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ TEMPORAL_PAYLOAD_KEYS: value })).toThrow(
      new RegExp(`^Invalid configuration: TEMPORAL_PAYLOAD_KEYS: .*${message}`),
    );
  });

  test('when NODE_ENV is production, then the published development keys are refused and own keys accepted', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/TEMPORAL_PAYLOAD_KEYS: set your own key in production/);
    expect(() => loadConfig({ NODE_ENV: 'production', TEMPORAL_PAYLOAD_KEYS: `prod-1:${b64}` })).toThrow(
      /BUYER_EMAIL_HASH_KEY: set your own key in production/,
    );
    expect(() =>
      loadConfig({ NODE_ENV: 'production', TEMPORAL_PAYLOAD_KEYS: `prod-1:${b64}`, BUYER_EMAIL_HASH_KEY: 'a-long-random-production-key' }),
    ).toThrow(/WITHDRAWAL_LINK_KEY: set your own key in production/);
    expect(() => loadConfig({ WITHDRAWAL_LINK_KEY: 'too-short' })).toThrow(/^Invalid configuration: WITHDRAWAL_LINK_KEY: /);
    const production = {
      NODE_ENV: 'production',
      TEMPORAL_PAYLOAD_KEYS: `prod-1:${b64}`,
      BUYER_EMAIL_HASH_KEY: 'a-long-random-production-key',
      WITHDRAWAL_LINK_KEY: 'a-long-random-production-withdrawal-key',
    } as const;
    expect(() => loadConfig(production)).toThrow(/CERTIFICATE_SIGNING_KEYS: set your own key in production/);
    expect(() => loadConfig({ CERTIFICATE_SIGNING_KEYS: 'cert-1:c2hvcnQ=' })).toThrow(
      /CERTIFICATE_SIGNING_KEYS: key "cert-1" must be a 32-byte/,
    );
    const c = loadConfig({ ...production, CERTIFICATE_SIGNING_KEYS: `cert-2:${b64},cert-1:${b64}` });
    expect(c.CERTIFICATE_SIGNING_KEYS.map((k) => k.kid)).toEqual(['cert-2', 'cert-1']);
    expect(c.TEMPORAL_PAYLOAD_KEYS[0]!.id).toBe('prod-1');
  });
});

describe('buyerEmailHash', () => {
  test('when the same address differs only in case and spaces, then the hash is the same; another key or address gives another hash', () => {
    const h = buyerEmailHash('key-of-sixteen-chars', 'Jordan@Example.com ');
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(buyerEmailHash('key-of-sixteen-chars', ' jordan@example.com')).toBe(h);
    expect(buyerEmailHash('another-key-sixteen', 'jordan@example.com')).not.toBe(h);
    expect(buyerEmailHash('key-of-sixteen-chars', 'jordan2@example.com')).not.toBe(h);
    expect(h).toBe(crypto.createHmac('sha256', 'key-of-sixteen-chars').update('jordan@example.com').digest('hex'));
  });
});
