/**
 * The typed client's webhook verifier (clients/typescript `constructEvent`) against the service's
 * own signer (src/events/signing.ts, what each delivery's `Signature` header is made with): a
 * delivery verifies from the raw string or bytes and comes back as the typed event; a changed
 * body, another secret, a malformed or missing header, a parsed body or a signature older than
 * the tolerance (300 s, Stripe's) is refused with WebhookSignatureError. `generateTestHeader`
 * signs as the service does, and Stripe's own library verifies it (the scheme is Stripe's).
 */
import Stripe from 'stripe';
import {
  constructEvent,
  DEFAULT_TOLERANCE,
  generateTestHeader,
  SIGNATURE_HEADER,
  WebhookSignatureError,
  type WebhookEvent,
} from '../../clients/typescript';
import { newEndpointSecret, signatureHeader, SIGNATURE_HEADER as SERVICE_SIGNATURE_HEADER } from '../../src/events/signing';
import { exampleEvent } from '../../src/events/schemas';

const secret = newEndpointSecret();
const now = Math.floor(Date.now() / 1000);
const body = JSON.stringify(exampleEvent('certificates.issued'));
const header = signatureHeader(secret, body, now);

/** The error constructEvent throws for these arguments (or a failure when it returns). */
function refusal(...args: Parameters<typeof constructEvent>): WebhookSignatureError {
  try {
    constructEvent(...args);
  } catch (err) {
    if (err instanceof WebhookSignatureError) return err;
    throw err;
  }
  throw new Error('constructEvent accepted it');
}

describe('constructEvent', () => {
  test('when a delivery signed by the service is verified from its raw body, then the typed event comes back', () => {
    expect(SIGNATURE_HEADER).toBe(SERVICE_SIGNATURE_HEADER);
    const event: WebhookEvent = constructEvent(body, header, secret);
    expect(event).toEqual(JSON.parse(body));
    // The type narrows on `type` (checked when this file typechecks, and here at runtime).
    if (event.type !== 'certificates.issued') throw new Error(`unexpected ${event.type}`);
    expect(event.data.object.certificates[0]!.certificate_number).toBe('COI-42-1-1-3FA9C2B71D');
  });

  test('when the body comes as bytes (Buffer or Uint8Array) and the header as an array, then it verifies the same', () => {
    expect(constructEvent(Buffer.from(body), header, secret).id).toBe('evt_1f3e0c9a7b2d4e6f8a0b1c2d3e4f5a6b');
    expect(constructEvent(new TextEncoder().encode(body), [header], secret).type).toBe('certificates.issued');
    // Bytes are signed as bytes: a body with non-ASCII text verifies from its UTF-8.
    const text = JSON.stringify({ ...exampleEvent('purchase.failed'), note: 'Zoë’s café' });
    expect(constructEvent(Buffer.from(text, 'utf8'), signatureHeader(secret, text, now), secret).type).toBe('purchase.failed');
  });

  test('when one of several v1 signatures matches (a secret being rolled), then it verifies', () => {
    const other = signatureHeader(newEndpointSecret(), body, now).split(',')[1];
    expect(constructEvent(body, `${header.split(',')[0]},${other},${header.split(',')[1]}`, secret).type).toBe('certificates.issued');
  });

  test('when the body was changed, re-serialised or parsed, then it is refused', () => {
    expect(refusal(body.replace('"livemode":false', '"livemode":true'), header, secret).message).toMatch(/No signature matches/);
    expect(refusal(JSON.stringify(JSON.parse(body), null, 2), header, secret).message).toMatch(/No signature matches/);
    expect(refusal(JSON.parse(body) as never, header, secret).message).toMatch(/raw body/);
  });

  test('when another secret, no secret, no header or a malformed header is given, then it is refused', () => {
    expect(refusal(body, header, newEndpointSecret()).message).toMatch(/No signature matches/);
    expect(refusal(body, header, '').message).toMatch(/secret/);
    expect(refusal(body, undefined, secret).message).toMatch(/No Signature header/);
    expect(refusal(body, '', secret).message).toMatch(/No Signature header/);
    expect(refusal(body, `v1=${header.split('v1=')[1]}`, secret).message).toMatch(/Malformed/);
    expect(refusal(body, `t=${now}`, secret).message).toMatch(/Malformed/);
    expect(refusal(body, `t=${now},v1=abc`, secret).message).toMatch(/No signature matches/);
    expect(refusal(body, `t=${now},v0=${header.split('v1=')[1]}`, secret).message).toMatch(/Malformed/);
  });

  test('when the signature is older than the tolerance, then it is refused; a tolerance of 0 skips the check', () => {
    expect(DEFAULT_TOLERANCE).toBe(300);
    const old = signatureHeader(secret, body, now - 301);
    expect(refusal(body, old, secret).message).toMatch(/tolerance/);
    expect(constructEvent(body, signatureHeader(secret, body, now - 299), secret).type).toBe('certificates.issued');
    expect(refusal(body, signatureHeader(secret, body, now - 61), secret, { tolerance: 60 }).message).toMatch(/tolerance/);
    expect(constructEvent(body, old, secret, { tolerance: 0 }).type).toBe('certificates.issued');
    expect(constructEvent(body, old, secret, { now: now - 100 }).type).toBe('certificates.issued');
  });

  test('when generateTestHeader signs a body, then it is the service’s header, and Stripe’s library verifies it', () => {
    expect(generateTestHeader(body, secret, now)).toBe(signatureHeader(secret, body, now));
    const stripe = new Stripe('sk_test_unused');
    const verified = stripe.webhooks.constructEvent(body, generateTestHeader(body, secret), secret);
    expect(verified.id).toBe('evt_1f3e0c9a7b2d4e6f8a0b1c2d3e4f5a6b');
    expect(constructEvent(body, generateTestHeader(Buffer.from(body), secret), secret).id).toBe(verified.id);
  });
});
