/**
 * The real side of the model-based suite (issue 54): the API and a worker on a task queue of their
 * own, against the servers the global setup brought up, with the processor (stripe-mock) reached
 * through a TCP proxy that can refuse connections (an outage), then a gate that can hang (accept
 * and hold every request until opened: test/helpers/processor-gate.ts), then the recording proxy
 * (every refund request with its amount, payment intent and idempotency key; it answers every
 * charge of a saved card as paid, a payment intent id of its own each); the processor's
 * client gives up after PAYPROC_TIMEOUT_MS (3 s here) and tries again with the same key. Storage
 * (fake-gcs-server) through a TCP proxy of its own. The worker can be restarted on the same task
 * queue (`restartWorker`), and started with replaced activities (a deliberately broken rule).
 * One quoting account whose test key charges a platform fee of `PLATFORM_FEE_BPS`, with two products
 * written for an insurer that appointed it (`partyId`, the party of its bordereaux): event
 * liability (20.00 a day) and an equipment damage waiver (10.00 a day), and a bundle of the two
 * (`bundleId`, event liability its primary product), and a monthly product (30.00 a day, sold as
 * a subscription: `monthlyProductId`), with one webhook
 * endpoint taking every event type: a local receiver that answers 200 at once and counts each
 * event id it is sent (`eventsReceived`).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from '../helpers/app';
import { call, connectBuyer, createKey, createQuestionSet, createRootAccountOfKind } from '../helpers/fixtures';
import { startProcessorGate, type ProcessorGate } from '../helpers/processor-gate';
import { answerPaymentIntentsAsPaid, startProcessorProxy, type ProcessorProxy } from '../helpers/processor-proxy';
import { WEBHOOK_SECRET, createEventProductAccount, createMonthlyProduct, specialEventSelection } from '../helpers/purchases';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { startTestWorker, uniqueTaskQueue, type TestWorker } from '../helpers/worker';
import { EQUIPMENT_DAMAGE_WAIVER } from '../../src/question-sets/examples';
import { EQUIPMENT_DAY_PREMIUM_MINOR, type PolicyModel } from './policy-model';

/** The platform fee rate of the suite's key, basis points (333: a fee that never ends in a half minor unit). */
export const PLATFORM_FEE_BPS = 333;

/** The platform fee of a premium `subtotalMinor` at PLATFORM_FEE_BPS (rounded to the minor unit; pricing.ts's rule). */
export const platformFeeOf = (subtotalMinor: number): number => Math.round((subtotalMinor * PLATFORM_FEE_BPS) / 10_000);

/** What the worker is started with: replaced activities (see startTestWorker). */
export type WorkerActivities = Parameters<typeof startTestWorker>[1];

/** Counts of what the suite did, for its printed figures and reports. */
export interface RunFigures {
  sequences: number;
  steps: number;
  faults: number;
  /** Per command name, how many ran. */
  byCommand: Record<string, number>;
  /** Per command name, how many of its runs injected a fault (their sum is `faults`). */
  faultsByCommand: Record<string, number>;
}

export interface ModelStack {
  app: TestApp;
  worker: TestWorker;
  /** The recording proxy in front of stripe-mock. */
  recorder: ProcessorProxy;
  /** Between the service (API and worker) and the gate: refuses connections while down. */
  processor: TcpProxy;
  /** Between that proxy and the recording proxy: holds every request while it hangs. */
  gate: ProcessorGate;
  /** Between the worker and storage. */
  storage: TcpProxy;
  key: string;
  /** Event liability, 20.00 a day. */
  productId: number;
  /** The bundle of event liability (primary) and the equipment damage waiver, 10.00 a day. */
  bundleId: number;
  /** The monthly product (30.00 a day), sold as a subscription. */
  monthlyProductId: number;
  sellerSlug: string;
  /** Every operation's documented error codes, by `METHOD path-template`, read from the app's /openapi.json. */
  documentedCodes: Map<string, Set<string>>;
  /** The insurer the product names (root account id): the party of the account's bordereaux. */
  partyId: number;
  /**
   * Set once the run's time limit has passed: fast-check then stops waiting for the sequence in
   * flight, which must not start another command (see `step`) before `inflight` settles.
   */
  stopping: boolean;
  /** The sequence in flight (settled, never rejected). */
  inflight: Promise<void>;
  /** The model of every sequence run so far, for the bordereau check at the end of the run (their ledgers). */
  models: PolicyModel[];
  /** The UTC month (YYYY-MM) the stack started in. */
  startedMonth: string;
  /** How many times the account's webhook endpoint was sent each event id. */
  eventsReceived: Map<string, number>;
  figures: RunFigures;
  /** Stops the worker and starts another one on the same task queue with the same activities. */
  restartWorker(): Promise<void>;
  close(): Promise<void>;
}

/** Every UPPER_SNAKE word of the operation's error answers, per `METHOD /path/{template}`; the idempotency codes where it takes an Idempotency-Key. */
function codesOf(openapi: any): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const [path, ops] of Object.entries<Record<string, any>>(openapi.paths ?? {})) {
    for (const [method, op] of Object.entries<any>(ops)) {
      const text = JSON.stringify(op?.responses ?? {}) + String(op?.description ?? '');
      const codes = new Set<string>(text.match(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g) ?? []);
      if (/Idempotency-Key/i.test(text)) ['IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_KEY_IN_PROGRESS'].forEach((c) => codes.add(c));
      out.set(`${method.toUpperCase()} ${path}`, codes);
    }
  }
  return out;
}

/**
 * Starts the stack (see the module docstring); `activities` replace the worker's (a broken rule).
 * The worker and the API retry at most every 2 s, so an outage's end is seen within seconds.
 */
export async function startModelStack(activities: WorkerActivities = {}): Promise<ModelStack> {
  const recorder = await startProcessorProxy();
  // A saved card pays every charge (an endorsement's), each its own payment intent.
  let intents = 0;
  answerPaymentIntentsAsPaid(recorder, { newId: () => `pi_model_${Date.now()}_${intents++}` });
  const recorded = new URL(recorder.url);
  const gate = await startProcessorGate({ host: '127.0.0.1', port: 0, target: { host: recorded.hostname, port: Number(recorded.port) } });
  const gated = new URL(gate.url);
  const processor = await startTcpProxy({ host: gated.hostname, port: Number(gated.port) });
  const gcs = new URL(process.env.STORAGE_API_ENDPOINT ?? 'http://127.0.0.1:4443');
  const storage = await startTcpProxy({ host: gcs.hostname, port: Number(gcs.port) });
  const taskQueue = uniqueTaskQueue();
  // Retries at most every 2 s, and a hung processor given up after 3 s, so that faults end in seconds.
  const retry = { PURCHASE_RETRY_MAX_INTERVAL_SECONDS: '2', PAYPROC_TIMEOUT_MS: '3000' };
  const workerEnv = { PAYPROC_API_BASE: processor.url, STORAGE_API_ENDPOINT: storage.url, ...retry };
  let worker = await startTestWorker(taskQueue, activities, workerEnv);
  const app = await startTestApp({
    TEMPORAL_TASK_QUEUE: taskQueue,
    PAYPROC_API_BASE: processor.url,
    PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET,
    RATE_LIMIT_PER_MINUTE: '1000000',
    ...retry,
  });
  const { account, productId } = await createEventProductAccount(app, 'Model Agency');
  const key = (await createKey(app.container, { rootAccountId: account.id, mode: 'test', platformFeeBps: PLATFORM_FEE_BPS })).key;
  const party = await createRootAccountOfKind(app.container, 'insurer', 'Model Mutual Insurance Co.', [account.id]);
  const waiverSet = await createQuestionSet(app.container, account.id, EQUIPMENT_DAMAGE_WAIVER);
  const waiver = await call(app.baseUrl, '/api/v1/products', {
    method: 'POST',
    key,
    body: { customerName: 'Equipment Damage Waiver', defaultPrice: EQUIPMENT_DAY_PREMIUM_MINOR / 100, questionSetId: waiverSet.id },
  });
  if (waiver.status !== 201 && waiver.status !== 200) throw new Error(`equipment product: ${waiver.status} ${waiver.text}`);
  const monthlyProductId = await createMonthlyProduct(app, account.id, key, 'MODEL-MONTHLY-1');
  for (const id of [productId, waiver.body.data.id as number, monthlyProductId]) {
    const named = await call(app.baseUrl, `/api/v1/products/${id}`, { method: 'PATCH', key, body: { insurerRootAccountID: party.id } });
    if (named.status !== 200) throw new Error(`product ${id}'s insurer: ${named.status} ${named.text}`);
  }
  const bundle = await call(app.baseUrl, '/api/v1/bundles', {
    method: 'POST',
    key,
    body: {
      bundle_name: 'Model event and equipment',
      customer_facing_name: 'Event and Equipment',
      internally_facing_name: 'MODEL-BUNDLE',
      bundle_description: 'Event liability and equipment damage waiver for the same days.',
      is_recurring: false,
      is_test_mode: true,
      root_seller_db_id: account.id,
      product_ids: [productId, waiver.body.data.id],
    },
  });
  if (bundle.status !== 201) throw new Error(`bundle: ${bundle.status} ${bundle.text}`);
  const openapi = await call(app.baseUrl, '/openapi.json');
  if (openapi.status !== 200) throw new Error(`openapi.json: ${openapi.status}`);
  const eventsReceived = new Map<string, number>();
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const id = (JSON.parse(body) as { id: string }).id;
      eventsReceived.set(id, (eventsReceived.get(id) ?? 0) + 1);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const endpoint = await call(app.baseUrl, '/api/v1/webhook_endpoints', {
    method: 'POST',
    key,
    body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`, enabled_events: ['*'] },
  });
  if (endpoint.status !== 201) throw new Error(`webhook endpoint: ${endpoint.status} ${endpoint.text}`);
  return {
    app,
    get worker() {
      return worker;
    },
    recorder,
    processor,
    gate,
    storage,
    key,
    productId,
    bundleId: bundle.body.data.id as number,
    monthlyProductId,
    sellerSlug: account.slug,
    documentedCodes: codesOf(openapi.body),
    eventsReceived,
    partyId: party.id,
    stopping: false,
    inflight: Promise.resolve(),
    models: [],
    startedMonth: new Date().toISOString().slice(0, 7),
    figures: { sequences: 0, steps: 0, faults: 0, byCommand: {}, faultsByCommand: {} },
    async restartWorker() {
      await worker.shutdown();
      worker = await startTestWorker(taskQueue, activities, workerEnv);
    },
    async close() {
      processor.up();
      gate.open();
      storage.up();
      await app.close();
      await worker.shutdown();
      await processor.close();
      await gate.close();
      await storage.close();
      await recorder.close();
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    },
  };
}

let buyers = 0;
/** What a quote buys: the event product, the bundle (the same answers, with the equipment's) or the monthly product. */
export type Sold = 'product' | 'bundle' | 'monthly';

/** A quote body for a new buyer of the days `firstDate`..`lastDate` (America/Chicago) of `sold`. */
export async function quoteBodyFor(
  stack: ModelStack,
  firstDate: string,
  lastDate: string,
  sold: Sold = 'product',
): Promise<Record<string, unknown>> {
  const email = `model${buyers++}.${Date.now()}@example.com`;
  const buyer = await connectBuyer(stack.app.baseUrl, stack.key, {
    firstName: 'Kim',
    lastName: 'Park',
    email,
    sellerSlug: stack.sellerSlug,
  });
  const selection = specialEventSelection(sold === 'monthly' ? stack.monthlyProductId : stack.productId);
  const line = { ...selection, coverage: { ...selection.coverage, start_date: firstDate, end_date: lastDate } };
  const bundled = {
    ...line,
    product_line_template_id: stack.bundleId,
    product_line_is_bundle: true,
    equipment_value: 'up_to_5000',
    equipment_description: 'Sound system and lighting',
  };
  return { ...buyer, selected_product_lines_to_purchase: [sold === 'bundle' ? bundled : line] };
}
