/**
 * `npm run ops -- finance --month YYYY-MM [--account N] [--mode test|live]` (scripts/ops.ts
 * dispatches here): premium, fees, refunds, cancellations and net per agency, and premium per
 * insurer or MGA where products name one, for a month (UTC), month to date while it runs (issue 55
 * item 6). Agencies from src/reports/finance-repository.ts; parties from the bordereau ledger
 * (src/reports/repository.ts `activeParties` and `ledger`: the same rows and premium shares as
 * their bordereaux). Read-only; exit 0; a usage error throws UsageError (exit 1).
 */
import { loadConfigOrExit } from '../src/config';
import { createDb } from '../src/db/knex';
import { createAccountsRepository } from '../src/accounts/repository';
import { agencyMoney, type AgencyMoney } from '../src/reports/finance-repository';
import { createReportsRepository } from '../src/reports/repository';
import { formatMinor, monthRange } from '../src/reports/bordereau';
import { positiveInt, UsageError } from './cli';

/** One insurer's or MGA's premium from one agency in the range (minor units, signed; from its bordereau's ledger). */
export interface PartyMoney {
  root_account_id: number;
  agency: string;
  party_root_account_id: number;
  party: string;
  mode: 'live' | 'test';
  currency: string;
  /** Written: sales, renewals and endorsements (positive, or negative for premium given back). */
  premium: number;
  /** Returned by cancellations (≤ 0). */
  cancelled_premium: number;
  /** Returned by dashboard refunds (≤ 0). */
  refunded_premium: number;
  /** The platform fee's share on its items (signed). */
  fees: number;
  /** Premium due to it: premium + cancelled_premium + refunded_premium. */
  net_premium: number;
}

/** Runs `finance`; prints one table per view, or `{ month, from, to, month_to_date, agencies, parties }` with `json`. */
export async function finance(
  opts: { month?: string | undefined; account?: string | undefined; mode?: string | undefined },
  json: boolean,
): Promise<number> {
  if (!opts.month) throw new UsageError('--month YYYY-MM is required');
  const range = monthRange(opts.month);
  if (!range) throw new UsageError(`--month must be YYYY-MM, got "${opts.month}"`);
  const now = new Date();
  if (range.from.getTime() > now.getTime()) throw new UsageError(`--month ${opts.month} has not started yet`);
  if (opts.mode !== undefined && opts.mode !== 'test' && opts.mode !== 'live')
    throw new UsageError(`--mode must be test or live, got "${opts.mode}"`);
  const mode = opts.mode as 'live' | 'test' | undefined;
  const rootAccountId = opts.account === undefined ? undefined : positiveInt(opts.account, '--account');
  const monthToDate = range.to.getTime() > now.getTime();
  const to = monthToDate ? now : range.to;
  const config = loadConfigOrExit();
  const db = createDb(config);
  try {
    const accounts = createAccountsRepository(db);
    const names = new Map<number, string>();
    const nameOf = async (id: number) => {
      if (!names.has(id)) names.set(id, (await accounts.findById(id))?.name ?? 'unknown');
      return names.get(id)!;
    };
    const agencies: Array<AgencyMoney & { agency: string }> = [];
    for (const a of await agencyMoney(db, { from: range.from, to, rootAccountId, mode }))
      agencies.push({ ...a, agency: await nameOf(a.root_account_id) });
    const reports = createReportsRepository(db);
    const parties: PartyMoney[] = [];
    for (const key of await reports.activeParties({ from: range.from, to })) {
      if ((rootAccountId !== undefined && key.rootAccountId !== rootAccountId) || (mode !== undefined && key.mode !== mode)) continue;
      const byCurrency = new Map<string, PartyMoney>();
      for await (const batch of reports.ledger({ ...key, month: opts.month }, { from: range.from, to }))
        for (const e of batch) {
          const p =
            byCurrency.get(e.currency) ??
            byCurrency
              .set(e.currency, {
                root_account_id: key.rootAccountId,
                agency: await nameOf(key.rootAccountId),
                party_root_account_id: key.partyRootAccountId,
                party: await nameOf(key.partyRootAccountId),
                mode: key.mode,
                currency: e.currency,
                ...{ premium: 0, cancelled_premium: 0, refunded_premium: 0, fees: 0, net_premium: 0 },
              })
              .get(e.currency)!;
          if (e.type === 'cancellation') p.cancelled_premium += e.premiumMinor;
          else if (e.type === 'refund') p.refunded_premium += e.premiumMinor;
          else p.premium += e.premiumMinor;
          p.fees += e.platformFeeMinor;
          p.net_premium = p.premium + p.cancelled_premium + p.refunded_premium;
        }
      parties.push(...byCurrency.values());
    }
    const result = {
      month: opts.month,
      from: range.from.toISOString(),
      to: to.toISOString(),
      month_to_date: monthToDate,
      agencies,
      parties,
    };
    if (json) {
      console.log(JSON.stringify(result));
      return 0;
    }
    const scope = `${rootAccountId === undefined ? 'every agency' : `root account ${rootAccountId}`}${mode ? `, ${mode} mode` : ''}`;
    console.log(
      `finance ${opts.month}${monthToDate ? ` to date (until ${to.toISOString()})` : ''} (${scope}; amounts in major units, money out negative)`,
    );
    if (agencies.length === 0) console.log('nothing paid, changed or refunded in this range');
    else
      printColumns(agencies, [
        agencyColumn,
        ...modeAndCurrency,
        ['sales', (a) => String(a.sales)],
        ['premium', (a) => formatMinor(a.premium)],
        ['fees', (a) => formatMinor(a.fees)],
        ['tax', (a) => formatMinor(a.tax)],
        ['cancellations', (a) => String(a.cancellations)],
        ['cancelled', (a) => formatMinor(0 - a.cancelled_refunded)],
        ['refunds', (a) => String(a.refunds)],
        ['refunded', (a) => formatMinor(0 - a.refunded)],
        ['net', (a) => formatMinor(a.net)],
      ]);
    if (parties.length > 0) {
      console.log('premium by insurer or MGA (products that name one; as their bordereaux):');
      printColumns(parties, [
        agencyColumn,
        ['insurer/MGA', (p) => `${p.party} (${p.party_root_account_id})`],
        ...modeAndCurrency,
        ['premium', (p) => formatMinor(p.premium)],
        ['cancelled', (p) => formatMinor(p.cancelled_premium)],
        ['refunded', (p) => formatMinor(p.refunded_premium)],
        ['net premium', (p) => formatMinor(p.net_premium)],
        ['fees', (p) => formatMinor(p.fees)],
      ]);
    }
    return 0;
  } finally {
    await db.destroy();
  }
}

/** A column of a printed table: its head and its cell of a row. */
type Column<R> = readonly [head: string, cell: (row: R) => string];

/** The facts both tables begin with: a row of one agency, mode and currency. */
type AgencyModeCurrency = { agency: string; root_account_id: number; mode: string; currency: string };
/** The agency column: its name and root account id. */
const agencyColumn: Column<AgencyModeCurrency> = ['agency', (r) => `${r.agency} (${r.root_account_id})`];
/** The mode and currency (upper case) columns. */
const modeAndCurrency: Column<AgencyModeCurrency>[] = [
  ['mode', (r) => r.mode],
  ['cur', (r) => r.currency.toUpperCase()],
];

/** Prints `rows` under `columns`, two spaces apart: text left, figures right (a cell that starts with a digit or -digit). */
function printColumns<R>(rows: R[], columns: Column<R>[]): void {
  const table = [columns.map(([head]) => head), ...rows.map((r) => columns.map(([, cell]) => cell(r)))];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((cells) => cells[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (/^-?\d/.test(c) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  for (const cells of table) console.log(line(cells).trimEnd());
}
