/**
 * The coverage view's read-only repository over `certificates` (written by ./repository only; this module reads):
 * how many current certificates are void, by agency (root account), mode and the day of the
 * covered unit they certify (issue 55 item 1, `npm run ops -- coverage`). Void as the API says it
 * (`voided_at`, else the purchase's full refund): voided by a cancellation or a holder's removal,
 * or by the refund. Superseded versions (a holder or name change) are not counted. The day is the
 * purchases' coverage repository's (`UNIT_DAY_SQL`), so the two join on agency, mode and day.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { UNIT_DAY_SQL, type CoverageFilter } from '../purchases/coverage-repository';

/** Void certificates of one agency, mode and day. */
export interface VoidedCertificatesDay {
  root_account_id: number;
  mode: 'live' | 'test';
  day: string;
  certificates_voided: number;
}

/** The void certificates of `filter`'s days, by agency, mode and day; days with none are absent. */
export async function voidedCertificatesByAgencyAndDay(db: Db | Knex, filter: CoverageFilter): Promise<VoidedCertificatesDay[]> {
  const rows = await db('certificates as c')
    .join('covered_units as cu', 'cu.id', 'c.covered_unit_id')
    .join('purchases as p', 'p.id', 'c.purchase_id')
    .whereNull('c.superseded_at')
    .where((w) => w.whereNotNull('c.voided_at').orWhereNotNull('p.refunded_at'))
    .whereRaw(`${UNIT_DAY_SQL} between ? and ?`, [filter.from, filter.to])
    .modify((q) => {
      if (filter.rootAccountId !== undefined) q.where('p.root_account_id', filter.rootAccountId);
      if (filter.mode !== undefined) q.where('p.mode', filter.mode);
    })
    .groupBy('p.root_account_id', 'p.mode', db.raw(UNIT_DAY_SQL))
    .select('p.root_account_id', 'p.mode', db.raw(`${UNIT_DAY_SQL} as day`), db.raw('count(*)::int as n'));
  return rows.map((r: Record<string, unknown>) => ({
    root_account_id: Number(r.root_account_id),
    mode: r.mode as 'live' | 'test',
    day: String(r.day),
    certificates_voided: Number(r.n),
  }));
}
