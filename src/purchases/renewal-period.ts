/**
 * A subscription period's covered units, computed from the first period's (pure: no clock, no
 * database). A subscription is billed monthly from its first covered day: period `n` (0 for the
 * first purchase, 1 for the first renewal) is the window from local midnight of the anchor date
 * plus `n` months to local midnight of the anchor date plus `n + 1` months, in the units' IANA time
 * zone. Each window's bounds are counted from the anchor (Jan 31 → Feb 28 → Mar 31, never
 * drifting to the 28th), so window `n` ends exactly where window `n + 1` starts.
 *
 * Days (the rule, recorded in docs/decisions.md "Renewed periods"):
 * - a first period that covers every day of its window (a vendor insured all month) renews as
 *   every day of the next window: periods are contiguous, whatever the month lengths (29–31 into
 *   February) and daylight-saving changes;
 * - a first period of chosen days renews the same days of the month (`date + n months`; a 29th–31st
 *   becomes a short month's last day, once), kept inside the window;
 * - a renewal never covers a day the first period already covers (a first purchase longer than its
 *   month).
 * Each renewed day runs from the first instant of its local date to the first instant of the next
 * one (local midnight; 23 or 25 hours on a daylight-saving change day), built from the day's local
 * date (`localLabel`), never from the stored start: a first day bought under way starts at the
 * payment, and that clock time must not carry into later periods (issue 48 item 1).
 * Trips keep their local start and end times, `n` months later (from their labels, likewise).
 */
import { DateTime } from 'luxon';
import { localDayStart, nextLocalDate } from '../shared/local-day';
import type { NewCoveredUnit } from './purchase-record';

/**
 * Period `n`'s window in `zone` for a subscription anchored at local date `anchor` (`YYYY-MM-DD`):
 * `{ from, to }` local dates (inclusive, exclusive) and their instants. `n` >= 0.
 */
export function periodWindow(anchor: string, zone: string, n: number): { from: string; to: string; startsAt: Date; endsAt: Date } {
  const a = DateTime.fromISO(anchor, { zone });
  const from = a.plus({ months: n }).toISODate()!;
  const to = a.plus({ months: n + 1 }).toISODate()!;
  return { from, to, startsAt: localDayStart(from, zone).toUTC().toJSDate(), endsAt: localDayStart(to, zone).toUTC().toJSDate() };
}

/** A day unit on local date `date` in `zone`: first instant of that date to the first of the next. */
function dayUnit(date: string, zone: string, index: number): NewCoveredUnit {
  const start = localDayStart(date, zone);
  const end = localDayStart(nextLocalDate(date), zone);
  return { index, kind: 'day', startsAt: start.toUTC().toJSDate(), endsAt: end.toUTC().toJSDate(), timeZone: zone, localLabel: date };
}

/** Local dates from `from` (inclusive) to `to` (exclusive), `YYYY-MM-DD` in calendar order. */
function datesBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = from; d < to; d = nextLocalDate(d)) out.push(d);
  return out;
}

function renewedTrip(unit: NewCoveredUnit, n: number): NewCoveredUnit {
  const [from, to] = unit.localLabel.split('/');
  const start = DateTime.fromISO(from!, { zone: unit.timeZone }).plus({ months: n });
  const end = DateTime.fromISO(to!, { zone: unit.timeZone }).plus({ months: n });
  return {
    ...unit,
    startsAt: start.toUTC().toJSDate(),
    endsAt: end.toUTC().toJSDate(),
    localLabel: `${start.toFormat("yyyy-MM-dd'T'HH:mm")}/${end.toFormat("yyyy-MM-dd'T'HH:mm")}`,
  };
}

/**
 * The covered units of renewal period `n` (>= 1) of one item whose first-period units are
 * `firstPeriod` (day units and trip units of one time zone, any order; their local labels are
 * what counts). Returns new units, indexed from 0 in start order, per the rule above.
 * Throws RangeError for `n` < 1.
 */
export function renewedUnits(firstPeriod: NewCoveredUnit[], n: number): NewCoveredUnit[] {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`a renewal period is an integer >= 1, got ${n}`);
  const days = firstPeriod.filter((u) => u.kind === 'day');
  const trips = firstPeriod.filter((u) => u.kind === 'trip').map((u) => renewedTrip(u, n));
  const renewedDays: NewCoveredUnit[] = [];
  if (days.length > 0) {
    const zone = days[0]!.timeZone;
    const covered = new Set(days.map((u) => u.localLabel));
    const sorted = [...covered].sort();
    const anchor = sorted[0]!;
    const last = sorted.at(-1)!;
    const first = periodWindow(anchor, zone, 0);
    const window = periodWindow(anchor, zone, n);
    const wholeMonth = datesBetween(first.from, first.to).every((d) => covered.has(d));
    const dates = wholeMonth
      ? datesBetween(window.from, window.to)
      : sorted
          .filter((d) => d < first.to)
          .map((d) => DateTime.fromISO(d, { zone }).plus({ months: n }).toISODate()!)
          .filter((d, i, all) => d >= window.from && d < window.to && all.indexOf(d) === i);
    for (const d of dates) if (d > last) renewedDays.push(dayUnit(d, zone, 0));
  }
  return [...renewedDays, ...trips].sort((a, b) => a.startsAt.getTime() - b.startsAt.getTime()).map((u, index) => ({ ...u, index }));
}

/**
 * Period `n`'s window (0: the first purchase) of a subscription whose first period's units are
 * `firstPeriod` (all its items' units; the earliest local date anchors it): `from` and `to` local
 * dates (inclusive, exclusive), `lastDay` (the last local date it covers) and the time zone; null
 * when there are no units.
 */
export function subscriptionPeriodWindow(
  firstPeriod: NewCoveredUnit[],
  n: number,
): { from: string; to: string; lastDay: string; timeZone: string; startsAt: Date; endsAt: Date } | null {
  const dated = firstPeriod
    .map((u) => ({ date: u.kind === 'day' ? u.localLabel : u.localLabel.slice(0, 10), zone: u.timeZone }))
    .sort((a, b) => a.date.localeCompare(b.date));
  const anchor = dated[0];
  if (!anchor) return null;
  const w = periodWindow(anchor.date, anchor.zone, n);
  const lastDay = DateTime.fromISO(w.to, { zone: 'UTC' }).minus({ days: 1 }).toISODate()!;
  return { ...w, lastDay, timeZone: anchor.zone };
}
