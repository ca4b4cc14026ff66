/**
 * The money steps of `npm run demo` (scripts/demo.ts), through the public API with the typed
 * client: the demo's products get a commission rate for the insurer that appointed the account and
 * a premium tax setting (taxed where the named insured is), and this month's provisional
 * bordereau of that insurer is asked for, read back as CSV (the XLSX saved beside it) and checked
 * by hand: each row's net premium is its gross premium less its commission, and the file's totals
 * per currency are the sums of its rows. Amounts in minor units except where the file has major.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { ok, type ApiClient } from '../clients/typescript';

type Say = (line: string) => void;
type Party = { id: number; name: string };

/** The commission the demo's products pay the insurer, basis points (15 %). */
export const DEMO_COMMISSION_BPS = 1500;

/**
 * Gives each product `DEMO_COMMISSION_BPS` commission to `insurer` from now on and taxes it as
 * its line of business where its named insured is. @throws {ApiError} when the API refuses.
 */
export async function setMoneyTerms(
  api: ApiClient,
  products: Array<{ id: number; lineOfBusiness: 'general_liability' | 'travel' }>,
  insurer: Party,
  say: Say,
): Promise<void> {
  for (const p of products) {
    const path = { id: String(p.id) };
    const rate = (
      await ok(
        api.POST('/api/v1/products/{id}/commission_rates', {
          params: { path, header: { 'Idempotency-Key': randomUUID() } },
          body: { party_id: insurer.id, rate_bps: DEMO_COMMISSION_BPS },
        }),
      )
    ).data;
    const tax = (
      await ok(
        api.PATCH('/api/v1/products/{id}/tax_settings', {
          params: { path },
          body: { line_of_business: p.lineOfBusiness, risk_location: 'named_insured' },
        }),
      )
    ).data;
    say(
      `  product ${p.id}: commission ${rate.rate_bps / 100} % to ${insurer.name}, premium tax as ${tax.line_of_business} where the named insured is`,
    );
  }
}

const MONEY = ['gross_premium', 'platform_fee', 'tax', 'commission', 'net_premium'] as const;

/** `-12.34` → `-1234`, from the text (no float); an empty cell is 0. */
const minor = (text: string | undefined) => {
  if (!text) return 0;
  const [whole = '0', cents = '0'] = text.replace('-', '').split('.');
  return (text.startsWith('-') ? -1 : 1) * (Number(whole) * 100 + Number(cents.padEnd(2, '0')));
};

/**
 * Asks for this month's provisional bordereau of `insurer`, waits (60 s) until it is ready, saves
 * its CSV and XLSX into `outputDir`, prints the rows of `purchaseIds` and checks that the file adds
 * up. @throws {Error} when it is not ready in time or does not add up.
 */
export async function provisionalBordereau(
  api: ApiClient,
  insurer: Party,
  purchaseIds: number[],
  dirs: { root: string; outputDir: string },
  say: Say,
): Promise<void> {
  const month = new Date().toISOString().slice(0, 7);
  const asked = (await ok(api.POST('/api/v1/reports/bordereaux', { body: { party_id: insurer.id, month } }))).data;
  say(`  bordereau ${asked.id} of ${insurer.name} for ${month} to date (provisional: ${asked.provisional}, up to ${asked.covers_until})`);
  const params = { path: { id: String(asked.id) } };
  const until = Date.now() + 60_000;
  let b = asked;
  while (b.status !== 'ready') {
    if (Date.now() > until) throw new Error(`bordereau ${asked.id} not ready within 60 s`);
    await new Promise((r) => setTimeout(r, 500));
    b = (await ok(api.GET('/api/v1/reports/bordereaux/{id}', { params }))).data;
  }
  const base = path.join(dirs.outputDir, `bordereau-${insurer.id}-${month}-provisional-${b.id}`);
  const csv = await (await fetch(b.files!.csv.download_url)).text();
  fs.writeFileSync(`${base}.csv`, csv);
  fs.writeFileSync(`${base}.xlsx`, Buffer.from(await (await fetch(b.files!.xlsx.download_url)).arrayBuffer()));
  const rows = parse(csv, { columns: true }) as Array<Record<string, string>>;
  say(`  ready: ${b.rows} rows in ${path.relative(dirs.root, base)}.csv and .xlsx`);
  // The demo's own rows: their certificate reference is COI-<purchase>-<item>.
  const mine = rows.filter((r) => purchaseIds.some((id) => r.certificate_reference?.startsWith(`COI-${id}-`)));
  say(`  ${['transaction_type', 'certificate_reference', 'currency', ...MONEY].join(' | ')}`);
  for (const r of mine) say(`  ${[r.transaction_type, r.certificate_reference, r.currency, ...MONEY.map((m) => r[m] || '—')].join(' | ')}`);
  // By hand: net = gross − commission on every row; the totals are the sums of the rows, per currency.
  for (const r of rows)
    if (minor(r.net_premium) !== minor(r.gross_premium) - minor(r.commission))
      throw new Error(
        `bordereau ${b.id}: row ${r.transaction_reference} has net ${r.net_premium} ≠ gross ${r.gross_premium} − commission ${r.commission}`,
      );
  const totals = (b.totals ?? {}) as Record<string, Record<string, number>>;
  for (const [currency, t] of Object.entries(totals))
    for (const m of MONEY) {
      const sum = rows.filter((r) => r.currency === currency).reduce((s, r) => s + minor(r[m]), 0);
      if ((t[m] ?? 0) !== sum) throw new Error(`bordereau ${b.id}: ${currency} total ${m} ${t[m]} ≠ the sum of its rows ${sum}`);
    }
  const sums = MONEY.map((m) => `${m} ${(mine.reduce((s, r) => s + minor(r[m]), 0) / 100).toFixed(2)}`).join(', ');
  say(`  the demo's rows add up to ${sums}; every row's net premium is gross premium less commission`);
  say(`  the file's totals are the sums of its ${rows.length} rows: ${JSON.stringify(totals)}`);
}
