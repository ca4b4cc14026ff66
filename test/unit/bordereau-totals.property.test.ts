/**
 * A bordereau's totals (src/reports/bordereau.ts, as activities/bordereau-files.ts adds each entry
 * with `addToTotals`) as a property: over any ledger entries in several currencies (sales,
 * cancellations and the rest, with or without commission, tax and platform fee), the totals of
 * each currency equal the sum of that currency's rows as the CSV writes them (major units read
 * back to minor), row by row net premium is gross premium less commission, and the spreadsheet's
 * totals row shows the same sums.
 */
import fc from 'fast-check';
import {
  addToTotals,
  BORDEREAU_COLUMNS,
  bordereauRow,
  totalsCells,
  TRANSACTION_TYPES,
  type BordereauTotals,
  type LedgerEntry,
} from '../../src/reports/bordereau';

const MONEY = ['gross_premium', 'platform_fee', 'tax', 'commission', 'net_premium'] as const;
const at = (name: string) => BORDEREAU_COLUMNS.findIndex((c) => c.name === name);
/** `-12.34` → `-1234`, by the text (no float). */
const minorOf = (text: string) => {
  const [whole, cents] = text.replace('-', '').split('.');
  return (text.startsWith('-') ? -1 : 1) * (Number(whole) * 100 + Number(cents));
};

const amount = fc.integer({ min: 0, max: 5_000_000 });
const entry: fc.Arbitrary<LedgerEntry> = fc
  .record({
    type: fc.constantFrom(...TRANSACTION_TYPES),
    purchaseId: fc.integer({ min: 1, max: 10_000 }),
    itemPosition: fc.integer({ min: 0, max: 3 }),
    currency: fc.constantFrom('usd', 'eur', 'gbp'),
    premium: amount,
    fee: fc.integer({ min: 0, max: 50_000 }),
    tax: fc.integer({ min: 0, max: 500_000 }),
    commission: fc.option(fc.integer({ min: 0, max: 5_000_000 }), { nil: null }),
  })
  .map((r) => {
    // Money going back (a cancellation or refund) is negative in every column, as the ledger signs it.
    const sign = r.type === 'cancellation' || r.type === 'refund' ? -1 : 1;
    const when = new Date(Date.UTC(2026, 9, 1 + (r.purchaseId % 28)));
    return {
      type: r.type,
      purchaseId: r.purchaseId,
      itemPosition: r.itemPosition,
      transactionId: r.type === 'new_business' || r.type === 'renewal' ? null : r.purchaseId + 1,
      recordedAt: when,
      effectiveAt: when,
      masterPolicyNumber: 'MP-1',
      productName: 'Event Liability',
      namedInsured: { name: 'Kim Park', address: { region: 'TX', country: 'US' } },
      riskInception: when,
      riskExpiry: when,
      coveredUnits: 1,
      currency: r.currency,
      premiumMinor: sign * r.premium,
      platformFeeMinor: sign * r.fee,
      taxMinor: sign * r.tax,
      commissionMinor: r.commission === null ? null : sign * Math.min(r.commission, r.premium),
    };
  });

test('when any entries are written, then each currency’s totals equal the sum of its rows, and each row’s net premium is gross less commission', () => {
  fc.assert(
    fc.property(fc.array(entry, { maxLength: 40 }), (entries) => {
      const totals: BordereauTotals = {};
      for (const e of entries) addToTotals(totals, e);
      const rows = entries.map((e) => bordereauRow('2026-10', e));
      const currencies = [...new Set(rows.map((r) => r[at('currency')]!))].sort();
      expect(Object.keys(totals).sort()).toEqual(currencies);
      for (const currency of currencies) {
        const mine = rows.filter((r) => r[at('currency')] === currency);
        const sum = (column: string) => mine.reduce((s, r) => s + (r[at(column)] === '' ? 0 : minorOf(r[at(column)]!)), 0);
        const t = totals[currency]!;
        expect(t.rows).toBe(mine.length);
        const withCommission = mine.some((r) => r[at('commission')] !== '');
        expect(t).toEqual({
          rows: mine.length,
          gross_premium: sum('gross_premium'),
          platform_fee: sum('platform_fee'),
          tax: sum('tax'),
          ...(withCommission ? { commission: sum('commission') } : {}),
          net_premium: sum('net_premium'),
        });
        // The spreadsheet's totals row: the same sums in major units.
        const cells = totalsCells('2026-10', currency, t);
        for (const column of MONEY)
          if (column !== 'commission' || withCommission) expect(cells[at(column)]).toBeCloseTo(sum(column) / 100, 2);
      }
      for (const r of rows)
        expect(minorOf(r[at('net_premium')]!)).toBe(
          minorOf(r[at('gross_premium')]!) - (r[at('commission')] === '' ? 0 : minorOf(r[at('commission')]!)),
        );
    }),
    { numRuns: 300 },
  );
});
