/**
 * Coverage → covered units (spec §1.3: one certificate per covered day or trip).
 *
 * Per-day: `{ time_zone, start_date, end_date }` (inclusive calendar dates, `YYYY-MM-DD`) gives
 * one unit per calendar day in that IANA time zone, from local midnight to the next local
 * midnight (src/shared/local-day.ts), so a daylight-saving day lasts 23 or 25 hours. Trips: `{ time_zone, trips: [{ start,
 * end }] }` with local date-times (`YYYY-MM-DDTHH:mm`) gives one unit per trip.
 *
 * Rejected (as `{ ok: false, reason }`, never thrown): unknown time zone, malformed dates,
 * empty coverage, reversed ranges, past coverage (a day before today, a trip starting before
 * now, in the coverage's zone), overlapping trips, more than `maxUnits` units, a trip longer
 * than `maxTripDays`. Instants are returned as UTC `Date`s.
 */
import { DateTime, IANAZone } from 'luxon';
import { localDayStart, nextLocalDate } from '../shared/local-day';
import type { NewCoveredUnit } from '../purchases/purchase-record';

/** One covered day or trip (the sale stores it as it is: the purchases domain's `NewCoveredUnit`). */
export type CoveredUnit = NewCoveredUnit;

export type Expansion = { ok: true; units: CoveredUnit[] } | { ok: false; reason: string };

export interface ExpansionLimits {
  now: Date;
  maxUnits: number;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const LOCAL_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/;

function zoneError(timeZone: unknown): string | null {
  if (typeof timeZone !== 'string' || !IANAZone.isValidZone(timeZone))
    return 'time_zone must be an IANA time zone such as America/New_York';
  return null;
}

/** Expands an inclusive range of calendar days in `time_zone` into per-day units. */
export function expandDays(answer: { time_zone: string; start_date: string; end_date: string }, limits: ExpansionLimits): Expansion {
  const zErr = zoneError(answer.time_zone);
  if (zErr) return { ok: false, reason: zErr };
  const zone = answer.time_zone;
  if (!DATE.test(answer.start_date) || !DATE.test(answer.end_date)) return { ok: false, reason: 'dates must be YYYY-MM-DD' };
  const first = DateTime.fromISO(answer.start_date, { zone });
  const last = DateTime.fromISO(answer.end_date, { zone });
  if (!first.isValid || !last.isValid) return { ok: false, reason: 'dates must be real calendar dates' };
  if (last < first) return { ok: false, reason: 'end_date is before start_date' };
  const today = DateTime.fromJSDate(limits.now, { zone }).startOf('day');
  if (first < today) return { ok: false, reason: `coverage starts in the past (today is ${today.toISODate()} in ${zone})` };
  const days = Math.round(last.diff(first, 'days').days) + 1;
  if (days > limits.maxUnits) return { ok: false, reason: `coverage is ${days} days; at most ${limits.maxUnits} are allowed` };
  const units: CoveredUnit[] = [];
  for (let i = 0; i < days; i++) {
    const date = first.plus({ days: i }).toISODate()!;
    const start = localDayStart(date, zone);
    const end = localDayStart(nextLocalDate(date), zone);
    units.push({
      index: i,
      kind: 'day',
      startsAt: start.toUTC().toJSDate(),
      endsAt: end.toUTC().toJSDate(),
      timeZone: zone,
      localLabel: date,
    });
  }
  return { ok: true, units };
}

/** Expands trips (local date-times in `time_zone`) into one unit per trip, in start order. */
export function expandTrips(
  answer: { time_zone: string; trips: { start: string; end: string }[] },
  limits: ExpansionLimits & { maxTripDays: number },
): Expansion {
  const zErr = zoneError(answer.time_zone);
  if (zErr) return { ok: false, reason: zErr };
  const zone = answer.time_zone;
  if (answer.trips.length === 0) return { ok: false, reason: 'at least one trip is required' };
  if (answer.trips.length > limits.maxUnits)
    return { ok: false, reason: `${answer.trips.length} trips; at most ${limits.maxUnits} are allowed` };
  const now = DateTime.fromJSDate(limits.now, { zone });
  const parsed = [];
  for (const [i, t] of answer.trips.entries()) {
    if (!LOCAL_DATETIME.test(t.start) || !LOCAL_DATETIME.test(t.end))
      return { ok: false, reason: `trip ${i + 1}: start and end must be YYYY-MM-DDTHH:mm` };
    const start = DateTime.fromISO(t.start, { zone });
    const end = DateTime.fromISO(t.end, { zone });
    if (!start.isValid || !end.isValid) return { ok: false, reason: `trip ${i + 1}: not a real date-time in ${zone}` };
    if (end <= start) return { ok: false, reason: `trip ${i + 1}: end is not after start` };
    if (start < now) return { ok: false, reason: `trip ${i + 1}: starts in the past` };
    if (end.diff(start, 'days').days > limits.maxTripDays)
      return { ok: false, reason: `trip ${i + 1}: longer than ${limits.maxTripDays} days` };
    parsed.push({ start, end, raw: t });
  }
  parsed.sort((a, b) => a.start.toMillis() - b.start.toMillis());
  for (let i = 1; i < parsed.length; i++) {
    if (parsed[i]!.start < parsed[i - 1]!.end) return { ok: false, reason: 'trips overlap' };
  }
  return {
    ok: true,
    units: parsed.map((p, index) => ({
      index,
      kind: 'trip' as const,
      startsAt: p.start.toUTC().toJSDate(),
      endsAt: p.end.toUTC().toJSDate(),
      timeZone: zone,
      localLabel: `${p.start.toFormat("yyyy-MM-dd'T'HH:mm")}/${p.end.toFormat("yyyy-MM-dd'T'HH:mm")}`,
    })),
  };
}
