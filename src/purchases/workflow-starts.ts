/**
 * What the API's workflow clients share (src/purchases/sale-workflow-client.ts,
 * owner-workflow-client.ts, batch-workflow-client.ts): their dependencies, the purchase facts a run
 * starts with, its search attributes and summary, a start that happens once per business id, and
 * a deadline on a call. The API never holds the Temporal client anywhere else.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { toMajorUnits } from '../shared/money';
import { AppError } from '../shared/errors';
import {
  AGENCY_ID,
  AMOUNT_TOTAL,
  BUYER_EMAIL_HASH,
  MODE,
  PURCHASE_ID,
  PURCHASE_STATUS,
  STATUS_CHANGED_AT,
} from '../../workflows/search-attributes';
import { buyerEmailHash } from './buyer-email-hash';
import type { PurchaseRecord } from './purchase-record';

/** What the workflow clients are built with (durations in seconds unless named ms). */
export interface WorkflowClientDeps {
  client: Client;
  taskQueue: string;
  sessionTtlSeconds: number;
  pollIntervalSeconds: number;
  /** Cap of the wait between two tries of a processor call inside the workflow, in seconds. */
  retryMaxIntervalSeconds?: number;
  /** How long a call waits for a workflow's answer, in ms (default 30 000). */
  timeoutMs?: number;
  /** Key of the `BuyerEmailHash` search attribute (BUYER_EMAIL_HASH_KEY). */
  buyerEmailHashKey: string;
}

/**
 * What a purchase workflow client works with, from its `deps`: how long it waits for a workflow's
 * answer (`timeoutMs`, 30 000 ms unless `deps.timeoutMs` says) and the search attributes and
 * summary a run of a purchase starts with (`startAttributes`, its buyer's email hashed with the
 * deployment's key).
 */
export function clientSettings(deps: WorkflowClientDeps) {
  return {
    timeoutMs: deps.timeoutMs ?? 30_000,
    startAttributes: (p: PurchaseStartFacts) => startAttributes(deps.buyerEmailHashKey, p),
  };
}

/** What a purchase workflow is started with: the purchase's operator-facing facts (amount in minor units). */
export type PurchaseStartFacts = Pick<
  PurchaseRecord,
  'id' | 'rootAccountId' | 'mode' | 'totalMinor' | 'currency' | 'buyerEmail' | 'status'
>;

/** `1234` minor units of `usd` → `USD 12.34` (the service's money rules; the summary is for people). */
function money(minor: number, currency: string): string {
  return `${currency.toUpperCase()} ${toMajorUnits(minor).toFixed(2)}`;
}

/** Finds the processor error type an activity failed with, anywhere in the cause chain. */
export function processorType(err: unknown): string | undefined {
  for (let e = err as { type?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (typeof e.type === 'string' && e.type.startsWith('Stripe')) return e.type;
  }
  return undefined;
}

/**
 * Search attributes and UI summary a purchase run starts with (workflows/search-attributes.ts):
 * the operator finds it by agency, mode, amount and hashed buyer email, never the email itself.
 */
export function startAttributes(buyerEmailHashKey: string, p: PurchaseStartFacts) {
  const typedSearchAttributes: SearchAttributePair[] = [
    { key: PURCHASE_ID, value: String(p.id) },
    { key: AGENCY_ID, value: String(p.rootAccountId) },
    { key: MODE, value: p.mode },
    { key: AMOUNT_TOTAL, value: p.totalMinor },
    { key: PURCHASE_STATUS, value: p.status },
    { key: STATUS_CHANGED_AT, value: new Date() },
  ];
  if (p.buyerEmail) typedSearchAttributes.push({ key: BUYER_EMAIL_HASH, value: buyerEmailHash(buyerEmailHashKey, p.buyerEmail) });
  return {
    typedSearchAttributes,
    staticSummary: `Purchase ${p.id} · agency ${p.rootAccountId} · ${p.mode} · ${money(p.totalMinor, p.currency)}`,
    staticDetails: [
      `**Purchase** ${p.id}`,
      `**Agency** (root account) ${p.rootAccountId}`,
      `**Mode** ${p.mode}`,
      `**Amount** ${money(p.totalMinor, p.currency)} (${p.totalMinor} minor units)`,
    ].join('\n\n'),
  };
}

/**
 * Starts `workflow` (the workflow function itself, typed by its input) once per business id on the
 * main queue; false when that id was started before (a redelivered event).
 */
export async function startOnce<I>(
  deps: Pick<WorkflowClientDeps, 'client' | 'taskQueue'>,
  workflow: (input: I) => Promise<unknown>,
  workflowId: string,
  input: I,
): Promise<boolean> {
  try {
    await deps.client.workflow.start(workflow, {
      workflowId,
      taskQueue: deps.taskQueue,
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

/** Races `call` against `timeoutMs`: no answer by then rejects with a 503 CONNECTION_ERROR saying `lateMessage` (the call goes on). */
export async function withDeadline<T>(call: Promise<T>, timeoutMs: number, lateMessage: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AppError('CONNECTION_ERROR', lateMessage)), timeoutMs);
  });
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
