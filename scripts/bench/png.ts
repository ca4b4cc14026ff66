/**
 * Turns an SVG document into a PNG by screenshotting it in Chromium (puppeteer-core, Debian's
 * binary and the worker's `CHROMIUM_ARGS`): no native addon and no charting dependency. Used
 * for bench/results/latest-latency.png.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { CHROMIUM_ARGS } from '../../src/pdf/browser-pool';

/**
 * Renders `svg` (its size `width` x `height` CSS px) at `scale` device pixels per px into PNG
 * bytes, with the Chromium at `executablePath`. Throws when Chromium cannot start or the
 * screenshot fails; the browser and its temporary profile are removed in every case.
 */
export async function svgToPng(svg: string, size: { width: number; height: number }, executablePath: string, scale = 1): Promise<Buffer> {
  const userDataDir = await mkdtemp(path.join(tmpdir(), 'bench-chart-chromium-'));
  try {
    const browser = await puppeteer.launch({ executablePath, headless: true, pipe: true, userDataDir, args: [...CHROMIUM_ARGS] });
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: size.width, height: size.height, deviceScaleFactor: scale });
      await page.setContent(`<!doctype html><html><body style="margin:0;background:#fff">${svg}</body></html>`, { waitUntil: 'load' });
      const png = await page.screenshot({ type: 'png', clip: { x: 0, y: 0, width: size.width, height: size.height } });
      return Buffer.from(png);
    } finally {
      await browser.close();
    }
  } finally {
    await rm(userDataDir, { recursive: true, force: true });
  }
}
