/**
 * A steady load of purchases against a running API, as agents' servers and the payment
 * processor produce it, for the fault suite:
 *
 * - every `1000 / ratePerSecond` ms a new purchase: `adminValidateBuyerResponses` (spec §4.4)
 *   for one of the pre-connected buyers, not waiting for the previous one;
 * - each checkout answered 200 is paid by a signed `checkout.session.completed` webhook,
 *   re-delivered like the processor does (exponential backoff, 1 s doubling to 8 s) until the
 *   service accepts it with a 2xx;
 * - beside them, a reader asks `GET /api/v1/products` and `getCertificates` of an earlier
 *   purchase twice a second, so the §7.1 envelope is observed while a dependency is down.
 *
 * Every answer is checked with `responseProblem` and kept as a Sample (status, milliseconds,
 * the problem if any). A request unanswered after `requestTimeoutMs` is a `hang`.
 */
import Stripe from 'stripe';
import { sessionCompletedEvent } from '../../helpers/purchases';
import { InFlight } from './in-flight';

/** The load's requests, and the cancellations and claim approvals some faults make beside it (lib/cancellations.ts, lib/claim-payouts.ts). */
export type RequestKind = 'checkout' | 'webhook' | 'list-products' | 'get-certificates' | 'cancellation-quote' | 'cancel' | 'claim-approve';

export interface Sample {
  kind: RequestKind;
  /** HTTP status, or `hang` (no answer within the timeout) or `network` (connection refused or reset). */
  status: number | 'hang' | 'network';
  ms: number;
  /** Why the answer breaks the contract, or null. */
  problem: string | null;
}

export interface LoadPurchase {
  purchaseId: number;
  paymentIntent: string;
  /** Covered units the purchase was quoted for (certificates it must end with). */
  units: number;
  /** True once a webhook delivery was accepted (the processor stops re-delivering then). */
  paid: boolean;
  /** When (epoch ms) the accepted delivery was answered. */
  paidAt?: number;
}

export interface Buyer {
  idp_accnt_uuid: string;
  access_token: string;
}

export interface LoadOptions {
  apiUrl: string;
  apiKey: string;
  teammateUuid: string;
  webhookSecret: string;
  buyers: Buyer[];
  /** The selected product line of purchase number `n` and how many covered units it has. */
  selection(n: number): { line: Record<string, unknown>; units: number };
  ratePerSecond: number;
  requestTimeoutMs: number;
  /**
   * Optional: what purchase number `n` waits for before its first webhook delivery (default:
   * nothing), so a scenario can have some payments reported during an outage and some after it.
   */
  firstDeliveryAfter?(n: number): Promise<void>;
}

/** Stack frames and file paths: never in any body. */
const STACK_TRACE = /\n\s+at |node_modules|\/work\/|\.ts:\d+|\.js:\d+/;
/** Driver, SQL and socket details: never in an error body. */
const INTERNALS = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|\bselect\b.*\bfrom\b|\binsert into\b|knex|pg-protocol|grpc|14 UNAVAILABLE/i;
const ENVELOPE_5XX: Record<number, string[]> = { 500: ['INTERNAL_ERROR', 'API_ERROR'], 503: ['CONNECTION_ERROR'] };

/**
 * Why an answer breaks the contract for its surface, or null when it keeps it:
 * 2xx is fine; 5xx must be 500 or 503 with a §7.1 code (in the §2.5 envelope on `/api/v1`, as
 * the bare `{ code, message }` object on the quote, certificate and webhook surfaces, §7.2);
 * no body may carry a stack trace, a file path, SQL or a driver message. `allowed4xx` lists the
 * client errors that are a normal answer for this request (e.g. 404 before a payment is recorded).
 */
export function responseProblem(surface: 'envelope' | 'bare', status: number, text: string, allowed4xx: number[] = []): string | null {
  if (STACK_TRACE.test(text)) return `body leaks internals: ${text.slice(0, 200)}`;
  if (status >= 200 && status < 300) return null;
  if (INTERNALS.test(text)) return `error body leaks internals: ${text.slice(0, 200)}`;
  if (status >= 400 && status < 500 && !allowed4xx.includes(status)) return `unexpected ${status}: ${text.slice(0, 200)}`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `${status} without a JSON body: ${text.slice(0, 200)}`;
  }
  const error = surface === 'envelope' ? (body as { success?: unknown; error?: unknown }).error : body;
  if (surface === 'envelope' && (body as { success?: unknown }).success !== false)
    return `${status} without the envelope: ${text.slice(0, 200)}`;
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || typeof message !== 'string') return `${status} without code and message: ${text.slice(0, 200)}`;
  if (status >= 500) {
    const codes = ENVELOPE_5XX[status];
    if (!codes) return `status ${status} is not one of the spec's 500/503`;
    if (!codes.includes(code)) return `${status} with code ${code}, expected ${codes.join(' or ')}`;
  }
  return null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const signer = new Stripe('sk_test_signer_only');

/** Runs the load until `stop()`; `settle()` waits for every webhook to be accepted. */
export class PurchaseLoad {
  readonly samples: Sample[] = [];
  readonly purchases: LoadPurchase[] = [];
  private timers: NodeJS.Timeout[] = [];
  private readonly inFlight = new InFlight();
  private n = 0;
  private stopped = false;

  constructor(private readonly o: LoadOptions) {}

  /** Purchases the load has started (each one checkout request). */
  get attempted(): number {
    return this.n;
  }

  start(): void {
    // Paced by the clock, not by interval ticks: a busy event loop delays ticks, and the
    // purchases it owes are started on the next one, so the offered rate stays `ratePerSecond`.
    const started = Date.now();
    this.timers.push(
      setInterval(() => {
        const due = Math.floor(((Date.now() - started) * this.o.ratePerSecond) / 1000);
        while (this.n < due) this.inFlight.track(this.purchase(this.n++));
      }, 20),
    );
    this.timers.push(setInterval(() => this.inFlight.track(this.read()), 500));
  }

  /** Stops starting new purchases and reads; in-flight ones (and their webhooks) go on. */
  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
  }

  /**
   * Waits until every request and webhook re-delivery has finished.
   * @throws {Error} when some are still running after `timeoutMs`.
   */
  async settle(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.inFlight.size > 0) {
      if (Date.now() > deadline)
        throw new Error(`${this.inFlight.size} requests or webhook re-deliveries still running after ${timeoutMs} ms`);
      await this.inFlight.settledOrAfter(1000);
    }
  }

  private async request(
    kind: RequestKind,
    path: string,
    body: string,
    headers: Record<string, string>,
    surface: 'envelope' | 'bare',
    allowed4xx: number[] = [],
  ): Promise<{ status: number; text: string } | null> {
    const started = Date.now();
    try {
      const res = await fetch(`${this.o.apiUrl}${path}`, {
        method: body ? 'POST' : 'GET',
        headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body || undefined,
        signal: AbortSignal.timeout(this.o.requestTimeoutMs),
      });
      const text = await res.text();
      this.samples.push({
        kind,
        status: res.status,
        ms: Date.now() - started,
        problem: responseProblem(surface, res.status, text, allowed4xx),
      });
      return { status: res.status, text };
    } catch (err) {
      const timedOut = (err as Error).name === 'TimeoutError';
      this.samples.push({
        kind,
        status: timedOut ? 'hang' : 'network',
        ms: Date.now() - started,
        // The API process is never faulted: a refused or reset connection means it crashed.
        problem: timedOut ? `no answer within ${this.o.requestTimeoutMs} ms` : `connection failed: ${(err as Error).message}`,
      });
      return null;
    }
  }

  private async purchase(n: number): Promise<void> {
    const buyer = this.o.buyers[n % this.o.buyers.length];
    const { line, units } = this.o.selection(n);
    const body = JSON.stringify({ ...buyer, selected_product_lines_to_purchase: [line] });
    const res = await this.request('checkout', '/public-quote/adminValidateBuyerResponses', body, { 'x-api-key': this.o.apiKey }, 'bare');
    if (res?.status !== 200) return;
    const session = JSON.parse(res.text) as { id: string; purchase_id: number };
    const purchase: LoadPurchase = { purchaseId: session.purchase_id, paymentIntent: `pi_paid_${session.purchase_id}`, units, paid: false };
    this.purchases.push(purchase);
    const payload = sessionCompletedEvent(session.purchase_id, session.id, `evt_resilience_${session.purchase_id}`);
    if (this.o.firstDeliveryAfter) await this.o.firstDeliveryAfter(n);
    for (let wait = 1000; ; wait = Math.min(wait * 2, 8000)) {
      const signature = signer.webhooks.generateTestHeaderString({ payload, secret: this.o.webhookSecret });
      const delivered = await this.request('webhook', '/webhooks/payproc', payload, { 'stripe-signature': signature }, 'bare');
      if (delivered && delivered.status >= 200 && delivered.status < 300) {
        purchase.paid = true;
        purchase.paidAt = Date.now();
        return;
      }
      await sleep(wait);
    }
  }

  private async read(): Promise<void> {
    if (this.stopped) return;
    await this.request('list-products', '/api/v1/products?pageSize=1', '', { 'x-api-key': this.o.apiKey }, 'envelope');
    const paid = this.purchases.filter((p) => p.paid);
    const p = paid[Math.floor(Math.random() * paid.length)];
    if (!p) return;
    const body = JSON.stringify({ idp_teammate_uuid: this.o.teammateUuid, payment_intent: p.paymentIntent });
    // 404 until the purchase workflow has recorded the webhook's payment intent.
    await this.request('get-certificates', '/platform-agency-certs/getCertificates', body, { 'x-api-key': this.o.apiKey }, 'bare', [404]);
  }
}

/** The `q`-quantile (0..1) of the answered samples' milliseconds of `kind`, or null when none. */
export function quantileMs(samples: Sample[], kind: RequestKind, q: number): number | null {
  const ms = samples
    .filter((s) => s.kind === kind && typeof s.status === 'number')
    .map((s) => s.ms)
    .sort((a, b) => a - b);
  return ms.length ? ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]! : null;
}

/** Counts of samples by kind and status, for the printed summary. */
export function tally(samples: Sample[]): Map<RequestKind, Map<string, number>> {
  const out = new Map<RequestKind, Map<string, number>>();
  for (const s of samples) {
    const byStatus = out.get(s.kind) ?? new Map<string, number>();
    byStatus.set(String(s.status), (byStatus.get(String(s.status)) ?? 0) + 1);
    out.set(s.kind, byStatus);
  }
  return out;
}
