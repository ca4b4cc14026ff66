/**
 * Cancellations during a long processor outage (issue 24's fault scenarios), for the fault suite
 * (lib/fault-suite.ts, a fault with `cancellations`):
 *
 * - before the load, `prepare` buys purchases of two covered days each (test mode, checked out
 *   like the load's, paid through `POST /api/v1/test_helpers/purchases/{id}/pay`) and waits until
 *   their certificates are issued;
 * - during the outage, `start` cancels them at a steady rate (at most one a second), each purchase
 *   once, in turn three ways: a quote (`cancellation_quote`) carried out with `cancel {quote_id}`
 *   and sent again (a client retrying with the same quote); one day of the two cancelled at once
 *   (`cancel {covered_unit_ids}`) with an Idempotency-Key, sent again with that key; every unit
 *   at once (`cancel {}`). Accepting makes no processor call, so each must be answered 200 (a
 *   quote 201) while the processor refuses or hangs, the repeats with the same cancellation;
 * - after it, `outcome` reads the processor's side (the requests the stack's processor gate let
 *   through to stripe-mock, test/helpers/processor-gate.ts) and the database until every accepted
 *   cancellation is `completed` with its certificates voided, or the bound passes, and counts:
 *   refunds created (distinct idempotency keys of `POST /v1/refunds` that reached the processor;
 *   stripe-mock ignores the keys, a real processor makes one refund per key), duplicates (refunds
 *   beyond one per cancelled purchase, cancellations beyond one per purchase, a repeat answered
 *   with another cancellation) and lost (accepted, but not completed, not refunded at the
 *   processor, a unit not cancelled or a certificate not voided in time).
 */
import type { Container } from '../../../src/container';
import { responseProblem, type Buyer, type RequestKind, type Sample } from './load';
import type { ProcessorRequest } from '../../helpers/processor-gate';
import { InFlight } from './in-flight';
import { eventually } from '../../../scripts/harness/api';

export type CancellationKind = 'quote, then cancel' | 'one day at once' | 'all at once';
const KINDS: CancellationKind[] = ['quote, then cancel', 'one day at once', 'all at once'];

/** A prepared purchase: issued, its covered units in order. */
export interface CancellationTarget {
  purchaseId: number;
  unitIds: number[];
}

/** One cancellation as the suite sent it and the API answered it. */
export interface CancellationSent {
  n: number;
  purchaseId: number;
  kind: CancellationKind;
  /** The covered units it asked to cancel. */
  unitIds: number[];
  sentAt: number;
  /** When the cancel was answered 200 (epoch ms). */
  acceptedAt: number | null;
  cancellationId: number | null;
  totalMinor: number | null;
  /** The id the repeated request answered (null: none answered 200), or undefined when not repeated. */
  repeatId?: number | null;
}

export interface CancellationOutcome {
  sent: number;
  /** Cancels answered 200 with a cancellation, and of those, answered before the fault ended. */
  accepted: number;
  acceptedDuringFault: number;
  byKind: Record<CancellationKind, number>;
  repeats: number;
  repeatsSame: number;
  /** Rows in policy_transactions for the prepared purchases. */
  rows: number;
  /** Distinct idempotency keys of refunds that reached the processor for the prepared purchases. */
  refundsCreated: number;
  /** Refund requests that reached the processor (a retry with the same key counted again). */
  refundRequests: number;
  /** Refunds beyond one per cancelled purchase, cancellations beyond one per purchase, repeats answered with another cancellation. */
  duplicates: number;
  /** Accepted cancellations not completed, not refunded at the processor, or with a unit or certificate left, when the bound passed. */
  lost: number;
  /** From the fault's end to the first refund reaching the processor, and to the last cancellation completed (null: not all did). */
  firstRefundAfterMs: number | null;
  drainMs: number | null;
  /** Answers that broke the contract or were not the expected 200/201. */
  badAnswers: number;
  /** What is wrong, one line each. */
  problems: string[];
}

/** One answer to agencyJson: the HTTP status, or 'hang' / 'network' when none came. */
export interface AgencyAnswer {
  status: number | 'hang' | 'network';
  text: string;
  body: unknown;
  ms: number;
}

/** A JSON request to `o.apiUrl` with the agency's key `o.apiKey`; never throws (no answer within `o.requestTimeoutMs`: 'hang'). */
export async function agencyJson(
  o: { apiUrl: string; apiKey: string; requestTimeoutMs: number },
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<AgencyAnswer> {
  const started = Date.now();
  try {
    const res = await fetch(`${o.apiUrl}${path}`, {
      method,
      headers: { 'x-api-key': o.apiKey, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(o.requestTimeoutMs),
    });
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
    return { status: res.status, text, body: parsed, ms: Date.now() - started };
  } catch (err) {
    const timedOut = (err as Error).name === 'TimeoutError';
    return {
      status: timedOut ? 'hang' : 'network',
      text: timedOut ? `no answer within ${o.requestTimeoutMs} ms` : `connection failed: ${(err as Error).message}`,
      body: null,
      ms: Date.now() - started,
    };
  }
}

/**
 * POSTs `body` to `path` with agencyJson, keeps the answer as a sample of `kind` in `samples`
 * (its problem: no answer, a broken envelope, or a status other than `expected`), and answers the
 * envelope's `data` when there is no problem, else null. Never throws.
 */
export async function sampledPost(
  o: { apiUrl: string; apiKey: string; requestTimeoutMs: number },
  samples: Sample[],
  kind: RequestKind,
  path: string,
  body: unknown,
  expected: number,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown> | null> {
  const res = await agencyJson(o, 'POST', path, body, headers);
  const problem =
    typeof res.status !== 'number'
      ? res.text
      : (responseProblem('envelope', res.status, res.text) ??
        (res.status === expected ? null : `answered ${res.status}, expected ${expected}: ${res.text.slice(0, 200)}`));
  samples.push({ kind, status: res.status, ms: res.ms, problem });
  return problem ? null : ((res.body as { data?: Record<string, unknown> }).data ?? null);
}

/**
 * Calls `fire(item, n)` for each of `items` in turn, one each `o.intervalMs` from `o.delayMs` on
 * (paced by the clock): each waiting timer is in `timers` until it fires, each call's promise
 * tracked by `inFlight`.
 */
export function paced<T>(
  items: readonly T[],
  o: { delayMs: number; intervalMs: number },
  timers: Set<NodeJS.Timeout>,
  inFlight: InFlight,
  fire: (item: T, n: number) => Promise<void>,
): void {
  const started = Date.now() + o.delayMs;
  items.forEach((item, n) => {
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        inFlight.track(fire(item, n));
      },
      Math.max(0, started + n * o.intervalMs - Date.now()),
    );
    timers.add(timer);
  });
}

/** Polls `check` every 2 s until it answers nothing lost or `boundMs` after `faultEnded` has passed; its last answer. */
export async function checkUntilNoneLost<T extends { lost: number }>(
  check: () => Promise<T>,
  faultEnded: number,
  boundMs: number,
): Promise<T> {
  let last: T | undefined;
  const untilNoneLost = async () => ((last = await check()).lost === 0 ? last : null);
  const remainingMs = Math.max(0, faultEnded + boundMs - Date.now());
  // Past the bound, the last answer (with what was lost) is the caller's to report.
  return (await eventually(untilNoneLost, remainingMs, 2000).catch(() => null)) ?? last!;
}

/** What an outcome reads: the database, the processor's record, when the fault ended and how long after it to wait at most. */
export interface OutcomeRead {
  container: Container;
  processor: () => readonly ProcessorRequest[];
  faultEnded: number;
  boundMs: number;
}

/** What buyIssuedPurchases buys: `count` purchases, `selection(i)` the product line of purchase i. */
export interface IssuedPurchasesOrder {
  count: number;
  buyers: Buyer[];
  selection(i: number): Record<string, unknown>;
  container: Container;
  timeoutMs: number;
  /** The agency's JSON requests (agencyJson). */
  json: (method: string, path: string, body: unknown) => Promise<AgencyAnswer>;
  /** What they are for, in the errors' words. */
  what: string;
}

/**
 * Buys `o.count` purchases for `o.buyers` in turn (four at a time), pays each through
 * `POST /api/v1/test_helpers/purchases/{id}/pay`, waits until all are issued, and answers them by
 * purchase id with their covered units in order of start.
 * @throws {Error} when a checkout or payment is refused, or they are not all issued within `o.timeoutMs`.
 */
export async function buyIssuedPurchases(o: IssuedPurchasesOrder): Promise<CancellationTarget[]> {
  const ids: number[] = [];
  let next = 0;
  const chain = async () => {
    while (next < o.count) {
      const i = next++;
      const buyer = o.buyers[i % o.buyers.length]!;
      const quoted = await o.json('POST', '/public-quote/adminValidateBuyerResponses', {
        ...buyer,
        selected_product_lines_to_purchase: [o.selection(i)],
      });
      if (quoted.status !== 200) throw new Error(`preparing ${o.what}: checkout answered ${quoted.status}: ${quoted.text.slice(0, 200)}`);
      const purchaseId = (quoted.body as { purchase_id: number }).purchase_id;
      const paid = await o.json('POST', `/api/v1/test_helpers/purchases/${purchaseId}/pay`, {});
      if (paid.status !== 200) throw new Error(`preparing ${o.what}: pay answered ${paid.status}: ${paid.text.slice(0, 200)}`);
      ids.push(purchaseId);
    }
  };
  await Promise.all(Array.from({ length: 4 }, chain));
  let rows: { status: string; n: number }[] = [];
  const allIssued = async () => {
    rows = await o.container
      .db('purchases')
      .whereIn('id', ids)
      .groupBy('status')
      .select('status', o.container.db.raw('count(*)::int as n'));
    return rows.length === 1 && rows[0]!.status === 'issued';
  };
  await eventually(allIssued, o.timeoutMs, 1000).catch(() => {
    throw new Error(`preparing ${o.what}: not all issued after ${o.timeoutMs} ms: ${JSON.stringify(rows)}`);
  });
  const units: { purchase_id: number; id: number }[] = await o.container
    .db('covered_units as u')
    .join('purchase_items as i', 'i.id', 'u.purchase_item_id')
    .whereIn('i.purchase_id', ids)
    .orderBy(['i.purchase_id', 'u.starts_at', 'u.id'])
    .select('i.purchase_id', 'u.id');
  return ids
    .sort((a, b) => a - b)
    .map((purchaseId) => ({ purchaseId, unitIds: units.filter((u) => u.purchase_id === purchaseId).map((u) => u.id) }));
}

/** Prepares, sends and checks the cancellations of one fault. */
export class CancellationRun {
  readonly samples: Sample[] = [];
  readonly targets: CancellationTarget[] = [];
  readonly sent: CancellationSent[] = [];
  private timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new InFlight();

  constructor(private readonly o: { apiUrl: string; apiKey: string; requestTimeoutMs: number }) {}

  /**
   * Buys `count` purchases of two covered days (`selection(i)` the product line of purchase i) for
   * `buyers` in turn, pays each through the test helper, and waits until all are issued.
   * @throws {Error} when a checkout or payment is refused, or they are not all issued within `timeoutMs`.
   */
  async prepare(o: Omit<IssuedPurchasesOrder, 'json' | 'what'>): Promise<void> {
    this.targets.push(...(await buyIssuedPurchases({ ...o, json: (m, p, b) => this.json(m, p, b), what: 'cancellations' })));
  }

  /** Cancels every prepared purchase, one each `intervalMs` from `delayMs` on (paced by the clock). */
  start(o: { delayMs: number; intervalMs: number }): void {
    paced(this.targets, o, this.timers, this.inFlight, (target, n) => this.cancel(n, target));
  }

  /** Waits until every cancellation due has been sent and every request (and repeat) answered. */
  async settle(): Promise<void> {
    while (this.timers.size > 0 || this.inFlight.size > 0) await this.inFlight.settledOrAfter(500);
  }

  /** Sends no more cancellations (those in flight go on). */
  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  /** A JSON request with the agency's key; never throws (no answer: status 0). */
  private json(method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<AgencyAnswer> {
    return agencyJson(this.o, method, path, body, headers);
  }

  /** Sends one request of the run and keeps its sample; the answer's `data` when it is `expected`, else null. */
  private step(
    kind: 'cancellation-quote' | 'cancel',
    path: string,
    body: unknown,
    expected: number,
    headers: Record<string, string> = {},
  ): Promise<Record<string, unknown> | null> {
    return sampledPost(this.o, this.samples, kind, path, body, expected, headers);
  }

  private async cancel(n: number, target: CancellationTarget): Promise<void> {
    const kind = KINDS[n % KINDS.length]!;
    const path = `/api/v1/purchases/${target.purchaseId}`;
    const reason = `Resilience cancellation ${n} (${kind})`;
    const sent: CancellationSent = {
      n,
      purchaseId: target.purchaseId,
      kind,
      unitIds: kind === 'one day at once' ? [target.unitIds.at(-1)!] : target.unitIds,
      sentAt: Date.now(),
      acceptedAt: null,
      cancellationId: null,
      totalMinor: null,
    };
    this.sent.push(sent);
    let body: Record<string, unknown>;
    let headers: Record<string, string> = {};
    if (kind === 'quote, then cancel') {
      const quote = await this.step('cancellation-quote', `${path}/cancellation_quote`, { requested_by: 'buyer', reason }, 201);
      if (!quote) return;
      body = { quote_id: quote.id };
    } else if (kind === 'one day at once') {
      body = { covered_unit_ids: sent.unitIds, requested_by: 'insurer', reason };
      headers = { 'Idempotency-Key': `resilience-cancel-${target.purchaseId}` };
    } else {
      body = { reason };
    }
    const accepted = await this.step('cancel', `${path}/cancel`, body, 200, headers);
    if (!accepted) return;
    sent.acceptedAt = Date.now();
    sent.cancellationId = accepted.id as number;
    sent.totalMinor = (accepted.refund as { total: number }).total;
    if (kind === 'all at once') return;
    // A client that did not hear the answer sends the same again: the same cancellation.
    const again = await this.step('cancel', `${path}/cancel`, body, 200, headers);
    sent.repeatId = (again?.id as number | undefined) ?? null;
  }

  /**
   * Reads the processor's requests and the database until every accepted cancellation is done
   * (completed, refunded once at the processor, its units cancelled and certificates voided), or
   * until `boundMs` after `faultEnded`; answers the figures as they stand then.
   */
  async outcome(o: OutcomeRead): Promise<CancellationOutcome> {
    return checkUntilNoneLost(() => this.check(o.container, o.processor(), o.faultEnded), o.faultEnded, o.boundMs);
  }

  private async check(container: Container, processor: readonly ProcessorRequest[], faultEnded: number): Promise<CancellationOutcome> {
    const db = container.db;
    const ids = this.targets.map((t) => t.purchaseId);
    const rows: {
      id: number;
      purchase_id: number;
      status: string;
      total_minor: string;
      refund_id: string | null;
      covered_unit_ids: number[];
      completed_at: Date | null;
    }[] = await db('policy_transactions')
      .whereIn('purchase_id', ids)
      .select('id', 'purchase_id', 'status', 'total_minor', 'refund_id', 'covered_unit_ids', 'completed_at');
    const units: {
      id: number;
      purchase_id: number;
      cancellation_id: number | null;
      cancelled_at: Date | null;
      voided_at: Date | null;
      certificates: number;
    }[] = await db('covered_units as u')
      .join('purchase_items as i', 'i.id', 'u.purchase_item_id')
      .leftJoin('certificates as c', 'c.covered_unit_id', 'u.id')
      .whereIn('i.purchase_id', ids)
      .groupBy('u.id', 'i.purchase_id', 'u.cancellation_id', 'u.cancelled_at')
      .select(
        'u.id',
        'i.purchase_id',
        'u.cancellation_id',
        'u.cancelled_at',
        db.raw('min(c.voided_at) as voided_at'),
        db.raw('count(c.id)::int as certificates'),
      );
    const unitById = new Map(units.map((u) => [u.id, u]));
    const targetIds = new Set(ids.map(String));
    const refunds = processor
      .filter((r) => r.method === 'POST' && r.path === '/v1/refunds')
      .map((r) => ({ ...r, params: new URLSearchParams(r.body) }))
      .filter((r) => targetIds.has(r.params.get('metadata[purchase_id]') ?? ''));
    const keysOf = (select: (r: (typeof refunds)[number]) => boolean) =>
      new Set(refunds.filter(select).map((r) => r.idempotencyKey ?? '(none)'));

    const problems: string[] = [];
    let lost = 0;
    let duplicates = 0;
    // Refunds beyond one per cancelled purchase, at the processor.
    for (const purchaseId of ids) {
      const keys = keysOf((r) => r.params.get('metadata[purchase_id]') === String(purchaseId));
      if (keys.size > 1) {
        duplicates += keys.size - 1;
        problems.push(`purchase ${purchaseId}: ${keys.size} refunds at the processor (${[...keys].join(', ')})`);
      }
    }
    // Cancellations beyond one per purchase, in the database.
    const rowsOf = new Map<number, typeof rows>();
    for (const r of rows) rowsOf.set(r.purchase_id, [...(rowsOf.get(r.purchase_id) ?? []), r]);
    for (const [purchaseId, of] of rowsOf) {
      if (of.length > 1) {
        duplicates += of.length - 1;
        problems.push(`purchase ${purchaseId}: ${of.length} cancellations (${of.map((r) => r.id).join(', ')})`);
      }
    }
    const accepted = this.sent.filter((s) => s.cancellationId !== null);
    for (const s of accepted) {
      const id = s.cancellationId!;
      if (s.repeatId !== undefined && s.repeatId !== id) {
        if (s.repeatId !== null) duplicates++;
        problems.push(
          `purchase ${s.purchaseId}: the repeated cancel answered ${s.repeatId === null ? 'no cancellation' : `cancellation ${s.repeatId}`}, not ${id}`,
        );
      }
      const row = rows.find((r) => r.id === id);
      const keys = keysOf((r) => r.params.get('metadata[cancellation_id]') === String(id));
      const whyLost: string[] = [];
      if (!row) whyLost.push('no cancellation row');
      else {
        if (row.purchase_id !== s.purchaseId)
          problems.push(`cancellation ${id}: of purchase ${row.purchase_id}, answered for ${s.purchaseId}`);
        if (row.status !== 'completed') whyLost.push(`still ${row.status}`);
        if (Number(row.total_minor) !== s.totalMinor)
          problems.push(`cancellation ${id}: refund ${row.total_minor} stored, ${s.totalMinor} answered`);
        if ([...row.covered_unit_ids].sort((a, b) => a - b).join() !== [...s.unitIds].sort((a, b) => a - b).join())
          problems.push(`cancellation ${id}: units ${row.covered_unit_ids.join(',')}, asked ${s.unitIds.join(',')}`);
        if (Number(row.total_minor) > 0) {
          if (keys.size === 0) whyLost.push('no refund reached the processor');
          else if (!keys.has(`policy-transaction-${id}-refund`)) problems.push(`cancellation ${id}: refund keys ${[...keys].join(', ')}`);
          const amounts = new Set(
            refunds.filter((r) => r.params.get('metadata[cancellation_id]') === String(id)).map((r) => r.params.get('amount')),
          );
          if (amounts.size && (amounts.size > 1 || !amounts.has(String(row.total_minor))))
            problems.push(`cancellation ${id}: refund amounts ${[...amounts].join(', ')} for ${row.total_minor}`);
          if (row.status === 'completed' && !row.refund_id) whyLost.push('completed without a refund id');
        } else problems.push(`cancellation ${id}: nothing to refund (the scenario needs a refund each)`);
      }
      const target = this.targets.find((t) => t.purchaseId === s.purchaseId)!;
      for (const unitId of target.unitIds) {
        const u = unitById.get(unitId);
        if (!u) {
          whyLost.push(`unit ${unitId} missing`);
          continue;
        }
        if (s.unitIds.includes(unitId)) {
          if (u.cancellation_id !== id || !u.cancelled_at) whyLost.push(`unit ${unitId} not cancelled`);
          if (u.certificates !== 1 || !u.voided_at)
            whyLost.push(`unit ${unitId}: ${u.certificates} certificates, ${u.voided_at ? 'voided' : 'not voided'}`);
        } else if (u.cancelled_at || u.voided_at) problems.push(`purchase ${s.purchaseId}: unit ${unitId} cancelled or voided, not asked`);
      }
      if (whyLost.length) {
        lost++;
        problems.push(`cancellation ${id} of purchase ${s.purchaseId} (${s.kind}): ${whyLost.join('; ')}`);
      }
    }
    // A cancellation in the database the API never answered (a lost answer is a cancellation its client cannot know of).
    for (const r of rows)
      if (!accepted.some((s) => s.cancellationId === r.id))
        problems.push(`cancellation ${r.id} of purchase ${r.purchase_id} (${r.status}) was never answered to the client`);

    const broken = this.samples.filter((x) => x.problem);
    for (const b of broken.slice(0, 5)) problems.push(`${b.kind} ${b.status}: ${b.problem}`);
    const completed = rows.filter((r) => r.completed_at).map((r) => r.completed_at!.getTime());
    const firstRefund = refunds.length ? Math.min(...refunds.map((r) => r.at)) : null;
    const repeated = accepted.filter((s) => s.repeatId !== undefined);
    return {
      sent: this.sent.length,
      accepted: accepted.length,
      acceptedDuringFault: accepted.filter((s) => s.acceptedAt! <= faultEnded).length,
      byKind: Object.fromEntries(KINDS.map((k) => [k, accepted.filter((s) => s.kind === k).length])) as Record<CancellationKind, number>,
      repeats: repeated.length,
      repeatsSame: repeated.filter((s) => s.repeatId === s.cancellationId).length,
      rows: rows.length,
      refundsCreated: keysOf(() => true).size,
      refundRequests: refunds.length,
      duplicates,
      lost,
      firstRefundAfterMs: firstRefund === null ? null : firstRefund - faultEnded,
      drainMs: lost === 0 && rows.length > 0 && completed.length === rows.length ? Math.max(...completed) - faultEnded : null,
      badAnswers: broken.length,
      problems,
    };
  }
}
