/**
 * The proof-of-coverage QR image (src/storage/zips.ts `proofOfCoveragePng`): the picture qrcode's
 * own PNG renderer draws, written as grayscale; it reads back as the URL.
 */
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import jsQR from 'jsqr';
import { proofOfCoveragePng } from '../../src/storage/zips';

const URLS = [
  'http://127.0.0.1:3000/verify/POC-1',
  'https://coi.example.com/verify/POC-0123456789ABCDEF0123456789ABCDEF',
  `https://agency.example.org/verify/POC-${'A'.repeat(120)}`,
];

describe('proofOfCoveragePng', () => {
  test.each(URLS)(
    'when the image of %s is drawn, then it is 512×512 grayscale, the same pixels as qrcode renders, and reads back as the URL',
    async (url) => {
      const ours = await proofOfCoveragePng(url);
      const theirs = PNG.sync.read(await QRCode.toBuffer(url, { type: 'png', errorCorrectionLevel: 'M', margin: 4, width: 512 }));

      const decoded = PNG.sync.read(ours);
      expect([decoded.width, decoded.height]).toEqual([512, 512]);
      expect(ours[25]).toBe(0); // IHDR colour type: grayscale
      expect(Buffer.compare(decoded.data, theirs.data)).toBe(0);
      expect(jsQR(new Uint8ClampedArray(decoded.data), 512, 512)?.data).toBe(url);
    },
  );

  test('when the same URL is drawn twice, then the bytes are the same; another URL gives other bytes', async () => {
    const [a, b, c] = await Promise.all([proofOfCoveragePng(URLS[0]!), proofOfCoveragePng(URLS[0]!), proofOfCoveragePng(URLS[1]!)]);
    expect(a.equals(b)).toBe(true);
    expect(a.equals(c)).toBe(false);
  });
});
