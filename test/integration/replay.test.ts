/**
 * The guard for workflow code changes: every history in test/histories/ — real runs of today's
 * code, recorded by `scripts/record-histories.ts` on the real stack, at least one for each
 * workflow type the worker registers (the sale paid, expired, found paid by the periodic check and
 * still waiting; the owner `policy-<id>` after cancellations, holders, endorsements, the
 * processor's refund and dispute; reissue, renewal, bulk cancellation, holder notices, emails,
 * event deliveries, a bordereau and the monthly run) — must replay against the current workflow
 * bundle without a nondeterminism error. Before the first deployment a change re-records them;
 * after it, a change that would break a deployed history goes behind `patched()` and the deployed
 * histories stay beside the new ones (docs/operations.md, "Changing workflow code").
 *
 * Two fixture bundles show the test has teeth: the same change without `patched()` must fail on
 * every saved purchase history, and with `patched()` must replay them all.
 *
 * Histories are stored as `JSON.stringify(fetchHistory())` and loaded with the proto class's
 * `fromObject`: the SDK's own JSON reader (`historyFromJSON`, used by `runReplayHistory` for
 * JSON input) fails in this install ("type must be a Type": @temporalio/common and
 * @temporalio/proto each carry their own protobufjs copy).
 */
import fs from 'node:fs';
import path from 'node:path';
import { DefaultLogger, Runtime, Worker, bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { temporal } from '@temporalio/proto';
import type { History } from '@temporalio/common/lib/proto-utils';
import { loadConfig } from '../../src/config';
import { dataConverterFor } from '../../src/temporal/codec';

const HISTORIES = path.resolve(__dirname, '../histories');
const FILES = fs
  .readdirSync(HISTORIES)
  .filter((f) => f.endsWith('.json'))
  .sort();
/** The histories the fixtures' changes meet: the sale's and the owner's. */
const CHANGED_FILES = FILES.filter((f) => f.startsWith('purchase-') || f.startsWith('policy-'));

function loadHistory(file: string): History {
  return temporal.api.history.v1.History.fromObject(JSON.parse(fs.readFileSync(path.join(HISTORIES, file), 'utf8')));
}

function workflowType(history: History): string | null | undefined {
  return history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
}

/** Bundling logs each webpack run at INFO; only problems are worth showing in test output. */
const quiet = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string, meta?: unknown) => console.warn(message, meta ?? ''),
  error: (message: string, meta?: unknown) => console.error(message, meta ?? ''),
};

/**
 * Histories recorded since payloads are encrypted carry `binary/encrypted` payloads: replay decodes
 * them with the payload codec and the development keys they were recorded with (the test config's).
 */
const dataConverter = dataConverterFor(loadConfig(process.env).TEMPORAL_PAYLOAD_KEYS);

const bundle = (workflowsPath: string): Promise<WorkflowBundle> => bundleWorkflowCode({ workflowsPath, logger: quiet });

/** Replays one saved history; resolves with the replay's error, or undefined when it replayed cleanly. */
async function replay(workflowBundle: WorkflowBundle, file: string): Promise<Error | undefined> {
  try {
    await Worker.runReplayHistory(
      { workflowBundle, replayName: `replay-${file}`, dataConverter },
      loadHistory(file),
      file.replace(/\.json$/, ''),
    );
    return undefined;
  } catch (err) {
    return err as Error;
  }
}

let current: WorkflowBundle;
beforeAll(async () => {
  // Each replay starts and stops a worker, which the SDK logs at INFO; keep warnings and errors.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  current = await bundle(require.resolve('../../workflows'));
}, 120_000);

describe('saved histories', () => {
  test('when test/histories is read, then it holds every recorded purchase scenario and the certificates child', () => {
    expect(FILES).toEqual(
      expect.arrayContaining([
        'purchase-paid-webhook.json',
        'purchase-expired.json',
        'purchase-paid-periodic-check.json',
        'purchase-awaiting-payment.json',
        'purchase-failed.json',
        'purchase-resumed-paid.json',
        'purchase-paid-saved-card.json',
        'certificates-issued.json',
        'policy-cancelled.json',
        'policy-scheduled.json',
        'bulk-cancellation.json',
        'policy-processor-refund-dispute.json',
        'proof-email-sent.json',
        'event-delivery-succeeded.json',
        'policy-renewal-issued.json',
        'policy-holder-added-removed.json',
        'policy-endorsed.json',
        'policy-endorsed-priced.json',
        'policy-holder-endorsement-refunded.json',
        'policy-reissue.json',
        'purchase-paid-handoff.json',
        'policy-holder-during-issuance.json',
        'stored-documents-sweep.json',
        'claim-lifecycle.json',
        'claim-paid-out.json',
      ]),
    );
    const typeOf: Record<string, string> = {
      purchase: 'purchaseWorkflow',
      certificates: 'certificatesWorkflow',
      policy: 'policyWorkflow',
      bulk: 'bulkCancellationWorkflow',
      holder: 'holderNoticesWorkflow',
      bordereau: 'bordereauWorkflow',
      monthly: 'monthlyBordereauxWorkflow',
      proof: 'proofOfCoverageEmailWorkflow',
      event: 'eventDeliveryWorkflow',
      stored: 'storedDocumentsSweepWorkflow',
      claim: 'claimWorkflow',
    };
    for (const file of FILES) {
      const history = loadHistory(file);
      expect(history.events!.length).toBeGreaterThan(3);
      expect(workflowType(history)).toBe(typeOf[file.split('-')[0]!]);
    }
  });

  test('when the workflows the worker registers are listed, then each type has at least one recorded history', () => {
    // The worker registers every function workflows/index.ts exports whose name ends in "Workflow".
    const index = fs.readFileSync(path.resolve(__dirname, '../../workflows/index.ts'), 'utf8');
    const registered = [...index.matchAll(/\b(\w+Workflow)\b/g)].map((m) => m[1]!);
    const recorded = new Set(FILES.map((f) => workflowType(loadHistory(f))));
    expect(registered.filter((type) => !recorded.has(type))).toEqual([]);
  });

  test.each(FILES)(
    'when %s is replayed against the current workflow code, then it replays without a nondeterminism error',
    async (file) => {
      const error = await replay(current, file);
      expect(error).toBeUndefined();
    },
  );
});

describe('the replay guard itself', () => {
  test('when a workflow change is made without patched(), then replaying every saved purchase and policy history fails with a DeterminismViolationError', async () => {
    const unpatched = await bundle(path.resolve(__dirname, '../fixtures/workflows-unpatched-change.ts'));
    expect(CHANGED_FILES.length).toBeGreaterThanOrEqual(12);
    for (const file of CHANGED_FILES) {
      const error = await replay(unpatched, file);
      expect({ file, error }).toEqual({ file, error: expect.any(DeterminismViolationError) });
      expect(error!.message).toMatch(/nondetermin/i);
    }
  }, 120_000);

  test('when the same change is made behind patched(), then every saved history still replays', async () => {
    const withPatch = await bundle(path.resolve(__dirname, '../fixtures/workflows-patched-change.ts'));
    for (const file of FILES) {
      expect({ file, error: await replay(withPatch, file) }).toEqual({ file, error: undefined });
    }
  }, 120_000);
});
