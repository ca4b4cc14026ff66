/**
 * `npm run ops -- tax-rates sync [--json]` and `npm run ops -- tax-rates list [--json]`
 * (scripts/ops.ts dispatches here): the premium tax rates are kept as data in the versioned file
 * src/taxes/premium-tax-rates.json (reviewed in git like code); `sync` makes the
 * `premium_tax_rates` table hold it (each row inserted, or updated in place by its key; rows the
 * file no longer has are kept, since a sale may have been priced by them, and counted), through
 * src/taxes/repository.ts, the table's one writer; `list` prints the table. Idempotent: a second
 * sync changes nothing. `sync` changes what every later sale is taxed, so it takes `--reason` and
 * is recorded in `operator_audit_log` before it acts (action `tax-rates-sync`, target
 * `premium_tax_rates` / the file's version, the counts as its details), the operator named as
 * every ops command names them. Exit 0; a usage error throws UsageError (exit 1).
 */
import { loadConfigOrExit } from '../src/config';
import { createDb, type Db } from '../src/db/knex';
import { createTaxRatesRepository } from '../src/taxes/repository';
import { createAuditRepository } from '../src/audit/repository';
import { audited } from '../src/audit/audited';
import data from '../src/taxes/premium-tax-rates.json';
import { UsageError } from './cli';

/** Why `sync` is run and who runs it (ops.ts checks the reason and names the operator). */
export interface SyncRecord {
  reason: string;
  identify: (db: Db, action: string) => Promise<{ actor: string } & Record<string, unknown>>;
}

export async function taxRates(sub: string | undefined, json: boolean, record?: SyncRecord): Promise<number> {
  if (sub !== 'sync' && sub !== 'list') throw new UsageError('tax-rates takes sync or list');
  if (sub === 'sync' && !record) throw new UsageError('tax-rates sync changes the service: --reason "<why>" is required');
  const config = loadConfigOrExit();
  const db = createDb(config);
  try {
    const repo = createTaxRatesRepository(db);
    if (sub === 'sync') {
      const action = 'tax-rates-sync';
      const { result, auditId } = await audited(
        createAuditRepository(db),
        {
          actorKind: 'operator_cli',
          ...(await record!.identify(db, action)),
          action,
          targetKind: 'premium_tax_rates',
          targetId: data.version,
          rootAccountId: null,
          reason: record!.reason,
        },
        () => repo.sync(data),
        {
          details: (r) => ({ version: data.version, ...r }),
          isRefusal: (err) => err instanceof UsageError,
          onFinishError: (e, id) =>
            console.error(`ops: could not record the outcome in audit entry ${id}: ${e instanceof Error ? e.message : String(e)}`),
        },
      );
      if (json) console.log(JSON.stringify({ version: data.version, ...result, audit_id: auditId }));
      else
        console.log(
          `tax rates ${data.version}: ${result.inserted} inserted, ${result.updated} updated, ${result.notInFile} in the table but not in the file (kept); audit entry ${auditId}`,
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
