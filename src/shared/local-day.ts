/**
 * Local calendar days in an IANA time zone. A covered day runs from the first instant of its local
 * date to the first instant of the next: local midnight; on a daylight-saving change day where
 * midnight does not exist (the clocks jump from 24:00 to 01:00), the change itself; where midnight
 * happens twice (the clocks fall back across it), the first of the two, so no instant that reads
 * as the date is left out of its day.
 */
import { DateTime } from 'luxon';

/**
 * The first instant of local date `date` (`YYYY-MM-DD`) in IANA zone `zone`, as a luxon DateTime
 * in that zone. Throws nothing: an invalid date or zone gives an invalid DateTime.
 */
export function localDayStart(date: string, zone: string): DateTime {
  const guess = DateTime.fromISO(date, { zone }).startOf('day');
  if (!guess.isValid) return guess;
  const wallMs = DateTime.fromISO(`${date}T00:00`, { zone: 'UTC' }).toMillis();
  const offsets = new Set([-26, -3, 0, 3, 26].map((h) => guess.plus({ hours: h }).offset));
  const midnights = [...offsets]
    .map((o) => DateTime.fromMillis(wallMs - o * 60_000, { zone }))
    .filter((t) => t.toFormat('yyyy-MM-dd HH:mm:ss.SSS') === `${date} 00:00:00.000`)
    .sort((a, b) => a.toMillis() - b.toMillis());
  return midnights[0] ?? guess;
}

/** The local date after `date` (`YYYY-MM-DD`), calendar arithmetic only. */
export function nextLocalDate(date: string): string {
  return DateTime.fromISO(date, { zone: 'UTC' }).plus({ days: 1 }).toISODate()!;
}
