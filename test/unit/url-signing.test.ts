/**
 * KeySigningAuth (src/storage/object-store.ts): signs a V4 string-to-sign exactly as
 * google-auth-library does with the same service-account key, from a key parsed once.
 */
import { generateKeyPairSync, createVerify } from 'node:crypto';
import { GoogleAuth } from 'google-auth-library';
import { KeySigningAuth } from '../../src/storage/object-store';

const { privateKey, publicKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const credentials = { client_email: 'signer@project.iam.gserviceaccount.com', private_key: privateKey };
const STRING_TO_SIGN = ['GOOG4-RSA-SHA256', '20261127T120000Z', '20261127/auto/storage/goog4_request', 'ab'.repeat(32)].join('\n');

describe('KeySigningAuth', () => {
  test('when a string to sign is signed, then the signature is the one google-auth-library makes, and it verifies with the public key', async () => {
    const ours = await new KeySigningAuth(credentials).sign(STRING_TO_SIGN);
    const theirs = await new GoogleAuth({ credentials }).sign(STRING_TO_SIGN);

    expect(ours).toBe(theirs);
    expect(createVerify('RSA-SHA256').update(STRING_TO_SIGN).verify(publicKey, ours, 'base64')).toBe(true);
  });

  test('when its credentials are read, then they are the key file’s client email (the V4 credential names it)', async () => {
    expect((await new KeySigningAuth(credentials).getCredentials()).client_email).toBe(credentials.client_email);
  });

  test('when the private key is not a key, then it throws at once', () => {
    expect(() => new KeySigningAuth({ ...credentials, private_key: 'not a key' })).toThrow();
  });
});
