/**
 * The search's estimate of a scope's rows from its table sample (src/purchase-search/probe.ts):
 * it decides whether a phrase is expected to have more matches than the count cap in the scope
 * (then the page is found before the count), so a teammate's scope must not count as its root's.
 */
import { estimatedScopeRows, scopeKey, tableSample } from '../../src/purchase-search/probe';

/** A sample of `scopes` (one row each, keys and product lines empty) out of `tableRows`. */
const sampleOf = (scopes: string[], tableRows: number) =>
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
      scopeKey(1, null, 'live'),
      scopeKey(1, null, 'live'),
      scopeKey(1, null, 'live'),
      scopeKey(1, 5, 'live'),
      scopeKey(1, 5, 'live'),
      scopeKey(1, 6, 'live'),
      scopeKey(1, 5, 'test'),
      scopeKey(2, null, 'live'),
      scopeKey(2, 7, 'live'),
      scopeKey(11, null, 'live'),
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
