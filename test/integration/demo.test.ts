/**
 * `npm run demo` (issue 8 "Demo") against this suite's own API and worker: the script runs as a
 * separate process through the public HTTP API only (DEMO_* variables point it here instead of
 * the `npm run dev` stack), and must finish with every PDF and zip on disk, and this month's
 * provisional bordereau (CSV and XLSX) whose premium, Massachusetts tax, 15 % commission and net
 * premium add up by hand; a failing step must exit non-zero and name the step.
 */
import fs from 'node:fs';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import os from 'node:os';
import path from 'node:path';
import type { TestApp } from '../helpers/app';
import { useAgencyStack } from '../helpers/stack';
import type { Agency } from '../helpers/certificates';
import { createRootAccountOfKind } from '../helpers/fixtures';
import { demoScriptEnv, runScript } from '../helpers/run';
import { readZip } from '../helpers/documents';

jest.setTimeout(240_000);

const stack = useAgencyStack();
let app: TestApp;
let agency: Agency;
let outputDir: string;

beforeAll(async () => {
  ({ app, agency } = stack);
  // An insurer that appointed the agency, as the seed's does: the demo's products name it, and it asks for its bordereau.
  await createRootAccountOfKind(app.container, 'insurer', 'Demo Test Mutual', [agency]);
  outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'demo-output-'));
});

afterAll(async () => {
  fs.rmSync(outputDir, { recursive: true, force: true });
});

async function demoEnv(overrides: Record<string, string> = {}) {
  return { ...(await demoScriptEnv(app, agency, { outputDir })), ...overrides };
}

test('when the demo runs, then it creates, sells and pays two purchases, downloads 3 + 2 PDFs and their zips, adds the venue as a holder and moves a day', async () => {
  const run = await runScript('scripts/demo.ts', [], await demoEnv());
  expect(run.stderr).not.toContain('✘');
  expect(run.code).toBe(0);
  for (const expected of [
    '▶ event receiver',
    '▶ create products and a bundle',
    '▶ load the catalog',
    '▶ test payment: 3-day event',
    '▶ certificates: 2-trip excess',
    '▶ add the venue as a certificate holder of the 3-day event',
    '▶ move the first day of the 3-day event',
    '▶ cancel the last day of the 3-day event',
    '▶ a claim on the 3-day event, paid',
    '▶ this month’s provisional bordereau',
    '▶ events received',
    '✔ demo finished',
  ]) {
    expect(run.stdout).toContain(expected);
  }
  // The receiver heard every step of both purchases, each signature verified with the endpoint's secret.
  const eventLines = run.stdout.split('\n').filter((l) => /^\s+(purchase|certificates|certificate_holder)\.\w+\s+evt_/.test(l));
  for (const type of ['purchase.checkout_created', 'purchase.paid', 'certificates.issued']) {
    expect(eventLines.filter((l) => l.trim().startsWith(type))).toHaveLength(2);
  }
  expect(eventLines.every((l) => l.endsWith('signature verified'))).toBe(true);
  // The venue added as a holder of the 3-day event: both endorsement marks, its description, one certificate per day, issued.
  const eventPurchaseId = Number(/3-day event: purchase (\d+)/.exec(run.stdout)![1]);
  const venue = await app.container.db('certificate_holders').where({ purchase_id: eventPurchaseId, source: 'api' }).first();
  expect(venue).toMatchObject({ name: 'Demo Hall', additional_insured: true, waiver_of_subrogation: true, removed_at: null });
  expect(venue.description_of_operations).toMatch(
    /^Wedding or reception of Jordan Lee at Demo Hall, 400 N Lake Shore Dr, Chicago, IL\.\nDemo Hall is an additional insured/,
  );
  expect(run.stdout).toMatch(
    new RegExp(`holder ${venue.id} \\(Demo Hall, additional insured, waiver of subrogation\\): 3 certificates issuing, issuing, issuing`),
  );
  const venueIssued = /issued to Demo Hall: (.+)/.exec(run.stdout)![1]!.split(', ');
  expect(venueIssued).toHaveLength(3);
  const venueRows = await app.container
    .db('certificates')
    .where({ certificate_holder_id: venue.id })
    .whereIn('certificate_number', venueIssued);
  expect(venueRows).toHaveLength(3);
  expect(eventLines.filter((l) => l.trim().startsWith('certificate_holder.added'))).toEqual([
    expect.stringContaining(`purchase ${eventPurchaseId}`),
  ]);
  // The first day moved: its two certificates (the answered holder's and the venue's) reissued as -R2, stored; the old ones superseded.
  expect(run.stdout).toMatch(
    /preview eq_[0-9a-f]{24}: \d{4}-\d{2}-\d{2} → \d{4}-\d{2}-\d{2}, premium difference 0 usd; reissues COI-\S+, COI-\S+/,
  );
  const reissued = [...run.stdout.matchAll(/reissued (COI-\S+) → (COI-\S+)/g)].map((m) => ({ from: m[1]!, to: m[2]! }));
  expect(reissued).toHaveLength(2);
  for (const r of reissued) {
    expect(r.to).toBe(`${r.from}-R2`);
    const old = await app.container.db('certificates').where({ certificate_number: r.from }).first();
    const next = await app.container.db('certificates').where({ certificate_number: r.to }).first();
    expect(old.superseded_at).not.toBeNull();
    expect(old.superseded_by_id).toBe(next.id);
    expect(next).toMatchObject({ revision: 2, superseded_at: null, voided_at: null });
    expect(next.storage_key).toEqual(expect.any(String));
  }
  expect(reissued.filter((r) => venueIssued.includes(r.from))).toHaveLength(1);
  expect(eventLines.filter((l) => l.trim().startsWith('certificates.reissued'))).toHaveLength(1);
  const superseded = new RegExp(`(COI-\\S+) on its verification page: superseded \\(by (COI-\\S+)\\)  (\\S+)`).exec(run.stdout)!;
  expect(reissued).toContainEqual({ from: superseded[1], to: superseded[2] });
  // The link carries the certificate's signed proof (issue 50, item 3).
  expect(superseded[3]).toMatch(new RegExp(`/verify/${superseded[1]}\\?proof=[\\w-]+\\.[\\w-]+\\.[\\w-]+$`));
  // The venue's current certificates downloaded: the moved day's new version and the two others.
  const venuePdfs = fs.readdirSync(path.join(outputDir, `purchase-${eventPurchaseId}`, 'venue')).sort();
  expect(venuePdfs).toEqual(venueIssued.map((n) => `${reissued.find((r) => r.from === n)?.to ?? n}.pdf`).sort());
  for (const pdf of venuePdfs)
    expect(
      fs
        .readFileSync(path.join(outputDir, `purchase-${eventPurchaseId}`, 'venue', pdf))
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
  // The cancellation: previewed, carried out, and the day's certificate voided on its verification page.
  expect(run.stdout).toMatch(/preview cq_[0-9a-f]{24}: free_look, \d+ usd back/);
  expect(run.stdout).toMatch(/completed: refund re_\w+ of \d+ usd minor units/);
  expect(run.stdout).toMatch(/COI-\S+ on its verification page: voided \(voided at \d{4}-/);
  // The claim on the event's first day, moved to paid by the test helper (issue 51, item 6).
  const claimId = Number(/claim (\d+) on the 3-day event: paid/.exec(run.stdout)![1]);
  const claim = await app.container.db('claims').where({ id: claimId }).first();
  expect([claim.purchase_id, claim.status, Number(claim.approved_amount_minor)]).toEqual([eventPurchaseId, 'paid', 90_000]);
  // The demo removed its endpoint.
  const rootId = (await app.container.db('root_accounts').where({ slug: agency.slug }).first('id')).id;
  expect(await app.container.db('webhook_endpoints').where({ root_account_id: rootId }).whereNull('deleted_at')).toEqual([]);
  const [bordereau, workbook, ...others] = fs.readdirSync(outputDir).sort();
  // This month's provisional bordereau of the insurer the products name: a sale row per purchase and the cancelled day.
  expect(bordereau).toMatch(/^bordereau-\d+-\d{4}-\d{2}-provisional-\d+\.csv$/);
  expect(workbook).toBe(bordereau!.replace(/\.csv$/, '.xlsx'));
  const rows = parse(fs.readFileSync(path.join(outputDir, bordereau!), 'utf8'), { columns: true }) as Record<string, string>[];
  expect(rows.map((r) => r.transaction_type).sort()).toEqual(['cancellation', 'new_business', 'new_business']);
  // Added up by hand: Massachusetts surplus-lines tax 4 % of the premium (half up), 15 % commission
  // rounded down, net = gross − commission; the cancelled day (free look) gives back its premium,
  // its share of the tax and the commission on it.
  const minor = (text: string) => Math.round(Number(text) * 100);
  for (const r of rows) {
    const gross = minor(r.gross_premium!);
    const sign = Math.sign(gross);
    expect(r.insured_region).toBe('MA');
    expect(minor(r.commission!)).toBe(sign * Math.floor((Math.abs(gross) * 1500) / 10_000));
    expect(minor(r.net_premium!)).toBe(gross - minor(r.commission!));
    if (r.transaction_type === 'new_business') expect(minor(r.tax!)).toBe(Math.round((gross * 400) / 10_000));
    else expect(minor(r.tax!)).toBeLessThan(0);
  }
  expect(run.stdout).toContain("every row's net premium is gross premium less commission");
  expect(run.stdout).toMatch(/the file's totals are the sums of its 3 rows/);
  // The XLSX beside it: the same rows as numbers.
  const book = new ExcelJS.Workbook();
  await book.xlsx.load(fs.readFileSync(path.join(outputDir, workbook!)) as never);
  const sheet = book.getWorksheet('Bordereau')!;
  const header = (sheet.getRow(1).values as unknown[]).slice(1);
  const cell = (row: number, name: string) => sheet.getRow(row).getCell(header.indexOf(name) + 1).value;
  rows.forEach((r, i) => {
    for (const column of ['gross_premium', 'tax', 'commission', 'net_premium'])
      expect(Math.round((cell(i + 2, column) as number) * 100)).toBe(minor(r[column]!));
  });
  const purchases = others;
  expect(purchases).toHaveLength(2);
  const pdfCounts = purchases.map((p) => fs.readdirSync(path.join(outputDir, p)).filter((f) => f.endsWith('.pdf')).length);
  expect(pdfCounts.sort()).toEqual([2, 3]);
  for (const p of purchases) {
    const dir = path.join(outputDir, p);
    const pdfs = fs.readdirSync(dir).filter((f) => f.endsWith('.pdf'));
    for (const pdf of pdfs) expect(fs.readFileSync(path.join(dir, pdf)).subarray(0, 5).toString()).toBe('%PDF-');
    const all = await readZip(fs.readFileSync(path.join(dir, 'all-certificates.zip')));
    expect(
      [...all.keys()]
        .filter((k) => k.endsWith('.pdf'))
        .map((k) => path.basename(k))
        .sort(),
    ).toEqual(pdfs.sort());
    expect(run.stdout).toContain(`/workflows/${p}`);
  }
  const bundles = await app.container
    .db('bundles')
    .where({ root_seller_db_id: (await app.container.db('root_accounts').where({ slug: agency.slug }).first('id')).id });
  expect(bundles).toHaveLength(1);
});

test('when a step fails (a key the gateway refuses), then the demo exits 1 and names the step', async () => {
  const run = await runScript('scripts/demo.ts', [], await demoEnv({ DEMO_API_KEY: 'ik_test_not_a_real_key' }));
  expect(run.code).toBe(1);
  expect(run.stderr).toContain('✘ demo failed at step "event receiver"');
  expect(run.stderr).toContain('403');
});
