/**
 * `npm run ops -- coverage [--account N] [--from YYYY-MM-DD --to YYYY-MM-DD] [--mode test|live]`
 * (scripts/ops.ts dispatches here): policies (sold purchases) and covered units in force,
 * cancelled and refunded, and certificates voided, by agency, mode and day (issue 55 item 1).
 * Read through the purchases' coverage query (src/purchases/coverage-repository.ts, which says what a
 * day and each column mean) and the certificates' (src/certificates/coverage-repository.ts).
 * Without a range: today (UTC) and the 30 days after it; a range is at most 366 days. Read-only;
 * exit 0; a usage error throws UsageError (exit 1).
 */
import { loadConfigOrExit } from '../src/config';
import { createDb } from '../src/db/knex';
import { createAccountsRepository } from '../src/accounts/repository';
import { coverageByAgencyAndDay, type CoverageDay } from '../src/purchases/coverage-repository';
import { voidedCertificatesByAgencyAndDay } from '../src/certificates/coverage-repository';
import { positiveInt, UsageError } from './cli';

const DAY_MS = 86_400_000;

/** `value` as a calendar day YYYY-MM-DD (UsageError naming `what` otherwise). */
function isoDay(value: string, what: string): string {
  const d = /^\d{4}-\d{2}-\d{2}$/.test(value) ? new Date(`${value}T00:00:00Z`) : undefined;
  if (!d || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value)
    throw new UsageError(`${what} must be a day YYYY-MM-DD, got "${value}"`);
  return value;
}

/** The row `coverage --json` prints per agency, mode and day. */
export type CoverageRow = CoverageDay & { agency: string; certificates_voided: number };

/** Runs `coverage` with the parsed options; prints a table, or `{ from, to, root_account_id, mode, days }` with `json`. */
export async function coverage(
  opts: { account?: string | undefined; from?: string | undefined; to?: string | undefined; mode?: string | undefined },
  json: boolean,
): Promise<number> {
  if (opts.mode !== undefined && opts.mode !== 'test' && opts.mode !== 'live')
    throw new UsageError(`--mode must be test or live, got "${opts.mode}"`);
  const rootAccountId = opts.account === undefined ? undefined : positiveInt(opts.account, '--account');
  const today = new Date().toISOString().slice(0, 10);
  const from = opts.from === undefined ? today : isoDay(opts.from, '--from');
  const to =
    opts.to === undefined
      ? new Date(new Date(`${from}T00:00:00Z`).getTime() + 30 * DAY_MS).toISOString().slice(0, 10)
      : isoDay(opts.to, '--to');
  if (to < from) throw new UsageError(`--to ${to} is before --from ${from}`);
  if ((Date.parse(to) - Date.parse(from)) / DAY_MS > 365) throw new UsageError(`--from ${from} --to ${to} is more than 366 days`);
  const mode = opts.mode as 'live' | 'test' | undefined;
  const config = loadConfigOrExit();
  const db = createDb(config);
  try {
    const filter = { from, to, rootAccountId, mode };
    const [days, voided] = await Promise.all([coverageByAgencyAndDay(db, filter), voidedCertificatesByAgencyAndDay(db, filter)]);
    const voidedOf = new Map(voided.map((v) => [`${v.root_account_id}|${v.mode}|${v.day}`, v.certificates_voided]));
    const accounts = createAccountsRepository(db);
    const names = new Map<number, string>();
    for (const id of new Set(days.map((d) => d.root_account_id))) names.set(id, (await accounts.findById(id))?.name ?? 'unknown');
    const rows: CoverageRow[] = days.map((d) => ({
      ...d,
      agency: names.get(d.root_account_id)!,
      certificates_voided: voidedOf.get(`${d.root_account_id}|${d.mode}|${d.day}`) ?? 0,
    }));
    if (json) {
      console.log(JSON.stringify({ from, to, root_account_id: rootAccountId ?? null, mode: mode ?? null, days: rows }));
      return 0;
    }
    const scope = `${rootAccountId === undefined ? 'every agency' : `root account ${rootAccountId}`}${mode ? `, ${mode} mode` : ''}`;
    console.log(`coverage ${from} to ${to} (${scope}; a day is a covered unit's first local day)`);
    if (rows.length === 0) {
      console.log('nothing sold covers these days');
      return 0;
    }
    const head = [
      'agency',
      'mode',
      'day',
      'policies in force',
      'cancelled',
      'refunded',
      'units in force',
      'cancelled',
      'refunded',
      'certs voided',
    ];
    const table = rows.map((r) => [
      `${r.agency} (${r.root_account_id})`,
      r.mode,
      r.day,
      ...[r.policies_in_force, r.policies_cancelled, r.policies_refunded, r.units_in_force, r.units_cancelled, r.units_refunded].map(
        String,
      ),
      String(r.certificates_voided),
    ]);
    const widths = head.map((h, i) => Math.max(h.length, ...table.map((t) => t[i]!.length)));
    const line = (cells: string[]) => cells.map((c, i) => (i < 3 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
    console.log(line(head));
    for (const t of table) console.log(line(t));
    return 0;
  } finally {
    await db.destroy();
  }
}
