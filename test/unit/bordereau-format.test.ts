/** The bordereau's money and month arithmetic (src/reports/bordereau.ts): integers in, exact text out. */
import fs from 'node:fs';
import path from 'node:path';
import { BORDEREAU_COLUMNS, formatMinor, monthRange, shareOf } from '../../src/reports/bordereau';
import { previousMonth } from '../../workflows/bordereau';
import { LOSS_BORDEREAU_COLUMNS } from '../../src/reports/loss-bordereau';

describe('formatMinor', () => {
  test.each([
    [0, '0.00'],
    [5, '0.05'],
    [1234, '12.34'],
    [-1234, '-12.34'],
    [-7, '-0.07'],
    [999_999_999_999, '9999999999.99'],
  ])('when %d minor units are written, then %s', (minor, text) => {
    expect(formatMinor(minor)).toBe(text);
  });

  test('when the amount is not a safe integer, then it throws rather than round', () => {
    expect(() => formatMinor(12.5)).toThrow(RangeError);
  });
});

describe('monthRange', () => {
  test('when a month is given, then its first instant and the next month’s (UTC), December included', () => {
    expect(monthRange('2026-12')).toEqual({ from: new Date('2026-12-01T00:00:00Z'), to: new Date('2027-01-01T00:00:00Z') });
  });

  test.each(['2026-13', '2026-1', '26-01', '2026-00', ''])('when %p is given, then null', (m) => {
    expect(monthRange(m)).toBeNull();
  });
});

describe('shareOf', () => {
  test('when a fee of 773 is spread over premiums 26730 and 4200, then the shares are 668 and 105 and add up', () => {
    expect([shareOf(773, [26730, 4200], 0), shareOf(773, [26730, 4200], 1)]).toEqual([668, 105]);
  });
});

describe('the column reference', () => {
  test('when docs/reports.md lists the columns, then it lists every column of the premium and the loss file, in order, with its description', () => {
    const reports = fs.readFileSync(path.join(__dirname, '../../docs/reports.md'), 'utf8');
    const listed = BORDEREAU_COLUMNS.map((c) => `- \`${c.name}\`: ${c.description}`).join('\n');
    expect(reports).toContain(listed);
    expect(reports).toContain(LOSS_BORDEREAU_COLUMNS.map((c) => `- \`${c.name}\`: ${c.description}`).join('\n'));
  });
});

describe('previousMonth (the monthly run’s month)', () => {
  test.each([
    ['2026-12-01T02:00:00Z', '2026-11'],
    ['2027-01-01T02:00:00Z', '2026-12'],
    ['2026-03-31T23:59:59Z', '2026-02'],
  ])('when the run starts at %s, then it reports %s', (at, month) => {
    expect(previousMonth(new Date(at))).toBe(month);
  });
});
