import { expandDays, expandTrips } from '../../src/quotes/coverage';

const now = new Date('2026-03-01T12:00:00Z');
const limits = { now, maxUnits: 366 };

describe('expandDays', () => {
  test('when the range crosses the spring-forward change, then that day lasts 23 hours in local time', () => {
    const r = expandDays({ time_zone: 'America/New_York', start_date: '2026-03-07', end_date: '2026-03-09' }, limits);
    if (!r.ok) throw new Error(r.reason);
    expect(r.units.map((u) => u.localLabel)).toEqual(['2026-03-07', '2026-03-08', '2026-03-09']);
    expect(r.units.map((u) => (u.endsAt.getTime() - u.startsAt.getTime()) / 3600_000)).toEqual([24, 23, 24]);
    expect(r.units[0]!.startsAt.toISOString()).toBe('2026-03-07T05:00:00.000Z');
    expect(r.units[2]!.startsAt.toISOString()).toBe('2026-03-09T04:00:00.000Z');
    // contiguous: each unit starts where the previous ended
    expect(r.units[1]!.startsAt).toEqual(r.units[0]!.endsAt);
  });

  test('when the range crosses the fall-back change, then that day lasts 25 hours', () => {
    const r = expandDays({ time_zone: 'Europe/Berlin', start_date: '2026-10-24', end_date: '2026-10-26' }, limits);
    if (!r.ok) throw new Error(r.reason);
    expect(r.units.map((u) => (u.endsAt.getTime() - u.startsAt.getTime()) / 3600_000)).toEqual([24, 25, 24]);
  });

  test('when the range crosses a month end and a leap day, then every calendar day is one unit', () => {
    const r = expandDays({ time_zone: 'UTC', start_date: '2028-02-27', end_date: '2028-03-02' }, { now, maxUnits: 366 });
    if (!r.ok) throw new Error(r.reason);
    expect(r.units.map((u) => u.localLabel)).toEqual(['2028-02-27', '2028-02-28', '2028-02-29', '2028-03-01', '2028-03-02']);
    expect(r.units.map((u) => u.index)).toEqual([0, 1, 2, 3, 4]);
  });

  test('when today is the first day in the coverage zone, then it is allowed even if UTC is past it', () => {
    // 2026-03-01T12:00Z is still 2026-03-01 in Honolulu; yesterday there is past.
    expect(expandDays({ time_zone: 'Pacific/Honolulu', start_date: '2026-03-01', end_date: '2026-03-01' }, limits).ok).toBe(true);
    expect(expandDays({ time_zone: 'Pacific/Honolulu', start_date: '2026-02-28', end_date: '2026-03-01' }, limits)).toEqual({
      ok: false,
      reason: expect.stringContaining('past'),
    });
  });

  test.each([
    [{ time_zone: 'Mars/Olympus', start_date: '2026-04-01', end_date: '2026-04-02' }, 'IANA'],
    [{ time_zone: 'UTC', start_date: '2026-04-02', end_date: '2026-04-01' }, 'before start_date'],
    [{ time_zone: 'UTC', start_date: '2026-02-30', end_date: '2026-03-02' }, 'real calendar'],
    [{ time_zone: 'UTC', start_date: '04/01/2026', end_date: '2026-04-02' }, 'YYYY-MM-DD'],
    [{ time_zone: 'UTC', start_date: '2026-04-01', end_date: '2027-04-02' }, 'at most 366'],
  ])('when the answer is %p, then it is rejected naming the problem', (answer, reason) => {
    const r = expandDays(answer, limits);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toContain(reason);
  });
});

describe('expandTrips', () => {
  const tl = { ...limits, maxTripDays: 30 };
  /** expandTrips of `trips` (local times) in `zone`, at most 30 days a trip. */
  const tripsIn = (zone: string, ...trips: Array<{ start: string; end: string }>) => expandTrips({ time_zone: zone, trips }, tl);
  test('when trips are given out of order, then one unit per trip in start order with UTC instants', () => {
    const r = tripsIn(
      'America/Chicago',
      { start: '2026-05-10T08:00', end: '2026-05-12T18:00' },
      { start: '2026-04-01T06:30', end: '2026-04-01T22:00' },
    );
    if (!r.ok) throw new Error(r.reason);
    expect(r.units.map((u) => u.localLabel)).toEqual(['2026-04-01T06:30/2026-04-01T22:00', '2026-05-10T08:00/2026-05-12T18:00']);
    expect(r.units[0]!.startsAt.toISOString()).toBe('2026-04-01T11:30:00.000Z');
    expect(r.units.every((u) => u.kind === 'trip')).toBe(true);
  });

  test.each([
    [[], 'at least one trip'],
    [[{ start: '2026-04-02T10:00', end: '2026-04-02T09:00' }], 'end is not after start'],
    [
      [
        { start: '2026-04-01T10:00', end: '2026-04-03T10:00' },
        { start: '2026-04-02T10:00', end: '2026-04-04T10:00' },
      ],
      'overlap',
    ],
    [[{ start: '2026-02-01T10:00', end: '2026-02-02T10:00' }], 'past'],
    [[{ start: '2026-04-01T10:00', end: '2026-06-01T10:00' }], 'longer than 30 days'],
    [[{ start: '2026-04-01 10:00', end: '2026-04-02T10:00' }], 'YYYY-MM-DDTHH:mm'],
  ])('when the trips are %p, then they are rejected', (trips, reason) => {
    const r = tripsIn('UTC', ...trips);
    expect(!r.ok && r.reason).toContain(reason);
  });

  test('when trips touch end to start, then they do not overlap', () => {
    const r = tripsIn(
      'UTC',
      { start: '2026-04-01T10:00', end: '2026-04-02T10:00' },
      { start: '2026-04-02T10:00', end: '2026-04-03T10:00' },
    );
    expect(r.ok).toBe(true);
  });
});
