/**
 * Claim payouts through a long processor outage (issue 51, item 4's scenario: approved claims paid
 * while the processor is down, each exactly once when it returns, none lost), for the fault suite
 * (lib/fault-suite.ts, a fault with `claimPayouts`):
 *
 * - before the load, `prepare` buys half as many purchases of two covered days (July 2027) as
 *   there are claims to pay (lib/cancellations.ts buyIssuedPurchases), moves each purchase's test
 *   clock past its days, files one claim per covered unit (an incident at the unit's local noon,
 *   naming the claimant's connected account `payout_account`, so an approval is paid by a transfer
 *   at the processor) and takes each to `under_review` (the test helper's acknowledge and
 *   start_review, the insurer's part in test mode);
 * - during the outage, `start` approves them at a steady rate (part of the amount claimed, with a
 *   reason). An approval makes no processor call, so each must be answered 200 while the processor
 *   refuses; its payout waits in the claim's workflow, retrying;
 * - after it, `outcome` reads the processor's side (the requests the stack's processor gate let
 *   through to stripe-mock) and the database until every approved claim is `paid`, or the bound
 *   passes, and counts: transfers created (distinct idempotency keys of `POST /v1/transfers` per
 *   claim; stripe-mock ignores the keys, a real processor makes one transfer per key), duplicates
 *   (transfers beyond one per claim, `claim.paid` events beyond one per claim) and lost (approved,
 *   but not paid, no transfer, or no `claim.paid` event when the bound passed).
 */
import type { Container } from '../../../src/container';
import type { ProcessorRequest } from '../../helpers/processor-gate';
import type { Buyer, Sample } from './load';
import { agencyJson, buyIssuedPurchases, checkUntilNoneLost, paced, sampledPost, type OutcomeRead } from './cancellations';
import { InFlight } from './in-flight';

/** Claimed and approved per claim, in minor units (USD cents): part of what was claimed. */
const CLAIMED_MINOR = 125_000;
const APPROVED_MINOR = 90_000;
const PAYOUT_ACCOUNT = 'acct_1ResiliencePayout';
/** Every purchase's test clock once its days are over, so the incidents are in the past. */
const CLOCK_AFTER = '2027-08-01T00:00:00Z';

/** One claim of the run: filed and under review before the fault, approved during it. */
interface PayoutClaim {
  claimId: number;
  purchaseId: number;
  /** When its approval was answered 200 (epoch ms), or null. */
  approvedAt: number | null;
}

export interface ClaimPayoutOutcome {
  /** Claims filed and under review before the fault, approvals sent, and approvals answered 200 (before the fault ended). */
  claims: number;
  sent: number;
  approved: number;
  approvedDuringFault: number;
  /** Claims recorded `paid` with the approved amount and the transfer as their reference. */
  paid: number;
  /** Distinct idempotency keys of transfers that reached the processor for the claims, and all such requests (a retry counted again). */
  transfersCreated: number;
  transferRequests: number;
  /** `claim.paid` events recorded for the agency. */
  paidEvents: number;
  /** Transfers beyond one per claim and `claim.paid` events beyond one per claim. */
  duplicates: number;
  /** Approved claims not paid, not transferred at the processor, or without their `claim.paid` event when the bound passed. */
  lost: number;
  /** From the fault's end to the last claim paid (null: not all were). */
  drainMs: number | null;
  /** Approvals that broke the contract or were not answered 200. */
  badAnswers: number;
  /** What is wrong, one line each. */
  problems: string[];
}

/** Prepares, approves and checks the claim payouts of one fault. */
export class ClaimPayoutRun {
  readonly samples: Sample[] = [];
  readonly claims: PayoutClaim[] = [];
  /** How long `prepare` took (ms): buying, filing and reviewing, beside the cancellations' purchases. */
  preparedMs = 0;
  private sent = 0;
  private timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new InFlight();

  constructor(private readonly o: { apiUrl: string; apiKey: string; requestTimeoutMs: number }) {}

  /** An agency request that must answer `expected`; its `data`. @throws {Error} naming the step otherwise. */
  private async must(path: string, body: unknown, expected: number, step: string): Promise<Record<string, unknown>> {
    const res = await agencyJson(this.o, 'POST', path, body);
    if (res.status !== expected) throw new Error(`preparing claim payouts: ${step} answered ${res.status}: ${res.text.slice(0, 200)}`);
    return (res.body as { data: Record<string, unknown> }).data;
  }

  /**
   * Buys ⌈count/2⌉ purchases of two covered days for `buyers`, files `count` claims on their
   * units with a payout account, and takes each to `under_review`.
   * @throws {Error} when a purchase is not issued within `timeoutMs` or a step is refused.
   */
  async prepare(o: {
    count: number;
    buyers: Buyer[];
    container: Container;
    timeoutMs: number;
    selection(i: number): Record<string, unknown>;
  }) {
    const started = Date.now();
    const purchases = await buyIssuedPurchases({
      count: Math.ceil(o.count / 2),
      buyers: o.buyers,
      container: o.container,
      timeoutMs: o.timeoutMs,
      selection: o.selection,
      json: (m, p, b) => agencyJson(this.o, m, p, b),
      what: 'claim payouts',
    });
    const starts = new Map<number, Date>(
      (
        await o.container
          .db('covered_units')
          .whereIn(
            'id',
            purchases.flatMap((p) => p.unitIds),
          )
          .select('id', 'starts_at')
      ).map((u: { id: number; starts_at: Date }) => [u.id, u.starts_at]),
    );
    const units = purchases.flatMap((p) => p.unitIds.map((unitId) => ({ purchaseId: p.purchaseId, unitId }))).slice(0, o.count);
    await Promise.all(
      purchases.map((p) =>
        this.must(`/api/v1/test_helpers/purchases/${p.purchaseId}/test_clock`, { frozen_time: CLOCK_AFTER }, 200, 'test clock'),
      ),
    );
    let next = 0;
    const chain = async () => {
      while (next < units.length) {
        const { purchaseId, unitId } = units[next++]!;
        // Local noon of the unit's day (it starts at local midnight).
        const incidentAt = new Date(starts.get(unitId)!.getTime() + 12 * 3_600_000).toISOString();
        const claim = await this.must(
          `/api/v1/purchases/${purchaseId}/claims`,
          {
            incident_at: incidentAt,
            claim_type: 'property_damage',
            description: 'A storm flooded the marquee; the sound system was ruined.',
            claimant: { name: 'Kim Park', email: 'kim@example.com', payout_account: PAYOUT_ACCOUNT },
            amount_claimed: CLAIMED_MINOR,
          },
          201,
          'filing',
        );
        const claimId = claim.id as number;
        for (const action of ['acknowledge', 'start_review'])
          await this.must(`/api/v1/test_helpers/claims/${claimId}/actions`, { action }, 200, action);
        this.claims.push({ claimId, purchaseId, approvedAt: null });
      }
    };
    await Promise.all(Array.from({ length: 4 }, chain));
    this.preparedMs = Date.now() - started;
  }

  /** Approves every prepared claim, one each `intervalMs` from `delayMs` on (paced by the clock). */
  start(o: { delayMs: number; intervalMs: number }): void {
    paced(this.claims, o, this.timers, this.inFlight, (claim) => this.approve(claim));
  }

  /** Sends no more approvals, and waits until every approval sent is answered. */
  async stopAndSettle(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    while (this.inFlight.size > 0) await this.inFlight.settledOrAfter(500);
  }

  private async approve(claim: PayoutClaim): Promise<void> {
    this.sent++;
    const body = { action: 'approve', amount: APPROVED_MINOR, reason: 'Receipts cover 900.00 of it' };
    const data = await sampledPost(
      this.o,
      this.samples,
      'claim-approve',
      `/api/v1/test_helpers/claims/${claim.claimId}/actions`,
      body,
      200,
    );
    if (data?.status === 'approved' || data?.status === 'paid') claim.approvedAt = Date.now();
  }

  /** Reads the processor's requests and the database until every approved claim is paid once, or until `boundMs` after `faultEnded`. */
  async outcome(o: OutcomeRead): Promise<ClaimPayoutOutcome> {
    return checkUntilNoneLost(() => this.check(o.container, o.processor(), o.faultEnded), o.faultEnded, o.boundMs);
  }

  private async check(container: Container, processor: readonly ProcessorRequest[], faultEnded: number): Promise<ClaimPayoutOutcome> {
    const ids = this.claims.map((c) => c.claimId);
    const rows: { id: number; status: string; paid_amount_minor: string; payment_reference: string | null; paid_at: Date | null }[] =
      await container.db('claims').whereIn('id', ids).select('id', 'status', 'paid_amount_minor', 'payment_reference', 'paid_at');
    const events: { claim_id: string; n: number }[] = await container
      .db('agency_events')
      .where({ type: 'claim.paid' })
      .whereIn('purchase_id', [...new Set(this.claims.map((c) => c.purchaseId))])
      .whereRaw("(data->'data'->'object'->>'id')::int = any(?)", [ids])
      .groupByRaw("data->'data'->'object'->>'id'")
      .select(container.db.raw("data->'data'->'object'->>'id' as claim_id"), container.db.raw('count(*)::int as n'));
    const transfers = processor
      .filter((r) => r.method === 'POST' && r.path === '/v1/transfers')
      .map((r) => ({ ...r, params: new URLSearchParams(r.body) }))
      .filter((r) => ids.includes(Number(r.params.get('metadata[claim_id]'))));

    const problems: string[] = [];
    let duplicates = 0;
    let lost = 0;
    let transfersCreated = 0;
    for (const claim of this.claims.filter((c) => c.approvedAt !== null)) {
      const of = transfers.filter((t) => t.params.get('metadata[claim_id]') === String(claim.claimId));
      const keys = new Set(of.map((t) => t.idempotencyKey ?? '(none)'));
      transfersCreated += keys.size;
      const paidEvents = events.find((e) => Number(e.claim_id) === claim.claimId)?.n ?? 0;
      const row = rows.find((r) => r.id === claim.claimId);
      if (keys.size > 1) problems.push(`claim ${claim.claimId}: ${keys.size} transfers at the processor (${[...keys].join(', ')})`);
      if (paidEvents > 1) problems.push(`claim ${claim.claimId}: ${paidEvents} claim.paid events`);
      duplicates += Math.max(0, keys.size - 1) + Math.max(0, paidEvents - 1);
      for (const key of keys)
        if (!new RegExp(`^claim-${claim.claimId}-payment-\\d+$`).test(key)) problems.push(`claim ${claim.claimId}: transfer key ${key}`);
      const amounts = new Set(of.map((t) => t.params.get('amount')));
      if (amounts.size && (amounts.size > 1 || !amounts.has(String(APPROVED_MINOR))))
        problems.push(`claim ${claim.claimId}: transfer amounts ${[...amounts].join(', ')} for ${APPROVED_MINOR}`);
      const whyLost: string[] = [];
      if (!row || row.status !== 'paid') whyLost.push(`still ${row?.status ?? 'missing'}`);
      else if (Number(row.paid_amount_minor) !== APPROVED_MINOR || !row.payment_reference?.startsWith('tr_'))
        whyLost.push(`paid ${row.paid_amount_minor} with reference ${row.payment_reference}`);
      if (keys.size === 0) whyLost.push('no transfer reached the processor');
      if (paidEvents === 0) whyLost.push('no claim.paid event');
      if (whyLost.length) {
        lost++;
        problems.push(`claim ${claim.claimId} of purchase ${claim.purchaseId}: ${whyLost.join('; ')}`);
      }
    }
    const broken = this.samples.filter((x) => x.problem);
    for (const b of broken.slice(0, 5)) problems.push(`${b.kind} ${b.status}: ${b.problem}`);
    const approved = this.claims.filter((c) => c.approvedAt !== null);
    const paid = rows.filter((r) => r.status === 'paid' && r.paid_at);
    return {
      claims: this.claims.length,
      sent: this.sent,
      approved: approved.length,
      approvedDuringFault: approved.filter((c) => c.approvedAt! <= faultEnded).length,
      paid: paid.length,
      transfersCreated,
      transferRequests: transfers.length,
      paidEvents: events.reduce((n, e) => n + e.n, 0),
      duplicates,
      lost,
      drainMs:
        lost === 0 && paid.length === approved.length && paid.length > 0
          ? Math.max(...paid.map((r) => r.paid_at!.getTime())) - faultEnded
          : null,
      badAnswers: broken.length,
      problems,
    };
  }
}

/** The report's paragraph of a fault's claim payouts (`o`), approvals sent one every `intervalMs`. */
export function claimPayoutLines(o: ClaimPayoutOutcome & { preparedMs: number }, intervalMs: number, boundMs: number): string[] {
  const secs = (ms: number | null) => (ms === null ? 'never' : `${(ms / 1000).toFixed(1)} s`);
  return [
    `claim payouts during the fault: ${o.claims} claims filed with a payout account and under review before the load in ${secs(o.preparedMs)}; ${o.sent} approvals sent one every ${secs(intervalMs)}, ` +
      `${o.approved} answered 200, ${o.approvedDuringFault} of them before the fault ended, ${o.badAnswers} answers not 200; ` +
      `**transfers created at the processor ${o.transfersCreated}, claims paid ${o.paid}, claim.paid events ${o.paidEvents}, ${o.duplicates} duplicates, ${o.lost} lost** ` +
      `(${o.transferRequests} transfer requests reached the processor, ${o.transferRequests - o.transfersCreated} of them a retry with the same idempotency key); ` +
      `all paid ${secs(o.drainMs)} after the fault ended (bound ${secs(boundMs)})`,
    ...o.problems.slice(0, 10).map((p) => `- ${p}`),
  ];
}
