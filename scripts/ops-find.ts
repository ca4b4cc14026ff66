/**
 * `npm run ops -- find --email <address> [--mode test|live]` (scripts/ops.ts dispatches here):
 * the purchase runs of a buyer, found by the keyed BuyerEmailHash search attribute (the address
 * never reaches Temporal), and each purchase's coverage from its own record
 * (src/purchases/purchase-standing.ts). A run's PurchaseStatus is what that run last published:
 * the sale run `purchase-<id>` completes `issued` and keeps saying so after a cancellation or a
 * refund, which only the owner `policy-<id>` and `purchases.status` tell (issue 55 item 1).
 * Read-only; exit 0; a usage error throws UsageError (exit 1).
 */
import { loadConfigOrExit } from '../src/config';
import { createDb } from '../src/db/knex';
import { createSaleRepository } from '../src/purchases/sale-repository';
import { createTemporalClient } from '../src/temporal/client';
import { buyerEmailHash } from '../src/purchases/buyer-email-hash';
import { purchaseStanding, type PurchaseStanding } from '../src/purchases/purchase-standing';
import { UsageError } from './cli';
import { AGENCY_ID, AMOUNT_TOTAL, MODE, PURCHASE_ID, PURCHASE_STATUS, STATUS_CHANGED_AT } from '../workflows/search-attributes';

/** One run `find` lists: `purchaseStatus` is the purchase's own status, `runPurchaseStatus` the run's search attribute. */
export interface FoundRun {
  workflowId: string;
  runId: string;
  type: string;
  status: string;
  purchaseId: number | null;
  purchaseStatus: string | null;
  runPurchaseStatus: string | null;
  agencyId: string | null;
  mode: string | null;
  amountTotal: number | null;
  startTime: string;
  statusChangedAt: string | null;
}

/** The purchase id a run belongs to: its PurchaseId attribute, else its business id (`purchase-12`, `policy-12`, `certificates-12`). */
function purchaseIdOf(workflowId: string, attribute: string | undefined): number | null {
  const text = attribute ?? /^(?:purchase|policy|certificates)-(\d+)$/.exec(workflowId)?.[1];
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : null;
}

/**
 * Lists the runs, newest first as Temporal answers, then reads each purchase's standing once.
 * Prints `{ query, purchases, runs }` with `json`, else the query, one line per purchase (its
 * coverage) and one per run under it.
 */
export async function find(email: string | undefined, mode: string | undefined, json: boolean): Promise<number> {
  if (!email) throw new UsageError('--email <address> is required');
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim())) throw new UsageError(`--email must be an email address, got "${email}"`);
  if (mode !== undefined && mode !== 'test' && mode !== 'live') throw new UsageError(`--mode must be test or live, got "${mode}"`);
  const config = loadConfigOrExit();
  const temporal = createTemporalClient(config);
  const db = createDb(config);
  try {
    const hash = buyerEmailHash(config.BUYER_EMAIL_HASH_KEY, email);
    // MODE is a keyword of Temporal's query language, hence the backticks.
    const query = `BuyerEmailHash='${hash}'${mode ? ` AND \`Mode\`='${mode}'` : ''}`;
    const sales = createSaleRepository(db);
    const standings = new Map<number, PurchaseStanding | undefined>();
    const runs: FoundRun[] = [];
    for await (const w of temporal.client.workflow.list({ query })) {
      const a = w.typedSearchAttributes;
      const purchaseId = purchaseIdOf(w.workflowId, a.get(PURCHASE_ID));
      if (purchaseId !== null && !standings.has(purchaseId)) standings.set(purchaseId, await purchaseStanding(sales, purchaseId));
      runs.push({
        workflowId: w.workflowId,
        runId: w.runId,
        type: w.type,
        status: w.status.name,
        purchaseId,
        purchaseStatus: purchaseId === null ? null : (standings.get(purchaseId)?.status ?? null),
        runPurchaseStatus: a.get(PURCHASE_STATUS) ?? null,
        agencyId: a.get(AGENCY_ID) ?? null,
        mode: a.get(MODE) ?? null,
        amountTotal: a.get(AMOUNT_TOTAL) ?? null,
        startTime: w.startTime.toISOString(),
        statusChangedAt: a.get(STATUS_CHANGED_AT)?.toISOString() ?? null,
      });
    }
    const purchases = [...standings.values()].filter((s): s is PurchaseStanding => s !== undefined);
    if (json) console.log(JSON.stringify({ query, purchases, runs }));
    else {
      console.log(`query: ${query}`);
      if (runs.length === 0) console.log('no purchase runs for this address');
      for (const s of purchases) {
        console.log(`purchase ${s.purchase_id} (agency ${s.root_account_id}, ${s.mode}): ${s.summary}`);
        for (const r of runs.filter((x) => x.purchaseId === s.purchase_id))
          console.log(
            `  ${r.workflowId} ${r.status}${r.runPurchaseStatus ? ` (run last said ${r.runPurchaseStatus})` : ''} amount ${r.amountTotal ?? '?'} (minor units) started ${r.startTime}`,
          );
      }
      for (const r of runs.filter((x) => x.purchaseId === null || !standings.get(x.purchaseId)))
        console.log(`${r.workflowId} ${r.status} purchase not found in the database (run last said ${r.runPurchaseStatus ?? '?'})`);
    }
    return 0;
  } finally {
    await temporal.close();
    await db.destroy();
  }
}
