/**
 * A subscription's renewed periods (src/purchases/renewal-period.ts): contiguous in the units' time
 * zone across month ends and daylight-saving changes, each day from its local midnight. Property
 * tests (seeded fast-check) over time zones with daylight saving and half- or quarter-hour
 * offsets, start dates on the 28th–31st and on daylight-saving change days, and several
 * consecutive renewals; the first period is built by the quote's own expansion, its first day
 * starting at the payment (as a first day bought under way is stored).
 */
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { expandDays } from '../../src/quotes/coverage';
import { periodWindow, renewedUnits } from '../../src/purchases/renewal-period';
import type { NewCoveredUnit } from '../../src/purchases/purchase-record';

const ZONES = [
  'America/Chicago',
  'America/New_York',
  'America/St_Johns', // -03:30 with daylight saving
  'America/Santiago', // daylight saving starts at midnight: that day has no 00:00
  'America/Havana', // likewise
  'Europe/London',
  'Europe/Berlin',
  'Asia/Beirut',
  'Asia/Kolkata', // +05:30
  'Asia/Kathmandu', // +05:45
  'Asia/Tehran', // +03:30
  'Australia/Adelaide', // +09:30 / +10:30
  'Australia/Lord_Howe', // a half-hour daylight-saving shift
  'Pacific/Chatham', // +12:45 / +13:45
  'UTC',
] as const;

/** Dates of 2026–2029 on which `zone`'s offset changes (its daylight-saving change days). */
function changeDays(zone: string): string[] {
  const out: string[] = [];
  for (let d = DateTime.fromISO('2026-01-01', { zone }); d.year < 2030; d = d.plus({ days: 1 })) {
    if (d.startOf('day').offset !== d.endOf('day').offset) out.push(d.toISODate()!);
  }
  return out;
}
const CHANGE_DAYS = Object.fromEntries(ZONES.map((z) => [z, changeDays(z)]));

const anchorDate = (zone: string) =>
  fc.oneof(
    // any day, the 28th–31st weighted in (clamped into short months by luxon, e.g. 2027-02-31 → skipped)
    fc
      .record({ year: fc.integer({ min: 2026, max: 2029 }), month: fc.integer({ min: 1, max: 12 }), day: fc.integer({ min: 1, max: 31 }) })
      .map(({ year, month, day }) => DateTime.fromObject({ year, month, day }, { zone }))
      .filter((d) => d.isValid)
      .map((d) => d.toISODate()!),
    fc
      .record({ year: fc.integer({ min: 2026, max: 2029 }), month: fc.integer({ min: 1, max: 12 }), day: fc.integer({ min: 28, max: 31 }) })
      .map(({ year, month, day }) => DateTime.fromObject({ year, month, day }, { zone }))
      .filter((d) => d.isValid)
      .map((d) => d.toISODate()!),
    CHANGE_DAYS[zone]!.length > 0 ? fc.constantFrom(...CHANGE_DAYS[zone]!) : fc.constant('2026-03-31'),
  );

const scenario = fc.constantFrom(...ZONES).chain((zone) =>
  fc.record({
    zone: fc.constant(zone),
    anchor: anchorDate(zone),
    renewals: fc.integer({ min: 1, max: 12 }),
    paidAtFraction: fc.double({ min: 0, max: 0.99, noNaN: true }),
  }),
);

/** The first period as a quote expands it and the payment stores it: its first day starts when it was paid. */
function firstPeriod(zone: string, from: string, lastDate: string, paidAtFraction: number): NewCoveredUnit[] {
  const expanded = expandDays({ time_zone: zone, start_date: from, end_date: lastDate }, { now: new Date('2020-01-01'), maxUnits: 400 });
  if (!expanded.ok) throw new Error(expanded.reason);
  const [day0, ...rest] = expanded.units;
  const paidAt = new Date(day0!.startsAt.getTime() + Math.floor((day0!.endsAt.getTime() - day0!.startsAt.getTime()) * paidAtFraction));
  return [{ ...day0!, startsAt: paidAt }, ...rest];
}

/**
 * The day unit runs from the first instant of its local date (local midnight where it exists) to
 * the next one's. Plain checks (thrown with the unit) rather than one expect() each: thousands of
 * units per run.
 */
function expectLocalDay(u: NewCoveredUnit, zone: string) {
  const local = (ms: number) => DateTime.fromMillis(ms, { zone });
  const start = local(u.startsAt.getTime());
  const failures = [
    u.kind === 'day' || 'not a day',
    u.timeZone === zone || 'another zone',
    start.toISODate() === u.localLabel || 'starts on another local date',
    local(u.startsAt.getTime() - 1).toISODate()! < u.localLabel || 'an earlier instant reads as its date',
    local(u.endsAt.getTime() - 1).toISODate() === u.localLabel || 'ends on another local date',
    local(u.endsAt.getTime()).toISODate()! > u.localLabel || 'ends before the next date',
    // local midnight wherever that day has one
    start.toFormat('HH:mm:ss.SSS') === '00:00:00.000' ||
      DateTime.fromObject({ year: start.year, month: start.month, day: start.day }, { zone }).hour !== 0 ||
      'not at local midnight',
  ].filter((r): r is string => r !== true);
  if (failures.length) throw new Error(`${JSON.stringify(u)} in ${zone}: ${failures.join(', ')}`);
}

describe('renewedUnits', () => {
  test('property: a first period covering its whole month renews as contiguous periods: each starts where the previous ended, each day at local midnight', () => {
    fc.assert(
      fc.property(scenario, ({ zone, anchor, renewals, paidAtFraction }) => {
        const month0 = periodWindow(anchor, zone, 0);
        const lastDate = DateTime.fromISO(month0.to, { zone }).minus({ days: 1 }).toISODate()!;
        const first = firstPeriod(zone, anchor, lastDate, paidAtFraction);
        let previous = first;
        for (let n = 1; n <= renewals; n++) {
          const units = renewedUnits(first, n);
          const window = periodWindow(anchor, zone, n);
          expect(units.length).toBe(Math.round(DateTime.fromISO(window.to).diff(DateTime.fromISO(window.from), 'days').days));
          expect(units[0]!.startsAt).toEqual(previous.at(-1)!.endsAt);
          expect(units[0]!.startsAt).toEqual(window.startsAt);
          expect(units.at(-1)!.endsAt).toEqual(window.endsAt);
          units.forEach((u, i) => {
            expect(u.index).toBe(i);
            expectLocalDay(u, zone);
            if (i > 0) expect(u.startsAt).toEqual(units[i - 1]!.endsAt);
          });
          previous = units;
        }
      }),
      { seed: 48_001, numRuns: 100 },
    );
  });

  test('property: chosen days renew as the same days of the month, inside their month, never overlapping an earlier period', () => {
    const chosen = scenario.chain((s) => {
      const month0 = periodWindow(s.anchor, s.zone, 0);
      const length = Math.round(DateTime.fromISO(month0.to).diff(DateTime.fromISO(month0.from), 'days').days);
      return fc.record({
        s: fc.constant(s),
        // offsets of the chosen days after the anchor (the anchor itself is always chosen); a few may run past the month
        offsets: fc.uniqueArray(fc.integer({ min: 1, max: length + 3 }), { maxLength: 10 }),
      });
    });
    fc.assert(
      fc.property(chosen, ({ s: { zone, anchor, renewals }, offsets }) => {
        const dates = [anchor, ...offsets.map((o) => DateTime.fromISO(anchor, { zone }).plus({ days: o }).toISODate()!)];
        const first = dates.map((d, index) => ({ ...firstPeriod(zone, d, d, 0)[0]!, index }));
        const month0 = periodWindow(anchor, zone, 0);
        const wholeMonth =
          offsets.filter((o) => DateTime.fromISO(anchor).plus({ days: o }).toISODate()! < month0.to).length + 1 ===
          Math.round(DateTime.fromISO(month0.to).diff(DateTime.fromISO(month0.from), 'days').days);
        let previousEnd = first.map((u) => u.endsAt.getTime()).reduce((a, b) => Math.max(a, b));
        for (let n = 1; n <= renewals; n++) {
          const units = renewedUnits(first, n);
          const window = periodWindow(anchor, zone, n);
          for (const [i, u] of units.entries()) {
            expectLocalDay(u, zone);
            expect(u.localLabel >= window.from && u.localLabel < window.to).toBe(true);
            expect(u.startsAt.getTime()).toBeGreaterThanOrEqual(previousEnd);
            if (i > 0) expect(u.startsAt.getTime()).toBeGreaterThanOrEqual(units[i - 1]!.endsAt.getTime());
            if (!wholeMonth) {
              // the same day of the month, or a short month's last day for a 29th–31st
              const sources = dates.filter((d) => d < month0.to).map((d) => DateTime.fromISO(d).plus({ months: n }).toISODate());
              expect(sources).toContain(u.localLabel);
            }
          }
          // the anchor's day renews unless the first period already covers it
          if (window.from > dates.reduce((a, b) => (a > b ? a : b))) expect(units[0]!.localLabel).toBe(window.from);
          if (units.length) previousEnd = units.at(-1)!.endsAt.getTime();
        }
      }),
      { seed: 48_002, numRuns: 150 },
    );
  });

  test('the first day bought under way (starting at the payment, 12:56:30Z) renews from local midnight, right where the first month ends', () => {
    const first = firstPeriod('America/Chicago', '2026-11-28', '2026-12-27', 0.5).map((u, i) =>
      i === 0 ? { ...u, startsAt: new Date('2026-11-28T12:56:30Z') } : u,
    );
    const renewed = renewedUnits(first, 1);
    expect(renewed[0]).toMatchObject({ localLabel: '2026-12-28', startsAt: new Date('2026-12-28T06:00:00Z') });
    expect(renewed[0]!.startsAt).toEqual(first.at(-1)!.endsAt);
    expect(renewed.at(-1)).toMatchObject({ localLabel: '2027-01-27', endsAt: new Date('2027-01-28T06:00:00Z') });
    expect(renewed).toHaveLength(31);
  });

  test('months are counted from the anchor: a subscription from 31 January renews 28 February–30 March, then 31 March–29 April', () => {
    const first = firstPeriod('Europe/Berlin', '2027-01-31', '2027-02-27', 0);
    expect(renewedUnits(first, 1).map((u) => u.localLabel)).toEqual([
      '2027-02-28',
      ...Array.from({ length: 30 }, (_, i) => `2027-03-${String(i + 1).padStart(2, '0')}`),
    ]);
    const second = renewedUnits(first, 2);
    expect([second[0]!.localLabel, second.at(-1)!.localLabel, second.length]).toEqual(['2027-03-31', '2027-04-29', 30]);
  });

  test('chosen days keep their day of the month; trips keep their local times; period 0 is refused', () => {
    const days = [firstPeriod('America/Chicago', '2027-05-01', '2027-05-02', 0.3)].flat();
    expect(renewedUnits(days, 1).map((u) => [u.localLabel, u.startsAt.toISOString()])).toEqual([
      ['2027-06-01', '2027-06-01T05:00:00.000Z'],
      ['2027-06-02', '2027-06-02T05:00:00.000Z'],
    ]);
    const trip: NewCoveredUnit = {
      index: 0,
      kind: 'trip',
      startsAt: new Date('2027-01-31T15:00:00Z'), // under way at payment: the label still says 08:00
      endsAt: new Date('2027-02-01T01:00:00Z'),
      timeZone: 'America/Denver',
      localLabel: '2027-01-31T08:00/2027-01-31T18:00',
    };
    expect(renewedUnits([trip], 1)).toEqual([
      {
        ...trip,
        startsAt: new Date('2027-02-28T15:00:00Z'),
        endsAt: new Date('2027-03-01T01:00:00Z'),
        localLabel: '2027-02-28T08:00/2027-02-28T18:00',
      },
    ]);
    expect(() => renewedUnits(days, 0)).toThrow(RangeError);
  });
});
