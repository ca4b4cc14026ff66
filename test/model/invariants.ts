/**
 * The invariants of the model-based suite (issue 54), checked after every command and at the end
 * of every sequence, against what the real stack answers and what the processor saw:
 *
 * - money, per payment intent (minor units): the refunds the processor received (the recording
 *   proxy's POST /v1/refunds, one per idempotency key) are what the model's cancellations give
 *   back, from the newest payment first; the purchase's `amount_refunded` (the service's ledger)
 *   is those plus the dashboard's, over every payment; `amount_total` is the sale's charge (an
 *   added day's payment is not in it) and `amount_paid` every charge (the sale's and each added
 *   day's), never below `amount_refunded`; the ledger's net is what was charged less that; the same idempotency key never carries two
 *   amounts, and nothing refunded goes above what was paid;
 * - cover: each day in force has exactly one current certificate (`issued`) per holder in force,
 *   none for a removed holder, none for a cancelled day or a refunded purchase; each day reads the
 *   state and date the model says; the purchase reads the model's status and its disputes' statuses;
 *   a subscription's periods, their days in time order, neither overlap nor (for a whole month
 *   renewed as every day) leave a gap: each day ends at the instant the next one starts;
 * - answers: no 5xx, and every refusal carries an error code its operation documents
 *   (the app's /openapi.json);
 * - events (at the end of a sequence): every event of the model's purchases that
 *   `GET /api/v1/events` lists reached the account's endpoint exactly once;
 * - reports (at the end of the run): the provisional bordereaux of the run's months, summed over
 *   their rows (premium, platform fee and tax), are the ledger movements of every sequence.
 *
 * Each check throws an Error naming the purchase and what differs (fast-check reports it).
 */
import { parse } from 'csv-parse/sync';
import { call } from '../helpers/fixtures';
import { eventually } from '../helpers/worker';
import {
  activeHolders,
  coversWholeMonth,
  expectedCertificatesInForce,
  expectedStatus,
  netByPaymentIntent,
  type ModelPurchase,
  type PolicyModel,
} from './policy-model';
import type { ModelStack } from './real';

/** One answer of the API as the harness's `call` reads it. */
export type Answer = Awaited<ReturnType<typeof call>>;

/** A call to `/api/v1<path>` with the stack's key. */
export function api(stack: ModelStack, path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  return call(stack.app.baseUrl, `/api/v1${path}`, { key: stack.key, ...init });
}

function fail(what: string): never {
  throw new Error(`invariant broken: ${what}`);
}

/**
 * Answers: `res` (of operation `METHOD /api/v1/...{template}`) is no 5xx, and a refusal (4xx)
 * carries a code the operation documents. Answers `res` for chaining.
 */
export function checkAnswer(stack: ModelStack, operation: string, res: Answer): Answer {
  if (res.status >= 500) fail(`${operation} answered ${res.status}: ${res.text.slice(0, 300)}`);
  if (res.status >= 400) {
    const code = (res.body?.error?.code ?? res.body?.code) as string | undefined;
    const documented = stack.documentedCodes.get(operation);
    if (!documented) fail(`${operation} is not in /openapi.json`);
    if (!code || !documented.has(code)) fail(`${operation} answered ${res.status} with code ${code ?? '(none)'}, not one it documents`);
  }
  return res;
}

/** Statuses a paid purchase rests in (`paid` and `awaiting_certificates` pass). */
const SETTLED_STATUSES = ['issued', 'partly_cancelled', 'cancelled', 'refunded'];

/** The purchase's view (GET /api/v1/purchases/{id}) once nothing is in flight: no cancellation waiting for its refund, no certificate being issued. */
export async function settledPurchase(stack: ModelStack, id: number, timeoutMs = 60_000): Promise<any> {
  try {
    return await eventually(async () => {
      const res = checkAnswer(stack, 'GET /api/v1/purchases/{id}', await api(stack, `/purchases/${id}`));
      const p = res.body.data;
      const busy =
        !SETTLED_STATUSES.includes(p.status) ||
        (p.cancellations as Array<{ status: string }>).some((c) => ['accepted', 'refund_pending'].includes(c.status)) ||
        p.items.some((i: any) => i.covered_units.some((u: any) => u.certificates.some((c: any) => c.status === 'issuing')));
      return busy ? null : p;
    }, timeoutMs);
  } catch {
    const last = (await api(stack, `/purchases/${id}`)).body?.data;
    return fail(
      `purchase ${id} did not settle within ${timeoutMs} ms: status ${last?.status}, cancellations ${JSON.stringify(last?.cancellations?.map((c: any) => c.status))}`,
    );
  }
}

/** Cover and the purchase's own money: the view `view` of model purchase `p` (see the module docstring). */
export async function checkPurchase(stack: ModelStack, p: ModelPurchase, view: any): Promise<void> {
  const at = `purchase ${p.id}`;
  if (view.status !== expectedStatus(p)) fail(`${at} reads ${view.status}, the model ${expectedStatus(p)}`);
  // amount_total is the sale's charge; an added day's payment is not in it (see checkMoney).
  const sale = p.payments[0]!.chargedMinor;
  const charged = p.payments.reduce((a, x) => a + x.chargedMinor, 0);
  const refunded = p.payments.reduce((a, x) => a + x.cancellationRefundedMinor + x.dashboardRefundedMinor, 0);
  if (view.amount_total !== sale) fail(`${at}: amount_total ${view.amount_total}, the model's sale ${sale}`);
  if (view.amount_refunded !== refunded) fail(`${at}: amount_refunded ${view.amount_refunded}, the model refunded ${refunded}`);
  if (view.amount_refunded > charged) fail(`${at}: refunded ${view.amount_refunded} above the ${charged} paid`);
  if (view.amount_paid !== charged) fail(`${at}: amount_paid ${view.amount_paid}, the model charged ${charged}`);
  const completed = (view.cancellations as Array<{ status: string; refund: { total: number } }>).filter((c) => c.status === 'completed');
  const cancelRefunds = completed.reduce((a, c) => a + c.refund.total, 0);
  const modelCancelRefunds = p.payments.reduce((a, x) => a + x.cancellationRefundedMinor, 0);
  if (cancelRefunds !== modelCancelRefunds) fail(`${at}: completed cancellations refund ${cancelRefunds}, the model ${modelCancelRefunds}`);

  const disputes = (view.disputes as Array<{ status: string }>).map((d) => d.status);
  if (JSON.stringify(disputes) !== JSON.stringify(p.disputes)) fail(`${at}: disputes ${disputes}, the model ${p.disputes}`);

  const units = view.items.flatMap((i: any) => i.covered_units) as Array<{
    id: number;
    state: string;
    local_label: string;
    certificates: Array<{ certificate_holder_id: number | null; status: string }>;
  }>;
  const ids = units.map((u) => u.id).sort();
  const modelIds = p.units.map((u) => u.id).sort();
  if (JSON.stringify(ids) !== JSON.stringify(modelIds)) fail(`${at}: units ${ids}, the model ${modelIds}`);
  const inForce: string[] = [];
  for (const u of units) {
    const m = p.units.find((x) => x.id === u.id)!;
    if (u.state !== m.state) fail(`${at}: unit ${u.id} reads ${u.state}, the model ${m.state}`);
    if (u.local_label !== m.date) fail(`${at}: unit ${u.id} is ${u.local_label}, the model ${m.date}`);
    for (const c of u.certificates) if (c.status === 'issued') inForce.push(`${u.id}/${c.certificate_holder_id}`);
  }
  const expected = expectedCertificatesInForce(p);
  if (JSON.stringify([...inForce].sort()) !== JSON.stringify([...expected].sort()))
    fail(`${at}: certificates in force (unit/holder) ${JSON.stringify(inForce.sort())}, the model ${JSON.stringify(expected.sort())}`);

  const holders = checkAnswer(
    stack,
    'GET /api/v1/purchases/{id}/certificate_holders',
    await api(stack, `/purchases/${p.id}/certificate_holders`),
  ).body.data as Array<{ id: number; status: string }>;
  const activeIds = holders
    .filter((h) => h.status === 'active')
    .map((h) => h.id)
    .sort();
  const modelHolders = activeHolders(p)
    .map((h) => h.id)
    .sort();
  if (JSON.stringify(activeIds) !== JSON.stringify(modelHolders)) fail(`${at}: holders in force ${activeIds}, the model ${modelHolders}`);
}

/** The refunds the processor received per payment intent (one per idempotency key; a key carrying two amounts or intents is a failure). */
export function processorRefunds(stack: ModelStack): Map<string, number> {
  const byKey = new Map<string, { pi: string; amount: number }>();
  for (const r of stack.recorder.requests) {
    if (r.method !== 'POST' || r.path !== '/v1/refunds') continue;
    const pi = r.params.get('payment_intent') ?? '(none)';
    const amount = Number(r.params.get('amount'));
    if (!Number.isInteger(amount) || amount <= 0) fail(`a refund of ${pi} asked for amount ${r.params.get('amount')}`);
    const key = r.idempotencyKey ?? fail(`a refund of ${pi} was sent without an idempotency key`);
    const seen = byKey.get(key);
    if (seen && (seen.pi !== pi || seen.amount !== amount))
      fail(`idempotency key ${key} refunded ${seen.amount} of ${seen.pi}, then ${amount} of ${pi}`);
    byKey.set(key, { pi, amount });
  }
  const out = new Map<string, number>();
  for (const { pi, amount } of byKey.values()) out.set(pi, (out.get(pi) ?? 0) + amount);
  return out;
}

/** Money per payment intent over the model's purchases: the processor's refunds against the model, the ledger's net against the service's. */
export function checkMoney(stack: ModelStack, model: PolicyModel, views: Map<number, any>): void {
  const atProcessor = processorRefunds(stack);
  const net = netByPaymentIntent(model);
  for (const p of model.purchases) {
    for (const pay of p.payments) {
      const sent = atProcessor.get(pay.paymentIntent) ?? 0;
      if (sent !== pay.cancellationRefundedMinor)
        fail(
          `${pay.paymentIntent} (purchase ${p.id}): the processor received refunds of ${sent}, the model's cancellations ${pay.cancellationRefundedMinor}`,
        );
      if (sent + pay.dashboardRefundedMinor > pay.chargedMinor)
        fail(`${pay.paymentIntent}: refunded ${sent + pay.dashboardRefundedMinor} above the ${pay.chargedMinor} paid`);
    }
    const view = views.get(p.id);
    if (!view) continue;
    // The sale's charge and the added days' (checked against their quotes when paid), less every refund.
    const added = p.payments.slice(1).reduce((a, x) => a + x.chargedMinor, 0);
    const serviceNet = view.amount_total + added - view.amount_refunded;
    const modelNet = p.payments.reduce((a, x) => a + (net.get(x.paymentIntent) ?? 0), 0);
    if (serviceNet !== modelNet) fail(`purchase ${p.id}: the service's ledger nets ${serviceNet}, the model's ${modelNet}`);
  }
}

/**
 * Cover across a subscription's periods (`views`: each purchase's view by id): its days in time
 * order never overlap, and when the first period covers its whole month each day ends where the
 * next starts (no gap, no overlap at a renewal, whatever the month's length).
 */
export function checkSubscriptionPeriods(model: PolicyModel, views: Map<number, any>): void {
  const first = model.purchases.find((p) => p.subscription?.period === 0);
  if (!first) return;
  const periods = model.purchases.filter((p) => p.subscription?.firstId === first.id);
  const days = periods
    .flatMap((p) =>
      (views.get(p.id)?.items ?? []).flatMap((i: any) =>
        (i.covered_units as Array<{ local_label: string; starts_at: string; ends_at: string }>).map((u) => ({ ...u, purchase: p.id })),
      ),
    )
    .sort((a, b) => a.starts_at.localeCompare(b.starts_at));
  const wholeMonths = coversWholeMonth(first.units.map((u) => u.date));
  for (let k = 1; k < days.length; k++) {
    const [a, b] = [days[k - 1]!, days[k]!];
    const at = `subscription ${first.id}: ${a.local_label} (purchase ${a.purchase}) ends ${a.ends_at}, ${b.local_label} (purchase ${b.purchase}) starts ${b.starts_at}`;
    if (Date.parse(a.ends_at) > Date.parse(b.starts_at)) fail(`${at}: they overlap`);
    if (wholeMonths && Date.parse(a.ends_at) !== Date.parse(b.starts_at)) fail(`${at}: a gap in cover`);
  }
}

/**
 * Every invariant over every purchase of the model, each purchase settled first. What follows an
 * answer (a removed holder's certificates voided, a dashboard refund recorded by the purchase's
 * owner) may take moments: the checks are asked again for up to `graceMs` ms, and the last broken
 * one is thrown.
 */
export async function checkAll(stack: ModelStack, model: PolicyModel, graceMs = 5_000): Promise<void> {
  let lastBroken: unknown;
  let other: unknown;
  try {
    await eventually(async () => {
      try {
        const views = new Map<number, any>();
        for (const p of model.purchases) {
          const view = await settledPurchase(stack, p.id);
          views.set(p.id, view);
          await checkPurchase(stack, p, view);
        }
        checkMoney(stack, model, views);
        checkSubscriptionPeriods(model, views);
        return true;
      } catch (err) {
        // Only a broken invariant is asked again; a purchase that did not settle, or any other
        // failure, ends the check at once.
        if (!String(err).includes('invariant broken') || String(err).includes('did not settle')) {
          other = err;
          throw err;
        }
        lastBroken = err;
        return false;
      }
    }, graceMs);
  } catch (err) {
    throw other ?? lastBroken ?? err;
  }
}

/**
 * Events: each event `GET /api/v1/events?purchase_id=` lists for the model's purchases reached the
 * stack's endpoint exactly once, within `timeoutMs` ms (deliveries are asynchronous); an event
 * sent twice fails at once.
 */
export async function checkEvents(stack: ModelStack, model: PolicyModel, timeoutMs = 30_000): Promise<void> {
  let missing: string[] = [];
  const delivered = await eventually(async () => {
    missing = [];
    for (const p of model.purchases) {
      const path = `/events?purchase_id=${p.id}&pageSize=100`;
      const res = checkAnswer(stack, 'GET /api/v1/events', await api(stack, path));
      if (res.status !== 200 || !Array.isArray(res.body?.data))
        fail(`GET /api/v1${path} answered ${res.status}: ${res.text.slice(0, 300)}`);
      const listed = res.body.data as Array<{ id: string; type: string }>;
      // A renewal's purchase is announced by subscription.renewed, a sale's by purchase.paid.
      const paidEvent = (p.subscription?.period ?? 0) > 0 ? 'subscription.renewed' : 'purchase.paid';
      if (!listed.some((e) => e.type === paidEvent)) fail(`purchase ${p.id} lists no ${paidEvent} event: ${listed.map((e) => e.type)}`);
      for (const e of listed) {
        const n = stack.eventsReceived.get(e.id) ?? 0;
        if (n > 1) fail(`event ${e.id} (${e.type}, purchase ${p.id}) reached the endpoint ${n} times`);
        if (n === 0) missing.push(`${e.id} (${e.type}, purchase ${p.id})`);
      }
    }
    return missing.length === 0;
  }, timeoutMs).catch((err) => {
    if (String(err).includes('invariant broken')) throw err;
    if (!String(err).includes('condition not met')) fail(`events could not be checked: ${String(err)}`);
    return false;
  });
  if (!delivered) fail(`events listed but not delivered within ${timeoutMs} ms: ${missing.join(', ')}`);
}

/** Integer minor units of a bordereau amount ("-12.34", "0.50"; empty reads 0). */
function minorOf(text: string): number {
  const m = /^(-?)(\d+)\.(\d{2})$/.exec(text);
  if (text === '') return 0;
  if (!m) return fail(`bordereau amount ${JSON.stringify(text)} is not major units with two decimals`);
  return (m[1] ? -1 : 1) * (Number(m[2]) * 100 + Number(m[3]));
}

/**
 * Reports: for each UTC month of the run, a provisional bordereau of the stack's party (a test
 * key's current month to date; an earlier month of the run, its final one), read back as CSV;
 * its rows' `gross_premium + platform_fee + tax` add up to the ledger movements of every sequence
 * run (`stack.models`), per currency (USD here); a difference names each purchase it is in.
 * Answers the rows read and their sum.
 */
export async function checkBordereau(stack: ModelStack): Promise<{ rows: number; totalMinor: number }> {
  const months = [...new Set([stack.startedMonth, new Date().toISOString().slice(0, 7)])];
  let total = 0;
  let rows = 0;
  const byPurchase = new Map<number, number>();
  for (const month of months) {
    const asked = checkAnswer(
      stack,
      'POST /api/v1/reports/bordereaux',
      await api(stack, '/reports/bordereaux', { method: 'POST', body: { party_id: stack.partyId, month } }),
    );
    if (asked.status !== 200 && asked.status !== 202)
      fail(`the bordereau of ${month} answered ${asked.status}: ${asked.text.slice(0, 300)}`);
    const ready = await eventually(async () => {
      const b = checkAnswer(stack, 'GET /api/v1/reports/bordereaux/{id}', await api(stack, `/reports/bordereaux/${asked.body.data.id}`))
        .body.data;
      return b.status === 'ready' ? b : null;
    }, 60_000);
    const res = await fetch(ready.files.csv.download_url);
    if (res.status !== 200) fail(`the bordereau file of ${month} answered ${res.status}`);
    const parsed = parse(await res.text(), { columns: true }) as Array<Record<string, string>>;
    for (const r of parsed) {
      if (r.currency !== 'USD') fail(`bordereau row ${r.transaction_reference} is in ${r.currency}, the model sells USD`);
      const amount = minorOf(r.gross_premium!) + minorOf(r.platform_fee!) + minorOf(r.tax!);
      const purchaseId = Number(/^COI-(\d+)-/.exec(r.certificate_reference!)?.[1]);
      byPurchase.set(purchaseId, (byPurchase.get(purchaseId) ?? 0) + amount);
      total += amount;
      rows += 1;
    }
  }
  const movements = stack.models.flatMap((m) => m.ledger);
  const ledger = movements.reduce((a, m) => a + m.amountMinor, 0);
  if (total !== ledger) {
    const diff = new Map<number, number>();
    for (const m of movements) diff.set(m.purchaseId, (diff.get(m.purchaseId) ?? 0) - m.amountMinor);
    for (const [id, amount] of byPurchase) diff.set(id, (diff.get(id) ?? 0) + amount);
    const off = [...diff].filter(([, d]) => d !== 0).map(([id, d]) => `purchase ${id}: ${d > 0 ? '+' : ''}${d}`);
    fail(
      `the bordereaux of ${months.join(', ')} (${rows} rows) add up to ${total} (minor units), the ledger's ${movements.length} movements to ${ledger} (${off.join(', ')})`,
    );
  }
  return { rows, totalMinor: total };
}
