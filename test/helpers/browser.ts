/**
 * Test helper for pages checked in a real browser (puppeteer-core driving Debian's Chromium):
 * launching it, and axe-core's accessibility check of a page as Chromium shows it.
 */
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import axe from 'axe-core';

/** Chromium headless, as the service's renderer runs it (CHROMIUM_PATH). */
export function launchBrowser(executablePath: string): Promise<Browser> {
  return puppeteer.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'], headless: true });
}

/** axe-core's violations on the page (WCAG 2.1 A and AA, and axe's best practices), as `id: help (nodes)` lines. */
export async function axeViolations(tab: Page): Promise<string[]> {
  await tab.evaluate(axe.source);
  const result = await tab.evaluate(async () => {
    const g = globalThis as unknown as { axe: typeof axe; document: unknown };
    return g.axe.run(g.document as Parameters<typeof axe.run>[0], {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
  });
  return result.violations.map(
    (v) => `${v.id} [${v.impact}]: ${v.help} (${v.nodes.length}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')})`,
  );
}
