/**
 * The fault suite's machinery, shared by the suites on each stack shape (faults.fault-suite.ts:
 * the Temporal dev server and one worker; cluster-faults.fault-suite.ts: the Temporal cluster on
 * PostgreSQL and two workers). `describeFaultSuite` boots the shape's stack
 * (test/resilience/lib/fault-stack.ts), runs each fault in turn under LOAD_MS of purchases at RATE
 * per second (test/resilience/lib/load.ts; 30 s on every change, 60 s with RESILIENCE_FULL=1:
 * lib/scope.ts) with the fault injected FAULT_AT_MS in, and then
 * checks that every purchase whose payment webhook was accepted ended issued with exactly one
 * stored certificate per covered unit and one object per certificate, none failed, none
 * duplicated, and that every answer kept the contract: 2xx, or 500/503 with a §7.1 code in the
 * surface's error shape, no stack trace, no hang; and that the service's alert rules, evaluated
 * by the stack's own Prometheus, raised the fault's alerts, nothing live-only for the test-mode
 * load, and no other page (lib/alerts.ts). A long fault with `cancellations` also has issued
 * purchases cancelled during it (lib/cancellations.ts), checked by a test of its own: every
 * cancellation accepted while the processor is out, then refunds created = cancellations
 * accepted, 0 duplicates, 0 lost. A long fault with `claimPayouts` also has claims approved
 * during it (lib/claim-payouts.ts), checked by a test of its own: each paid exactly once after
 * it, none lost. A suite may also have scenarios of its own, not under the
 * load, run after its faults on the same stack (`scenarios`; e.g. lib/holder-reissue.ts). The
 * per-fault tallies are printed and written to var/test-artifacts/<artifact>.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../src/config';
import { createContainer, type Container } from '../../../src/container';
import { createLogger } from '../../../src/logger';
import type { TestApp } from '../../helpers/app';
import { createAgency, eventSelection, type Agency } from '../../helpers/certificates';
import { connectBuyers } from '../../helpers/fixtures';
import { bootFaultStack, createFaultStack, WEBHOOK_SECRET, type FaultStack, type StackShape } from './fault-stack';
import { alertName, alertsBetween, alertsLine, LIVE_ONLY_ALERTS, matches, raised, type ExpectedAlert } from './alerts';
import { PurchaseLoad, quantileMs, tally, type Buyer, type LoadPurchase, type Sample } from './load';
import { CancellationRun, type CancellationOutcome } from './cancellations';
import { ClaimPayoutRun, claimPayoutLines, type ClaimPayoutOutcome } from './claim-payouts';
import { joinTurns, timeline } from './schedule';
import { ISSUE_RATE, machineSpeed, rateFor, REFERENCE_PROBE_MS } from './machine';
import { SCOPE } from './scope';

/** This machine against the machines the issue's rate was set on (lib/machine.ts). */
export const MACHINE = machineSpeed();
/**
 * Purchases per second: the issue's 5/s on a machine of the reference speed, proportionally less
 * on a slower one (lib/machine.ts); RESILIENCE_RATE sets it by hand, to explore locally.
 */
export const RATE = process.env.RESILIENCE_RATE ? Number(process.env.RESILIENCE_RATE) : rateFor(MACHINE);
/** Each fault's load, in ms: 30 s on every change, 60 s in the full run (lib/scope.ts). */
const LOAD_MS = SCOPE.loadMs;
const FAULT_AT_MS = 10_000;
/**
 * The long processor outages: 2 minutes on every change, 10 minutes in the full run
 * (RESILIENCE_FULL=1, lib/scope.ts); RESILIENCE_PROCESSOR_OUTAGE_MS sets them by hand, to explore
 * locally (the scenario names say the length actually run).
 */
export const PROCESSOR_OUTAGE_MS = SCOPE.processorOutageMs;
const DRAIN_MS = 5 * 60_000;
/**
 * Issued purchases cancelled during each long processor outage, at most one a second: 20 on every
 * change, sent within the outage's first half minute; 60 in the full run, within its first
 * minute (lib/scope.ts). RESILIENCE_CANCELLATIONS changes it, to explore locally only.
 */
export const CANCELLATIONS = SCOPE.cancellations;
/** Approved claims paid by transfer through the refused processor's outage: the issue's 20, in both runs (lib/claim-payouts.ts). */
export const CLAIM_PAYOUTS = 20;
/** The first cancellation goes out this long after the fault began. */
const CANCEL_AT_MS = 2000;
/** Buying and issuing the purchases to cancel, before the load: at most this long. */
const PREPARE_MS = 4 * 60_000;
/** Every accepted cancellation must be completed, refunded once and voided within this long after the fault ended. */
const CANCEL_DRAIN_MS = 3 * 60_000;
/** A hang: no answer 5 s after the API's own 30 s deadline for a checkout (workflow-client.ts). */
const REQUEST_TIMEOUT_MS = 35_000;
const BUYERS = 40;
const ARTIFACTS = path.resolve(__dirname, '..', '..', '..', 'var', 'test-artifacts');

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Fault {
  name: string;
  /** Runs the fault from its start to the dependency answering again. */
  inject(stack: FaultStack): Promise<void>;
  /**
   * A fault that outlasts the load: the load stops after its LOAD_MS while the fault goes on, and
   * the first webhook delivery of every odd-numbered purchase waits until the fault is over; the
   * others' go out during it, spread in ten steps from 15 s in to about a tenth of it plus 25 s
   * before its end (37 s of the shortened run's 2 minutes, 1.5 minutes of the full run's 10), so
   * some payments reach workflows whose processor calls have been retrying for over a minute.
   */
  long?: boolean;
  /**
   * The alerts the service's rules must raise (pending or firing; firing within `firingWithinMs`
   * of the fault's start when given) from the fault's start to the
   * end of the drain, read from the stack's Prometheus; also the only `page` alerts allowed to
   * fire. Whatever the fault, no live-only alert (LIVE_ONLY_ALERTS) may even be pending: the
   * load runs in test mode.
   */
  alerts: ExpectedAlert[];
  /** Alerts that must not even go pending during this fault (a fault the service rides out). */
  quiet?: ExpectedAlert[];
  /**
   * A long fault only: this many purchases of two covered days are bought, paid (test helper)
   * and issued before the load, then cancelled during the fault, at most one a second from
   * CANCEL_AT_MS in (three ways, some sent twice: lib/cancellations.ts). Their figures have a
   * test of their own, after the fault's.
   */
  cancellations?: number;
  /**
   * A long fault only: this many claims with a payout account are filed and taken under review
   * before the load, then approved during the fault beside the cancellations (lib/claim-payouts.ts);
   * a test of their own checks each paid exactly once after it, none lost.
   */
  claimPayouts?: number;
}

/** What a scenario of its own (`scenarios`) gets: the suite's stack and its fixtures. */
export interface ScenarioContext {
  stack: FaultStack;
  /** A container on the stack's database and storage (the test's side: reads and fixtures). */
  container: Container;
  agency: Agency;
  buyers: Buyer[];
  /** Adds a section (markdown) to the suite's report. */
  report(section: string): void;
}

/**
 * A fault scenario of its own, not under the load: its test runs after the suite's faults, on the
 * same stack (`run` injects the fault and checks the outcome with `expect`).
 */
export interface Scenario {
  /** The test's name. */
  name: string;
  timeoutMs: number;
  run(ctx: ScenarioContext): Promise<void>;
}

/** What a fault's cancellations came to, for its cancellation test. */
interface CancellationFigures extends CancellationOutcome {
  /** Cancellations the fault was to make. */
  planned: number;
}

/** Objects in the bucket per purchase id, from the storage JSON API (paged). */
async function objectsByPurchase(stack: FaultStack): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  let pageToken: string | undefined;
  do {
    const url = new URL(`${stack.storageUrl}/storage/v1/b/${stack.bucket}/o`);
    url.searchParams.set('prefix', 'purchases/');
    url.searchParams.set('maxResults', '1000');
    if (pageToken) url.searchParams.set('pageToken', pageToken);
    const page = (await (await fetch(url)).json()) as { items?: { name: string }[]; nextPageToken?: string };
    for (const { name } of page.items ?? []) {
      const id = Number(/^purchases\/(\d+)\//.exec(name)?.[1]);
      out.set(id, [...(out.get(id) ?? []), name]);
    }
    pageToken = page.nextPageToken;
  } while (pageToken);
  return out;
}

interface PurchaseCheck {
  purchaseId: number;
  problem: string | null;
}

/** What is wrong with each paid purchase's certificates, rows and objects (null when right). */
async function checkPurchases(container: Container, stack: FaultStack, paid: LoadPurchase[]): Promise<PurchaseCheck[]> {
  const ids = paid.map((p) => p.purchaseId);
  const rows = await container
    .db('purchases as p')
    .whereIn('p.id', ids)
    .select(
      'p.id',
      'p.certificates_issued_at',
      container.db.raw(
        '(select count(*) from covered_units u join purchase_items i on i.id = u.purchase_item_id where i.purchase_id = p.id)::int as units',
      ),
      container.db.raw('(select count(*) from certificates c where c.purchase_id = p.id)::int as certificates'),
      container.db.raw('(select count(*) from certificates c where c.purchase_id = p.id and c.storage_key is not null)::int as stored'),
      container.db.raw('(select count(*) from certificate_archives a where a.purchase_id = p.id)::int as archives'),
      'p.status',
      'p.failure_reason',
    );
  const byId = new Map(rows.map((r) => [r.id as number, r]));
  const objects = await objectsByPurchase(stack);
  return paid.map((p) => {
    const r = byId.get(p.purchaseId);
    const pdfs = (objects.get(p.purchaseId) ?? []).filter((n) => n.includes('/certificates/'));
    const zips = (objects.get(p.purchaseId) ?? []).filter((n) => n.endsWith('.zip'));
    let problem: string | null = null;
    if (!r) problem = 'no purchase row';
    else if (r.status === 'failed') problem = `failed: ${r.failure_reason}`;
    else if (!r.certificates_issued_at) problem = `not issued (${r.stored}/${r.units} certificates stored)`;
    else if (r.units !== p.units) problem = `${r.units} covered units, quoted ${p.units}`;
    else if (r.certificates !== p.units || r.stored !== p.units)
      problem = `${r.certificates} certificate rows (${r.stored} stored) for ${p.units} units`;
    else if (pdfs.length !== p.units) problem = `${pdfs.length} PDF objects for ${p.units} certificates`;
    else if (r.archives !== 2 || zips.length !== 2) problem = `${r.archives} archive rows and ${zips.length} zip objects, expected 2 and 2`;
    return { purchaseId: p.purchaseId, problem };
  });
}

/** The run's scope (lib/scope.ts), for the report's first line. */
function scopeWords(): string {
  const mins = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${(ms / 1000).toFixed(0)} s`);
  return `${SCOPE.name} run (${SCOPE.name === 'full' ? 'RESILIENCE_FULL=1' : 'RESILIENCE_FULL=1 runs the full one'}): ${LOAD_MS / 1000} s loads, processor outages of ${mins(PROCESSOR_OUTAGE_MS)}, ${CANCELLATIONS} cancellations in each`;
}

/** The report's first line: the run's scope, the rate offered and why (lib/machine.ts). */
function rateLine(): string {
  const probe =
    MACHINE.probeMs === null
      ? 'machine not timed'
      : `machine probe ${MACHINE.probeMs.toFixed(0)} ms against ${REFERENCE_PROBE_MS} ms on the reference machines (${MACHINE.slowdown.toFixed(1)}x slower)`;
  return process.env.RESILIENCE_RATE
    ? `${scopeWords()}; load: ${RATE} purchases/s, set by RESILIENCE_RATE (${probe})`
    : `${scopeWords()}; load: ${RATE} purchases/s (the issue's ${ISSUE_RATE}/s on a machine of the reference speed; ${probe})`;
}

function tallyTable(samples: Sample[]): string {
  const t = tally(samples);
  const statuses = [...new Set(samples.map((s) => String(s.status)))].sort();
  const lines = [`| request | ${statuses.join(' | ')} | contract broken |`, `|---|${statuses.map(() => '---:').join('|')}|---:|`];
  for (const [kind, byStatus] of t) {
    const broken = samples.filter((s) => s.kind === kind && s.problem).length;
    lines.push(`| ${kind} | ${statuses.map((st) => byStatus.get(st) ?? 0).join(' | ')} | ${broken} |`);
  }
  return lines.join('\n');
}

/**
 * Declares the jest suite `title`: boots the stack of `shape` (its ports by `shape.slot`), waits
 * for its turn (`turn.phase`, see ./schedule.ts), runs `faults` (short ones first, then long
 * ones), then scans the API and worker logs for secrets. Report: var/test-artifacts/`artifact`.md.
 *
 * The suites run at the same time, each on its own stack, and take turns so that no two offer
 * their load at once (two loads would share the machine's cores, and a suite measures one
 * stack's answers under one load). `turn.holds` says when the turn ends: after the whole suite,
 * or (`load`) as soon as its faults' loads have stopped, for a long outage that is then mostly
 * waiting. `turn.bootAfter` also holds back the stack's boot. `scenarios` run after the faults,
 * one test each, on the same stack without the load.
 */
export function describeFaultSuite({
  title,
  shape,
  faults,
  artifact,
  turn: turnOf,
  scenarios = [],
}: {
  title: string;
  shape: StackShape;
  faults: Fault[];
  artifact: string;
  /** Scenarios of their own, after the faults (one test each). */
  scenarios?: Scenario[];
  /** `bootAfter`: boot only once every suite of a lower phase is done (an idle stack costs the machine too). */
  turn: { phase: number; holds: 'suite' | 'load'; bootAfter?: number };
}): void {
  describe(title, () => {
    const turn = joinTurns(artifact, turnOf.phase);
    const dir = path.join(os.tmpdir(), `insurance-resilience-${artifact}-${process.pid}`);
    let stack: FaultStack;
    let container: Container;
    let agency: Agency;
    let buyers: Buyer[];
    const report: string[] = [rateLine()];
    const cancellationFigures = new Map<string, CancellationFigures>();
    const payoutFigures = new Map<string, ClaimPayoutOutcome>();

    beforeAll(
      async () => {
        if (turnOf.bootAfter !== undefined) await turn.wait(turnOf.bootAfter);
        timeline(artifact, 'stack boots');
        stack = createFaultStack(dir, shape);
        await bootFaultStack(stack, dir);
        const config = loadConfig({ ...process.env, ...stack.env, LOG_LEVEL: 'silent' });
        container = createContainer(config, createLogger(config, 'resilience-fixtures'));
        agency = await createAgency({ baseUrl: stack.apiUrl, container } as TestApp, 'Resilience Mutual Agency');
        const email = (i: number) => `load.buyer${i}@example.com`;
        buyers = await connectBuyers(stack.apiUrl, agency, BUYERS, { firstName: 'Load', email, queryParam: 'resilience' });
        const ready = Date.now();
        timeline(artifact, 'stack ready, agency and buyers made');
        await turn.wait();
        process.stdout.write(`${title}: stack ready; its turn came ${((Date.now() - ready) / 1000).toFixed(0)} s later; ${rateLine()}\n`);
      },
      300_000 + 2 * 45 * 60_000,
    ); // the boot and the load may each wait up to 45 min for a turn

    afterAll(async () => {
      turn.done();
      fs.mkdirSync(ARTIFACTS, { recursive: true });
      const text = `# ${title}\n\n${report.join('\n\n')}\n`;
      fs.writeFileSync(path.join(ARTIFACTS, `${artifact}.md`), text);
      process.stdout.write(`\n${text}\n`);
      await container?.close();
      await stack?.stopAll();
      fs.rmSync(dir, { recursive: true, force: true });
    }, 120_000);

    const runFault = async (fault: Fault) => {
      let faultBegan!: () => void;
      let faultOver!: () => void;
      const began = new Promise<void>((resolve) => (faultBegan = resolve));
      const over = new Promise<void>((resolve) => (faultOver = resolve));
      // Purchases to cancel during the fault, bought and issued before its load (in the suite's turn).
      const cancellations = fault.cancellations
        ? new CancellationRun({ apiUrl: stack.apiUrl, apiKey: agency.key, requestTimeoutMs: REQUEST_TIMEOUT_MS })
        : null;
      const payouts = fault.claimPayouts
        ? new ClaimPayoutRun({ apiUrl: stack.apiUrl, apiKey: agency.key, requestTimeoutMs: REQUEST_TIMEOUT_MS })
        : null;
      const cancelIntervalMs = fault.cancellations
        ? Math.min(1000, Math.max(50, (PROCESSOR_OUTAGE_MS - CANCEL_AT_MS - 30_000) / fault.cancellations))
        : 0;
      timeline(artifact, `${fault.name}: begins`);
      const prepareStarted = Date.now();
      // Two covered days in July 2027 each, claimed after them (the purchases' test clocks moved on).
      const payoutsPrepared = payouts?.prepare({
        count: fault.claimPayouts!,
        buyers,
        container,
        timeoutMs: PREPARE_MS,
        selection: (i) =>
          eventSelection(
            agency,
            { start: `2027-07-${String(1 + (i % 27)).padStart(2, '0')}`, end: `2027-07-${String(2 + (i % 27)).padStart(2, '0')}` },
            `Claimant Insured ${i}`,
          ),
      });
      payoutsPrepared?.catch(() => undefined); // awaited below
      await cancellations?.prepare({
        count: fault.cancellations!,
        buyers,
        container,
        timeoutMs: PREPARE_MS,
        // Two covered days in June 2027: unstarted, so within free look each cancellation refunds its share.
        selection: (i) => {
          const iso = (day: number) => `2027-06-${String(day).padStart(2, '0')}`;
          return eventSelection(agency, { start: iso(1 + (i % 28)), end: iso(2 + (i % 28)) }, `Cancelled Insured ${i}`);
        },
      });
      await payoutsPrepared;
      const preparedMs = Date.now() - prepareStarted;
      const load = new PurchaseLoad({
        // Long faults: purchases checked out before the fault are paid half during it, half after it.
        ...(fault.long
          ? {
              firstDeliveryAfter: (n: number) =>
                n % 2 === 0
                  ? began.then(async () => void (await sleep(15_000 + ((n / 2) % 10) * Math.max(0, (PROCESSOR_OUTAGE_MS - 45_000) / 10))))
                  : over,
            }
          : {}),
        apiUrl: stack.apiUrl,
        apiKey: agency.key,
        teammateUuid: agency.teammateUuid,
        webhookSecret: WEBHOOK_SECRET,
        buyers,
        // One to three covered days, so some purchases need more than one certificate.
        selection: (n) => {
          const days = 1 + (n % 3);
          const start = new Date(Date.UTC(2027, 2, 1 + (n % 28)));
          const end = new Date(start.getTime() + (days - 1) * 86_400_000);
          const iso = (d: Date) => d.toISOString().slice(0, 10);
          return { line: eventSelection(agency, { start: iso(start), end: iso(end) }, `Load Insured ${n}`), units: days };
        },
        ratePerSecond: RATE,
        requestTimeoutMs: REQUEST_TIMEOUT_MS,
      });
      const started = Date.now();
      load.start();
      await sleep(FAULT_AT_MS);
      const faultStarted = Date.now();
      faultBegan();
      const faultDone = fault.inject(stack);
      cancellations?.start({ delayMs: CANCEL_AT_MS, intervalMs: cancelIntervalMs });
      payouts?.start({ delayMs: CANCEL_AT_MS + cancelIntervalMs / 2, intervalMs: cancelIntervalMs });
      if (!fault.long) await faultDone;
      await sleep(Math.max(0, LOAD_MS - (Date.now() - started)));
      load.stop();
      if (turnOf.holds === 'load' && fault === faults.at(-1)) turn.done();
      const loadMs = Date.now() - started;
      await faultDone;
      const faultEnded = Date.now();
      const faultMs = faultEnded - faultStarted;
      faultOver();
      // Cancellations are made during the fault only; their drain is awaited beside the purchases'.
      cancellations?.stop();
      await cancellations?.settle();
      const cancelled = cancellations?.outcome({
        container,
        processor: () => stack.processorGate.requests,
        faultEnded,
        boundMs: CANCEL_DRAIN_MS,
      });
      cancelled?.catch(() => undefined); // awaited below
      await payouts?.stopAndSettle();
      const paidOut = payouts?.outcome({ container, processor: () => stack.processorGate.requests, faultEnded, boundMs: CANCEL_DRAIN_MS });
      paidOut?.catch(() => undefined); // awaited below
      await load.settle(DRAIN_MS);

      const paid = load.purchases.filter((p) => p.paid);
      const drainStarted = Date.now();
      let checks = await checkPurchases(container, stack, paid);
      while (checks.some((c) => c.problem) && Date.now() - drainStarted < DRAIN_MS) {
        await sleep(2000);
        checks = await checkPurchases(container, stack, paid);
      }
      const issuedAfterMs = Date.now() - drainStarted;
      timeline(artifact, `${fault.name}: load, fault and drain over`);
      // Webhooks accepted while the fault lasted and after it ended.
      const during = paid.filter((p) => p.paidAt! >= faultStarted && p.paidAt! < faultEnded).length;
      const after = paid.filter((p) => p.paidAt! >= faultEnded).length;
      // Every purchase so far, paid or not, of this fault and the earlier ones (a checkout answered
      // 503 may still have its row): none may end failed for a transient processor problem.
      const runPurchases = container.db('purchases').where('created_at', '>=', new Date(started - 1000));
      const failed: { id: number; failure_reason: string | null }[] = await container
        .db('purchases')
        .where({ status: 'failed' })
        .select('id', 'failure_reason');
      // No covered unit of the run with more than one certificate (the schema forbids it; checked anyway).
      const duplicates: { purchase_id: number; covered_unit_id: number; n: number }[] = await container
        .db('certificates')
        .whereIn('purchase_id', runPurchases.clone().select('id'))
        .groupBy('purchase_id', 'covered_unit_id')
        .havingRaw('count(*) > 1')
        .select('purchase_id', 'covered_unit_id', container.db.raw('count(*)::int as n'));
      // A payment accepted by the webhook whose purchase never got its certificates is dropped.
      const dropped = checks.filter((c) => c.problem && /^(no purchase row|not issued)/.test(c.problem));
      const broken = load.samples.filter((s) => s.problem);
      const wrong = checks.filter((c) => c.problem);
      const units = paid.reduce((n, p) => n + p.units, 0);
      // What the alert rules made of it, from the fault's start to now.
      const alerts = await alertsBetween(stack.prometheusUrl, faultStarted, Date.now());
      const missingAlerts = fault.alerts.filter((e) => !raised(e, alerts, faultStarted)).map(alertName);
      const liveOnlyAlerts = alerts.filter((a) => (LIVE_ONLY_ALERTS as readonly string[]).includes(a.alertname)).map(alertName);
      const notQuiet = (fault.quiet ?? []).filter((q) => alerts.some((a) => matches(q, a))).map(alertName);
      const pagesFired = alerts.filter((a) => a.severity === 'page' && a.firing && !fault.alerts.some((e) => matches(e, a))).map(alertName);
      const c = await cancelled;
      if (c) cancellationFigures.set(fault.name, { ...c, planned: fault.cancellations! });
      const claimFigures = await paidOut;
      if (claimFigures) payoutFigures.set(fault.name, claimFigures);
      const secs = (ms: number | null) => (ms === null ? 'never' : `${(ms / 1000).toFixed(1)} s`);
      const cancellationLines = c
        ? [
            `cancellations during the fault: ${fault.cancellations} purchases of two covered days bought, paid (test helper) and issued before the load in ${secs(preparedMs)}; ` +
              `${c.sent} cancellations sent one every ${secs(cancelIntervalMs)} from ${secs(CANCEL_AT_MS)} into the fault (${Object.entries(
                c.byKind,
              )
                .map(([k, n]) => `${n} ${k}`)
                .join(', ')}), ` +
              `${c.accepted} accepted with 200, ${c.acceptedDuringFault} of them before the fault ended (cancel p50 ${quantileMs(cancellations!.samples, 'cancel', 0.5)} ms, p99 ${quantileMs(cancellations!.samples, 'cancel', 0.99)} ms), ${c.badAnswers} answers not 200/201; ` +
              `${c.repeats} sent again as a client retry, ${c.repeatsSame} answered with the same cancellation; ` +
              `**refunds created at the processor ${c.refundsCreated}, cancellations accepted ${c.accepted}, ${c.duplicates} duplicates, ${c.lost} lost** ` +
              `(${c.refundRequests} refund requests reached the processor, ${c.refundRequests - c.refundsCreated} of them a retry with the same idempotency key; the first ${c.firstRefundAfterMs === null ? 'never' : c.firstRefundAfterMs <= 0 ? 'as the processor came back' : `${secs(c.firstRefundAfterMs)} after the fault ended`}; ${stack.processorGate.unparsed} connections unparsed); ` +
              `${c.rows} cancellations in the database; all completed with their certificates voided ${secs(c.drainMs)} after the fault ended (bound ${secs(CANCEL_DRAIN_MS)})`,
            ...c.problems.slice(0, 10).map((p) => `- ${p}`),
          ]
        : [];
      report.push(
        [
          `## ${fault.name}`,
          `load ${(loadMs / 1000).toFixed(0)} s: ${load.attempted} checkouts offered (${(load.attempted / (loadMs / 1000)).toFixed(1)}/s), ${load.purchases.length} accepted (checkout p50 ${quantileMs(load.samples, 'checkout', 0.5)} ms, p99 ${quantileMs(load.samples, 'checkout', 0.99)} ms); fault lasted ${(faultMs / 1000).toFixed(1)} s; ` +
            `${paid.length} paid purchases (${units} certificates), all issued ${(issuedAfterMs / 1000).toFixed(1)} s after the last webhook was accepted; ` +
            `${wrong.length} purchases wrong, ${dropped.length} payments dropped, ${failed.length} purchases failed, ${duplicates.length} duplicate certificates; ` +
            `webhooks accepted during the fault ${during}, after it ${after}${fault.long ? ` (processor connections held by the gate so far: ${stack.processorGate.held})` : ''}; ` +
            `${broken.length} answers broke the contract; ${stack.workers.map((w) => `${w.spec.name} ${w.running ? 'running' : 'DOWN'}`).join(', ')}, api ${stack.api.running ? 'running' : 'DOWN'}`,
          `${alertsLine(alerts)}; expected ${fault.alerts.length ? fault.alerts.map(alertName).join(', ') : 'none'}`,
          ...cancellationLines,
          ...(claimFigures
            ? claimPayoutLines({ ...claimFigures, preparedMs: payouts!.preparedMs }, cancelIntervalMs, CANCEL_DRAIN_MS)
            : []),
          tallyTable([...load.samples, ...(cancellations?.samples ?? []), ...(payouts?.samples ?? [])]),
          ...broken.slice(0, 5).map((s) => `- ${s.kind} ${s.status}: ${s.problem}`),
          ...wrong.slice(0, 5).map((c) => `- purchase ${c.purchaseId}: ${c.problem}`),
          ...failed.slice(0, 5).map((f) => `- purchase ${f.id} failed: ${f.failure_reason}`),
          ...duplicates.slice(0, 5).map((d) => `- purchase ${d.purchase_id}: covered unit ${d.covered_unit_id} has ${d.n} certificates`),
        ].join('\n\n'),
      );

      // The load really was offered at RATE (a checkout refused during an outage is not paid).
      expect(load.attempted / (loadMs / 1000)).toBeGreaterThanOrEqual(RATE * 0.95);
      expect(paid.length).toBe(load.purchases.length);
      expect(wrong).toEqual([]);
      expect(dropped).toEqual([]);
      expect(duplicates).toEqual([]);
      expect(failed).toEqual([]);
      if (fault.long) {
        // Payments reported during the outage and after it were both exercised.
        expect(during).toBeGreaterThan(0);
        expect(after).toBeGreaterThan(0);
      }
      expect(broken.map((s) => `${s.kind} ${s.status}: ${s.problem}`)).toEqual([]);
      expect(stack.api.running && stack.workers.every((w) => w.running)).toBe(true);
      // The rules saw the fault, test-mode noise raised nothing live-only, and no other page fired.
      expect({ missingAlerts, liveOnlyAlerts, pagesFired, notQuiet }).toEqual({
        missingAlerts: [],
        liveOnlyAlerts: [],
        pagesFired: [],
        notQuiet: [],
      });
    };

    const short = faults.filter((f) => !f.long).map((f) => [f.name, f] as const);
    const long = faults.filter((f) => f.long).map((f) => [f.name, f] as const);
    if (short.length)
      it.each(short)(
        `when %s under ${RATE} purchases/s for ${LOAD_MS / 1000} s, then every paid purchase ends with all its certificates once and every answer keeps the contract`,
        (_name, fault) => runFault(fault),
        LOAD_MS + 2 * DRAIN_MS + 120_000,
      );

    if (long.length)
      it.each(long)(
        `when %s under ${RATE} purchases/s for ${LOAD_MS / 1000} s, webhooks delivered during and after it, then every paid purchase ends with all its certificates once, none failed, and every answer keeps the contract`,
        (_name, fault) => runFault(fault),
        // the purchases to cancel, the outage, then the webhook re-deliveries and the issuance drain
        PREPARE_MS + FAULT_AT_MS + Math.max(LOAD_MS, PROCESSOR_OUTAGE_MS) + 2 * DRAIN_MS + 120_000,
      );

    const cancelling = faults.filter((f) => f.long && f.cancellations).map((f) => [f.name, f] as const);
    if (cancelling.length)
      it.each(cancelling)(
        'when %s while issued purchases are cancelled (at most one a second), then every cancellation is accepted during it and afterwards refunds created = cancellations accepted, 0 duplicates, 0 lost',
        (_name, fault) => {
          const c = cancellationFigures.get(fault.name);
          if (!c) throw new Error(`the fault "${fault.name}" did not run as far as its cancellation figures`);
          // Each purchase cancelled once, accepted with 200 while the processor was out (acceptance makes no processor call).
          expect({ sent: c.sent, accepted: c.accepted, acceptedDuringFault: c.acceptedDuringFault, badAnswers: c.badAnswers }).toEqual({
            sent: c.planned,
            accepted: c.planned,
            acceptedDuringFault: c.planned,
            badAnswers: 0,
          });
          expect(c.repeatsSame).toBe(c.repeats);
          // The issue's figures: one refund per accepted cancellation, none twice, none lost.
          expect({ refundsCreated: c.refundsCreated, rows: c.rows }).toEqual({ refundsCreated: c.accepted, rows: c.accepted });
          expect({ duplicates: c.duplicates, lost: c.lost }).toEqual({ duplicates: 0, lost: 0 });
          expect(c.drainMs).not.toBeNull();
          expect(c.problems).toEqual([]);
        },
      );

    const paying = faults.filter((f) => f.long && f.claimPayouts).map((f) => [f.name, f] as const);
    if (paying.length)
      it.each(paying)(
        'when %s while approved claims are to be paid by transfer, then every approval is answered during it and afterwards each claim is paid exactly once (one transfer per claim payment key, status paid, one claim.paid event), none lost',
        (_name, fault) => {
          const p = payoutFigures.get(fault.name);
          if (!p) throw new Error(`the fault "${fault.name}" did not run as far as its claim payout figures`);
          const n = fault.claimPayouts!;
          expect({
            claims: p.claims,
            sent: p.sent,
            approved: p.approved,
            approvedDuringFault: p.approvedDuringFault,
            badAnswers: p.badAnswers,
          }).toEqual({
            claims: n,
            sent: n,
            approved: n,
            approvedDuringFault: n,
            badAnswers: 0,
          });
          expect({ transfersCreated: p.transfersCreated, paid: p.paid, paidEvents: p.paidEvents }).toEqual({
            transfersCreated: n,
            paid: n,
            paidEvents: n,
          });
          expect({ duplicates: p.duplicates, lost: p.lost }).toEqual({ duplicates: 0, lost: 0 });
          expect(p.drainMs).not.toBeNull();
          expect(p.problems).toEqual([]);
        },
      );

    for (const scenario of scenarios) {
      it(
        scenario.name,
        () => scenario.run({ stack, container, agency, buyers, report: (section) => void report.push(section) }),
        scenario.timeoutMs,
      );
    }

    it('when the faults are over, then no log line of the API or worker contains an API key, access token or secret', () => {
      const secrets = [
        agency.key,
        ...buyers.map((b) => b.access_token),
        WEBHOOK_SECRET,
        stack.env.PAYPROC_TEST_SECRET_KEY,
        stack.env.PAYPROC_LIVE_SECRET_KEY,
      ].filter((s): s is string => Boolean(s));
      expect(secrets.length).toBe(BUYERS + 4);
      const logs = [stack.api.spec.logFile, ...stack.workers.map((w) => w.spec.logFile)].map((f) => fs.readFileSync(f, 'utf8')).join('\n');
      expect(logs.length).toBeGreaterThan(1000); // the scan reads real logs
      expect(secrets.filter((s) => logs.includes(s))).toEqual([]);
    });
  });
}
