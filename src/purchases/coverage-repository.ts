/**
 * The coverage view's read-only repository over the sale's tables (`purchases`, `covered_units`; their writer is
 * ./sale-repository, this module only reads): for each agency (root account), mode and day, the
 * sold purchases ("policies") and covered units in force, cancelled and refunded (issue 55 item 1,
 * `npm run ops -- coverage`).
 *
 * A unit's day is the local calendar day its cover starts (`starts_at` in its own time zone: the
 * day of a per-day unit, the first day of a trip). Per purchase and day: in force when the
 * purchase is in force (`IN_FORCE_STATUSES`) and one of its units that day is not cancelled;
 * cancelled when every unit it has that day is cancelled (and it is not refunded); refunded when
 * the payment was refunded in full (`refunded`: every unit void, whatever was cancelled before).
 * Unit counts follow the same rule per unit. Unsold purchases (quoted, awaiting payment, expired,
 * failed) are not counted.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { IN_FORCE_STATUSES } from './rules';

/** The filter of a coverage read: days `from`..`to` inclusive (YYYY-MM-DD), optionally one root account or mode. */
export interface CoverageFilter {
  from: string;
  to: string;
  rootAccountId?: number | undefined;
  mode?: 'live' | 'test' | undefined;
}

/** One agency's, mode's and day's counts. */
export interface CoverageDay {
  root_account_id: number;
  mode: 'live' | 'test';
  /** YYYY-MM-DD, local to the covered units. */
  day: string;
  policies_in_force: number;
  policies_cancelled: number;
  policies_refunded: number;
  units_in_force: number;
  units_cancelled: number;
  units_refunded: number;
}

const SOLD = [...IN_FORCE_STATUSES, 'cancelled', 'refunded'];

/** The SQL of a unit's day (text `YYYY-MM-DD`), shared with the certificates' count of the same days. */
export const UNIT_DAY_SQL = "to_char((cu.starts_at at time zone cu.time_zone)::date, 'YYYY-MM-DD')";

/**
 * The counts of `filter`'s days, by agency, mode and day (ordered so), one aggregate query with
 * no row per purchase leaving the database. Days with nothing sold are absent.
 */
export async function coverageByAgencyAndDay(db: Db | Knex, filter: CoverageFilter): Promise<CoverageDay[]> {
  const perPurchase = db('covered_units as cu')
    .join('purchases as p', 'p.id', 'cu.purchase_id')
    .whereIn('p.status', SOLD)
    .whereNotNull('p.paid_at')
    .whereRaw(`${UNIT_DAY_SQL} between ? and ?`, [filter.from, filter.to])
    .modify((q) => {
      if (filter.rootAccountId !== undefined) q.where('p.root_account_id', filter.rootAccountId);
      if (filter.mode !== undefined) q.where('p.mode', filter.mode);
    })
    .groupBy('p.id', 'p.root_account_id', 'p.mode', 'p.status', db.raw(UNIT_DAY_SQL))
    .select(
      'p.root_account_id',
      'p.mode',
      'p.status',
      db.raw(`${UNIT_DAY_SQL} as day`),
      db.raw('count(*)::int as units'),
      db.raw('count(cu.cancelled_at)::int as cancelled'),
    );
  const inForce = IN_FORCE_STATUSES.map((s) => `'${s}'`).join(', ');
  const rows = await db
    .from(perPurchase.as('d'))
    .groupBy('root_account_id', 'mode', 'day')
    .orderBy([{ column: 'root_account_id' }, { column: 'mode' }, { column: 'day' }])
    .select(
      'root_account_id',
      'mode',
      'day',
      db.raw(`count(*) filter (where status in (${inForce}) and units > cancelled)::int as policies_in_force`),
      db.raw(`count(*) filter (where status <> 'refunded' and units = cancelled)::int as policies_cancelled`),
      db.raw(`count(*) filter (where status = 'refunded')::int as policies_refunded`),
      db.raw(`coalesce(sum(units - cancelled) filter (where status in (${inForce})), 0)::int as units_in_force`),
      db.raw(`coalesce(sum(cancelled) filter (where status <> 'refunded'), 0)::int as units_cancelled`),
      db.raw(`coalesce(sum(units) filter (where status = 'refunded'), 0)::int as units_refunded`),
    );
  return rows.map((r: Record<string, unknown>) => ({
    root_account_id: Number(r.root_account_id),
    mode: r.mode as 'live' | 'test',
    day: String(r.day),
    policies_in_force: Number(r.policies_in_force),
    policies_cancelled: Number(r.policies_cancelled),
    policies_refunded: Number(r.policies_refunded),
    units_in_force: Number(r.units_in_force),
    units_cancelled: Number(r.units_cancelled),
    units_refunded: Number(r.units_refunded),
  }));
}
