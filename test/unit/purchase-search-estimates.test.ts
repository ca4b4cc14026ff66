/**
 * The search's estimates from its table sample (src/purchase-search/probe.ts): a phrase's
 * matches in the table and a scope's rows. Together they decide whether a phrase is expected to
 * have more matches than the count cap in the scope (then the page is found before the count),
 * so a teammate's scope must not count as its root's, and the matches counted through the
 * sample's trigrams must be those a test of every row finds.
 */
import fc from 'fast-check';
import { estimatedMatches, estimatedScopeRows, foldWithOrigins, tableSample, type SampleScope } from '../../src/purchase-search/probe';

const scopeOf = (rootAccountId: number, agentId: number | null, mode: string): SampleScope => ({ rootAccountId, agentId, mode });

/** A sample of `scopes` (one row each, keys and product lines empty) out of `tableRows`. */
const sampleOf = (scopes: SampleScope[], tableRows: number) =>
  tableSample(
    scopes.map(() => ''),
    scopes.map(() => []),
    scopes,
    tableRows,
  );

describe('estimatedScopeRows', () => {
  // 10 sample rows out of 1 000: account 1 has 6 live rows (2 of teammate 5, 1 of teammate 6), 1 test row; account 2, 2.
  const sample = sampleOf(
    [
      scopeOf(1, null, 'live'),
      scopeOf(1, null, 'live'),
      scopeOf(1, null, 'live'),
      scopeOf(1, 5, 'live'),
      scopeOf(1, 5, 'live'),
      scopeOf(1, 6, 'live'),
      scopeOf(1, 5, 'test'),
      scopeOf(2, null, 'live'),
      scopeOf(2, 7, 'live'),
      scopeOf(11, null, 'live'),
    ],
    1000,
  );

  test('when the scope is a root account, then every teammate’s rows of its mode count, and no other account’s', () => {
    expect(estimatedScopeRows(sample, { rootAccountId: 1, agentId: null, mode: 'live' })).toBe(600);
    expect(estimatedScopeRows(sample, { rootAccountId: 1, agentId: null, mode: 'test' })).toBe(100);
    expect(estimatedScopeRows(sample, { rootAccountId: 2, agentId: null, mode: 'live' })).toBe(200);
    // Account 11 is not account 1 (nor 1 account 11's prefix).
    expect(estimatedScopeRows(sample, { rootAccountId: 11, agentId: null, mode: 'live' })).toBe(100);
  });

  test('when the scope is a teammate, then only that teammate’s rows of the mode count', () => {
    expect(estimatedScopeRows(sample, { rootAccountId: 1, agentId: 5, mode: 'live' })).toBe(200);
    expect(estimatedScopeRows(sample, { rootAccountId: 1, agentId: 6, mode: 'live' })).toBe(100);
    expect(estimatedScopeRows(sample, { rootAccountId: 1, agentId: 8, mode: 'live' })).toBe(0);
    expect(estimatedScopeRows(sample, { rootAccountId: 2, agentId: 5, mode: 'live' })).toBe(0);
  });

  test('when the sample is empty, then no rows', () => {
    expect(estimatedScopeRows(sampleOf([], 0), { rootAccountId: 1, agentId: null, mode: 'live' })).toBe(0);
  });
});

describe('estimatedMatches', () => {
  const fold = (text: string) =>
    foldWithOrigins(text)
      .map((c) => c.char)
      .join('');

  test('when phrases and keys vary, then the estimate is the share of sample rows whose key holds the folded phrase or that hold a named product line, times the table', () => {
    const unit = fc.constantFrom(...'abcab12\n-é𝔸'.split(/(?:)/u));
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ key: fc.string({ unit, maxLength: 30 }), lines: fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 3 }) }),
          {
            maxLength: 40,
          },
        ),
        fc.string({ unit, maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 2 }),
        (rows, phrase, productLineIds) => {
          const keys = rows.map((r) => fold(r.key.replace(/\n/g, ' ')).replace(/1/g, '\n'));
          const sample = tableSample(
            keys,
            rows.map((r) => r.lines),
            rows.map(() => scopeOf(1, null, 'live')),
            10 * rows.length,
          );
          const folded = fold(phrase);
          const naive = keys.filter(
            (k, i) => (folded !== '' && k.includes(folded)) || rows[i]!.lines.some((l) => productLineIds.includes(l)),
          ).length;
          return estimatedMatches(sample, phrase, productLineIds) === (naive / Math.max(rows.length, 1)) * (10 * rows.length);
        },
      ),
      { numRuns: 500 },
    );
  });
});
