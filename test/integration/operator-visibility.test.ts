/**
 * What an operator sees of a purchase in Temporal (issue 15): the search attributes the API
 * starts each run with and the workflow keeps current (AgencyId, Mode, AmountTotal,
 * BuyerEmailHash, PurchaseStatus, StatusChangedAt, CheckoutDeadline, PaidAt), the run's static
 * summary, the `status` query of the certificates child, and that no history holds personal data
 * in clear: every payload is encrypted by the service's codec and no email address appears in
 * any history of the namespace this test run uses.
 */
import type { Payload } from '@temporalio/common';
import type { History } from '@temporalio/common/lib/proto-utils';
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { eventually } from '../helpers/worker';
import { WEBHOOK_SECRET, checkoutPaidByWebhook, createQuotingAccount, scheduledActivities } from '../helpers/purchases';
import {
  certificatesWorkflowId,
  purchaseWorkflowId,
  type CertificatesStatusView,
  type PurchaseStatusView,
} from '../../workflows/contracts';
import {
  SEARCH_ATTRIBUTE_TYPES,
  AGENCY_ID,
  AMOUNT_TOTAL,
  BUYER_EMAIL_HASH,
  CHECKOUT_DEADLINE,
  MODE,
  PAID_AT,
  PURCHASE_STATUS,
  STATUS_CHANGED_AT,
} from '../../workflows/search-attributes';
import { buyerEmailHash } from '../../src/purchases/buyer-email-hash';
import { ENCODING } from '../../src/temporal/codec';
import { runScript } from '../helpers/run';
import { createOperatorService } from '../../src/operators/service';
import { createOperatorTokensRepository } from '../../src/operators/repository';
import { temporal } from '@temporalio/proto';

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/;

const stack = useStack({ app: { PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET } });
let app: TestApp;
let purchaseId: number;

beforeAll(async () => {
  app = stack.app;
  ({ purchaseId } = await checkoutPaidByWebhook(app, await createQuotingAccount(app)));
  await eventually(async () => (await app.container.db('purchases').where({ id: purchaseId }).first()).status === 'issued', 60_000);
}, 120_000);

const client = () => app.container.temporal.client;

describe('search attributes', () => {
  test('when a purchase has been paid and issued, then its run carries agency, mode, amount, hashed email, status and the times an operator filters on', async () => {
    const row = await app.container.db('purchases').where({ id: purchaseId }).first();
    const handle = client().workflow.getHandle(purchaseWorkflowId(purchaseId));
    // The final upsert lands with the workflow's last task, just after the row says issued.
    const attrs = (await eventually(async () => {
      const d = await handle.describe();
      return d.status.name === 'COMPLETED' ? d.typedSearchAttributes : null;
    }))!;
    expect(attrs.get(AGENCY_ID)).toBe(String(row.root_account_id));
    expect(attrs.get(MODE)).toBe('test');
    expect(attrs.get(AMOUNT_TOTAL)).toBe(Number(row.total_minor));
    expect(attrs.get(BUYER_EMAIL_HASH)).toBe(buyerEmailHash(app.container.config.BUYER_EMAIL_HASH_KEY, row.buyer_email));
    expect(attrs.get(BUYER_EMAIL_HASH)).toMatch(/^[0-9a-f]{64}$/);
    expect(attrs.get(PURCHASE_STATUS)).toBe('issued');
    expect(attrs.get(CHECKOUT_DEADLINE)?.getTime()).toBe(new Date(row.checkout_expires_at).getTime());
    const paidAt = attrs.get(PAID_AT);
    const changedAt = attrs.get(STATUS_CHANGED_AT);
    expect(paidAt).toBeInstanceOf(Date);
    expect(changedAt!.getTime()).toBeGreaterThanOrEqual(paidAt!.getTime());
    // The email itself is no attribute at all.
    const raw = (await handle.describe()).raw.workflowExecutionInfo?.searchAttributes?.indexedFields ?? {};
    expect(Object.keys(raw)).not.toContain('BuyerEmail');
    // Every registered attribute is set (Temporal's own, e.g. BuildIds, aside).
    expect(
      Object.keys(raw)
        .filter((k) => k in SEARCH_ATTRIBUTE_TYPES)
        .sort(),
    ).toEqual(Object.keys(SEARCH_ATTRIBUTE_TYPES).sort());
  });

  test('when the operator lists by AgencyId and Mode, then the purchase is found (it issued its certificates itself: no child), and by BuyerEmailHash too', async () => {
    const row = await app.container.db('purchases').where({ id: purchaseId }).first();
    const ids = async (query: string) => {
      const found: string[] = [];
      for await (const w of client().workflow.list({ query })) found.push(w.workflowId);
      return found.sort();
    };
    // MODE is a keyword of Temporal's query language: the attribute is quoted with backticks.
    const byAgency = `AgencyId='${row.root_account_id}' AND \`Mode\`='test'`;
    expect(await eventually(async () => ((await ids(byAgency)).length > 0 ? ids(byAgency) : null))).toEqual([
      purchaseWorkflowId(purchaseId),
    ]);
    expect(await ids(`AgencyId='${row.root_account_id}' AND \`Mode\`='live'`)).toEqual([]);
    const hash = buyerEmailHash(app.container.config.BUYER_EMAIL_HASH_KEY, `  ${String(row.buyer_email).toUpperCase()} `);
    expect(await ids(`BuyerEmailHash='${hash}' AND WorkflowType='purchaseWorkflow'`)).toEqual([purchaseWorkflowId(purchaseId)]);
  });
});

describe('npm run ops: find and setup-namespace', () => {
  test('when find is given the buyer email (any case), then it lists the purchase run by its hash and prints the query, never the address', async () => {
    const row = await app.container.db('purchases').where({ id: purchaseId }).first();
    const run = await runScript('scripts/ops.ts', ['find', '--email', String(row.buyer_email).toUpperCase(), '--mode', 'test', '--json'], {
      LOG_LEVEL: 'silent',
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.query).toBe(
      `BuyerEmailHash='${buyerEmailHash(app.container.config.BUYER_EMAIL_HASH_KEY, row.buyer_email)}' AND \`Mode\`='test'`,
    );
    // The purchase run, which issued the certificates itself (no certificates child).
    const facts = {
      status: 'COMPLETED',
      purchaseStatus: 'issued',
      agencyId: String(row.root_account_id),
      mode: 'test',
      amountTotal: Number(row.total_minor),
    };
    expect(out.runs).toEqual(
      expect.arrayContaining([expect.objectContaining({ workflowId: purchaseWorkflowId(purchaseId), type: 'purchaseWorkflow', ...facts })]),
    );
    expect(out.runs).toHaveLength(1);
    // An address no suite of this run uses (find searches the whole namespace).
    const none = await runScript('scripts/ops.ts', ['find', '--email', `nobody.${purchaseId}.${Date.now()}@example.com`], {
      LOG_LEVEL: 'silent',
    });
    expect(none.stdout).toContain('no purchase runs for this address');
    const bad = await runScript('scripts/ops.ts', ['find', '--email', 'not-an-address']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^ops: --email must be an email address, got "not-an-address"/m);
    const missing = await runScript('scripts/ops.ts', ['find']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^ops: --email <address> is required/m);
  }, 60_000);

  test('when setup-namespace runs on a new namespace and again, then it creates it with every attribute once and the second run changes nothing; without --reason it does nothing', async () => {
    const namespace = `ops-setup-${process.pid}-${Date.now()}`;
    try {
      const unexplained = await runScript('scripts/ops.ts', ['setup-namespace', '--namespace', namespace, '--json'], {
        LOG_LEVEL: 'silent',
      });
      expect(unexplained.code).toBe(1);
      expect(unexplained.stderr).toMatch(/^ops: setup-namespace changes the service: --reason "<why>" is required/m);
      await expect(client().connection.workflowService.describeNamespace({ namespace })).rejects.toMatchObject({ code: 5 /* NOT_FOUND */ });
      // The deployer is named by their operator token, not by a name typed on the command line.
      const deployer = `deployer-${process.pid}-${Date.now()}`;
      const { token: deployerToken } = await createOperatorService({ repo: createOperatorTokensRepository(app.container.db) }).issue(
        deployer,
        'test',
      );
      const first = await runScript(
        'scripts/ops.ts',
        ['setup-namespace', '--namespace', namespace, '--retention-days', '3', '--reason', 'new namespace', '--json'],
        { LOG_LEVEL: 'silent', OPERATOR_TOKEN: deployerToken },
      );
      expect(first.stderr).toBe('');
      const created = JSON.parse(first.stdout);
      expect(created).toMatchObject({
        namespace,
        created: true,
        retention_days: 3,
        already_registered: [],
        legacy_buyer_email_attribute: false,
        audit_id: expect.any(Number),
      });
      expect(await app.container.db('operator_audit_log').where({ id: created.audit_id }).first()).toMatchObject({
        actor_kind: 'operator_cli',
        actor: deployer,
        actor_via: 'operator_token',
        action: 'setup-namespace',
        target_kind: 'namespace',
        target_id: namespace,
        reason: 'new namespace',
        outcome: 'succeeded',
      });
      expect([...created.registered].sort()).toEqual(Object.keys(SEARCH_ATTRIBUTE_TYPES).sort());
      const listed = await client().connection.operatorService.listSearchAttributes({ namespace });
      expect(Object.keys(listed.customAttributes).sort()).toEqual(Object.keys(SEARCH_ATTRIBUTE_TYPES).sort());
      const second = JSON.parse(
        (
          await runScript('scripts/ops.ts', ['setup-namespace', '--namespace', namespace, '--reason', 'after an upgrade', '--json'], {
            LOG_LEVEL: 'silent',
          })
        ).stdout,
      );
      expect(second).toMatchObject({ namespace, created: false, registered: [] });
      expect([...second.already_registered].sort()).toEqual(Object.keys(SEARCH_ATTRIBUTE_TYPES).sort());
    } finally {
      await client()
        .connection.operatorService.deleteNamespace({ namespace })
        .catch(() => undefined);
    }
  }, 60_000);
});

describe('workflow UI aids', () => {
  test('when the purchase run is described, then its static summary names the purchase, agency, mode and amount', async () => {
    const row = await app.container.db('purchases').where({ id: purchaseId }).first();
    const d = await client().workflow.getHandle(purchaseWorkflowId(purchaseId)).describe();
    expect(await d.staticSummary()).toBe(
      `Purchase ${purchaseId} · agency ${row.root_account_id} · test · USD ${(Number(row.total_minor) / 100).toFixed(2)}`,
    );
    expect(await d.staticDetails()).toContain(`${row.total_minor} minor units`);
  });

  test('when the purchase is queried for status, then it answers its certificate issuance phase and batches, and no certificates child ran', async () => {
    const view = await client().workflow.getHandle(purchaseWorkflowId(purchaseId)).query<PurchaseStatusView>('status');
    const certificates: CertificatesStatusView = { purchaseId, phase: 'issued', round: 0, batchesDone: 1, batchesTotal: 1 };
    expect(view).toMatchObject({ purchaseId, status: 'issued', certificates });
    await expect(client().workflow.getHandle(certificatesWorkflowId(purchaseId)).describe()).rejects.toThrow(/not found/i);
  });

  test('when a one-day purchase paid by webhook is issued, then its one workflow history runs one heavy activity (render, zips and check together) in at most 32 events (the cost goal; was 30, plus 22 in its certificates child)', async () => {
    const history = await client().workflow.getHandle(purchaseWorkflowId(purchaseId)).fetchHistory();
    const types = (history.events ?? []).map((e) => temporal.api.enums.v1.EventType[e.eventType ?? 0]);
    // The checkout session and the database steps are local activities (one marker each): the
    // only activity scheduled is the certificates' render-and-store step, on its own task queue.
    const scheduled = (history.events ?? [])
      .filter((e) => e.activityTaskScheduledEventAttributes)
      .map((e) => e.activityTaskScheduledEventAttributes!.activityType?.name);
    expect(scheduled).toEqual(['issueCertificatesAndArchives']);
    for (const step of ['createCheckoutSession', 'recordPayment', 'planCertificates', 'markCertificatesIssued'])
      expect({ step, n: scheduledActivities(history, step) }).toEqual({ step, n: 1 });
    expect(types).not.toContain('EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED');
    expect({ events: types.length, types }).toEqual({ events: Math.min(types.length, 32), types });
  });

  test('when the purchase history is read, then its timers are named for the UI', async () => {
    const history = await client().workflow.getHandle(purchaseWorkflowId(purchaseId)).fetchHistory();
    const summaries = await Promise.all(
      (history.events ?? [])
        .filter((e) => e.timerStartedEventAttributes)
        .map(async (e) =>
          e.userMetadata?.summary
            ? (await client().options.loadedDataConverter.payloadCodecs[0]!.decode([e.userMetadata.summary as Payload]))[0]
            : null,
        ),
    );
    expect(summaries.length).toBeGreaterThan(0);
    for (const s of summaries) expect(JSON.parse(Buffer.from(s!.data!).toString('utf8'))).toMatch(/checkout deadline|next payment check/);
  });
});

/** Every payload-shaped value under `node` that is not a search attribute, with its path. */
function payloadsOf(node: unknown, path: string, out: Array<{ path: string; payload: Payload }>): void {
  if (!node || typeof node !== 'object' || node instanceof Uint8Array) return;
  if (/searchAttributes$/i.test(path)) return; // indexed values, never encoded by a codec
  if (/markerRecordedEventAttributes\.details\.patch-data$/.test(path)) return; // the SDK's patch ids (code names, no data)
  // A local activity's marker: the SDK's record of it (sequence, attempt, type, times) is written by
  // the SDK itself; the activity's result beside it (`details.result`) is a payload of ours.
  if (/markerRecordedEventAttributes\.details\.data$/.test(path)) return;
  const o = node as Record<string, unknown>;
  if (o.data instanceof Uint8Array && o.metadata && typeof o.metadata === 'object') {
    // The server's own note when it cancels an activity that had not started (no data of ours).
    const serverNote =
      /activityTaskCanceledEventAttributes\.details\.payloads\.\d+$/.test(path) &&
      Buffer.from(o.data).toString('utf8') === '"ACTIVITY_ID_NOT_STARTED"';
    if (!serverNote) out.push({ path, payload: o as Payload });
    return;
  }
  for (const [k, v] of Object.entries(o)) payloadsOf(v, `${path}.${k}`, out);
}

/**
 * Every byte string and string under `node`, as text, except the ciphertext of a payload our codec
 * encrypted (its metadata still counts): random bytes now and then decode to text shaped like an
 * email address (a local CI run found "n@v.ra" in one). The test's payload check sees that every
 * payload is encrypted.
 */
function textsOf(node: unknown, out: string[]): void {
  if (typeof node === 'string') out.push(node);
  else if (node instanceof Uint8Array) out.push(Buffer.from(node).toString('utf8'));
  else if (node && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    const metadata = o.metadata as Record<string, Uint8Array> | undefined;
    const encrypted =
      o.data instanceof Uint8Array && metadata?.encoding instanceof Uint8Array && Buffer.from(metadata.encoding).toString() === ENCODING;
    for (const [k, v] of Object.entries(o)) if (!(encrypted && k === 'data')) textsOf(v, out);
  }
}

describe('buyer data in histories', () => {
  test('when every workflow history of this test run is read as stored, then no email address appears and every payload is encrypted', async () => {
    const histories: Array<{ id: string; history: History }> = [];
    for await (const w of client().workflow.list()) {
      histories.push({ id: w.workflowId, history: await client().workflow.getHandle(w.workflowId, w.runId).fetchHistory() });
    }
    // This test's own purchase at least; the other suites of the run add theirs.
    expect(histories.map((h) => h.id)).toEqual(expect.arrayContaining([purchaseWorkflowId(purchaseId)]));
    let payloads = 0;
    for (const { id, history } of histories) {
      const texts: string[] = [];
      textsOf(history, texts);
      const leaked = texts.find((t) => EMAIL.test(t));
      expect({ id, leaked: leaked?.match(EMAIL)?.[0] }).toEqual({ id, leaked: undefined });
      const found: Array<{ path: string; payload: Payload }> = [];
      payloadsOf(history, 'history', found);
      payloads += found.length;
      const clear = found.filter((f) => Buffer.from(f.payload.metadata?.encoding ?? new Uint8Array()).toString() !== ENCODING);
      // Runs recorded before the codec (none in a fresh namespace) would show up here.
      expect({
        id,
        clear: clear.map(
          (c) =>
            `${c.path}: ${Buffer.from(c.payload.data ?? new Uint8Array())
              .toString('utf8')
              .slice(0, 200)}`,
        ),
      }).toEqual({ id, clear: [] });
    }
    expect(payloads).toBeGreaterThan(histories.length);
  }, 180_000); // every history the run's suites have written so far, read one by one
});
