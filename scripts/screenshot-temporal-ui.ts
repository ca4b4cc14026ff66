/**
 * Screenshots the Temporal UI's workflow list filtered the way an operator filters one agency's
 * purchases: `AgencyId='<id>' AND \`Mode\`='<mode>'` (docs/screenshots/temporal-ui-agency-mode.png).
 *
 *   npx tsx scripts/screenshot-temporal-ui.ts [--ui http://127.0.0.1:8233] [--namespace default]
 *       [--agency <root account id>] [--mode test|live] [--out docs/screenshots/temporal-ui-agency-mode.png]
 *
 * Expects the dev stack (`npm run dev`, whose Temporal dev server serves the UI on :8233) with
 * some purchases (`npm run demo`). Without `--agency` it takes the agency of the newest purchase
 * run in the namespace. Uses Debian's Chromium through puppeteer-core (CHROMIUM_PATH). Exits 1
 * when the list shows no workflow for the filter.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import puppeteer from 'puppeteer-core';
import { loadConfigOrExit } from '../src/config';
import { createTemporalClient } from '../src/temporal/client';
import { CHROMIUM_ARGS } from '../src/pdf/browser-pool';
import { AGENCY_ID } from '../workflows/search-attributes';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      ui: { type: 'string', default: 'http://127.0.0.1:8233' },
      namespace: { type: 'string' },
      agency: { type: 'string' },
      mode: { type: 'string', default: 'test' },
      out: { type: 'string', default: 'docs/screenshots/temporal-ui-agency-mode.png' },
    },
  });
  const config = loadConfigOrExit();
  const namespace = values.namespace ?? config.TEMPORAL_NAMESPACE;
  let agency = values.agency;
  if (!agency) {
    const temporal = createTemporalClient({ ...config, TEMPORAL_NAMESPACE: namespace });
    try {
      for await (const w of temporal.client.workflow.list({
        query: `WorkflowType='purchaseWorkflow' AND AgencyId IS NOT NULL AND \`Mode\`='${values.mode}'`,
      })) {
        agency = w.typedSearchAttributes.get(AGENCY_ID);
        break;
      }
    } finally {
      await temporal.close();
    }
  }
  if (!agency) {
    console.error(`no purchase run with AgencyId in namespace ${namespace}: run npm run demo first`);
    return 1;
  }
  const query = `AgencyId='${agency}' AND \`Mode\`='${values.mode}'`;
  const url = `${values.ui}/namespaces/${encodeURIComponent(namespace)}/workflows?query=${encodeURIComponent(query)}`;
  const browser = await puppeteer.launch({ executablePath: config.CHROMIUM_PATH, headless: true, pipe: true, args: [...CHROMIUM_ARGS] });
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1600, height: 900, deviceScaleFactor: 1 });
    await page.goto(url, { waitUntil: 'networkidle0', timeout: 60_000 });
    // The list renders one link per workflow id; wait for the purchase rows.
    // (Browser-side code as strings: this project compiles without the DOM library.)
    await page.waitForFunction(`[...document.querySelectorAll('a')].some((a) => /purchase-\\d+/.test(a.textContent || ''))`, {
      timeout: 30_000,
    });
    const rows = Number(
      await page.evaluate(
        `[...document.querySelectorAll('a')].filter((a) => /^(purchase|certificates)-\\d+$/.test((a.textContent || '').trim())).length`,
      ),
    );
    fs.mkdirSync(path.dirname(values.out), { recursive: true });
    await page.screenshot({ path: values.out as `${string}.png`, fullPage: false });
    console.log(`${values.out}: ${url} (${rows} workflow links for ${query})`);
    return rows > 0 ? 0 : 1;
  } finally {
    await browser.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  },
);
