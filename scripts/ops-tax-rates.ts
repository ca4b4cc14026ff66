/**
 * `npm run ops -- tax-rates sync [--json]` and `npm run ops -- tax-rates list [--json]`
 * (scripts/ops.ts dispatches here): the premium tax rates are kept as data in the versioned file
 * src/taxes/premium-tax-rates.json (reviewed in git like code); `sync` makes the
 * `premium_tax_rates` table hold it (each row inserted, or updated in place by its key; rows the
 * file no longer has are kept, since a sale may have been priced by them, and counted), through
 * src/taxes/repository.ts, the table's one writer; `list` prints the table. Idempotent: a second
 * sync changes nothing. Exit 0; a usage error throws UsageError (exit 1).
 */
import { loadConfigOrExit } from '../src/config';
import { createDb } from '../src/db/knex';
import { createTaxRatesRepository } from '../src/taxes/repository';
import data from '../src/taxes/premium-tax-rates.json';
import { UsageError } from './cli';

export async function taxRates(sub: string | undefined, json: boolean): Promise<number> {
  if (sub !== 'sync' && sub !== 'list') throw new UsageError('tax-rates takes sync or list');
  const config = loadConfigOrExit();
  const db = createDb(config);
  try {
    const repo = createTaxRatesRepository(db);
    if (sub === 'sync') {
      const result = await repo.sync(data);
      if (json) console.log(JSON.stringify({ version: data.version, ...result }));
      else
        console.log(
          `tax rates ${data.version}: ${result.inserted} inserted, ${result.updated} updated, ${result.notInFile} in the table but not in the file (kept)`,
        );
      return 0;
    }
    const rates = await repo.ratesOf([...new Set((await db('premium_tax_rates').distinct('country')).map((r) => r.country as string))]);
    if (json) console.log(JSON.stringify({ rates }));
    else
      for (const r of rates)
        console.log(
          [
            r.region ? `${r.country}-${r.region}` : r.country,
            r.lineOfBusiness,
            r.tax,
            r.method,
            r.rateBps ?? `${r.amountMinor} ${r.currency}`,
            r.effectiveFrom,
            r.effectiveTo ?? '',
            r.source.name,
          ].join(' | '),
        );
    return 0;
  } finally {
    await db.destroy();
  }
}
