/**
 * The commands of the model-based suite (issue 54): fast-check `AsyncCommand`s over the model
 * (test/model/policy-model.ts) and the real stack (test/model/real.ts). Each `check(model)` says
 * whether the command applies now; `run(model, stack)` calls the real API, predicts the answer
 * and updates the model from the documented rules (never from the service's answer: ids only
 * name things), then checks every invariant (test/model/invariants.ts).
 *
 * Commands: buy a one-time purchase of 1–4 days and pay it; add a certificate holder (once, the
 * same Idempotency-Key twice in a row, or twice at once); remove one; cancel days now (priced at
 * once, through a quote carried out twice, or the same Idempotency-Key twice at once), including
 * days already cancelled (a refusal); cancel later and rescind; a bulk cancellation of some of the purchases; move a day (an
 * endorsement at no price); a refund from the processor's dashboard (part, or all that is left); the
 * buyer's withdrawal through their signed link; a dispute (open, won or lost). Faults: the
 * processor refusing connections, or hanging until the service gives up on it, while a
 * cancellation's refund is due, storage refusing while a
 * holder's certificates are stored, the worker restarted while a cancellation is under way.
 * Selections (which purchase, which days) are drawn as numbers and resolved against the model
 * when the command runs, so that shrinking keeps them meaningful.
 */
import fc from 'fast-check';
import { call } from '../helpers/fixtures';
import { payByTestHelper } from '../helpers/purchases';
import { eventually } from '../helpers/worker';
import { api, checkAll, checkAnswer, settledPurchase, type Answer } from './invariants';
import {
  activeHolders,
  activeUnits,
  addDays,
  applyCancellation,
  applyDashboardRefund,
  cancellationRefundMinor,
  cancellationRefusal,
  changeRefusal,
  dateFree,
  DAY_PREMIUM_MINOR,
  holderRemovalRefusal,
  recordSale,
  refundableMinor,
  type DisputeStatus,
  type ModelPurchase,
  type PolicyModel,
} from './policy-model';
import { platformFeeOf, quoteBodyFor, type ModelStack } from './real';
import { signWithdrawalToken } from '../../src/withdrawals/token';

type Cmd = fc.AsyncCommand<PolicyModel, ModelStack>;

/** The first covered day of the purchases the suite buys (their days follow it). */
const FIRST_DAY = '2027-05-01';
/** Days a moved day may go to: 2027-06-01 onwards. */
const MOVE_BASE = '2027-06-01';
/** When a scheduled cancellation takes effect: before any covered day, after now. */
const SCHEDULED_AT = '2027-04-20T12:00:00.000Z';
/** Purchases one sequence buys at most (each costs a checkout and certificates). */
const MAX_PURCHASES = 3;

const VENUE = (n: number) => ({
  name: `Model Hall ${n} LLC`,
  address: { line1: `${n} River Rd`, city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
  description_of_operations: 'Model-based suite',
});

let keys = 0;
const idempotencyKey = (what: string) => `model-${what}-${Date.now()}-${keys++}`;

function fail(what: string): never {
  throw new Error(`unexpected answer: ${what}`);
}

/** `res` must be `status` (and, for a refusal, carry `code`). */
function expectAnswer(res: Answer, status: number, code?: string): Answer {
  const got = res.body?.error?.code ?? res.body?.code;
  if (res.status !== status || (code !== undefined && got !== code))
    fail(`${res.status} ${got ?? ''} where ${status} ${code ?? ''} was due: ${res.text.slice(0, 300)}`);
  return res;
}

/** The `pick`-th (mod count) of `items`. */
const pickOf = <T>(items: T[], pick: number): T => items[pick % items.length]!;

/** The days of `p` the bits of `mask` select (bit k: the k-th day), or all of them when it selects none. */
const unitsOf = (p: ModelPurchase, mask: number): number[] => {
  const chosen = p.units.filter((_, k) => mask & (1 << k)).map((u) => u.id);
  return chosen.length > 0 ? chosen : [p.units[mask % p.units.length]!.id];
};

/** Purchases that can still be cancelled or changed by the model's rules (no partial dashboard refund: see below). */
const inForce = (m: PolicyModel) => m.purchases.filter((p) => changeRefusal(p) === null);
/**
 * Purchases a cancellation may be asked of. A purchase part-refunded from the dashboard is left
 * out: how a cancellation's refund meets a dashboard refund is not documented yet, so the model
 * cannot predict it (see the report of issue 54).
 */
const cancellable = (m: PolicyModel) => m.purchases.filter((p) => !p.partlyRefundedAtProcessor);

/** Counts the command in the stack's figures, runs `body`, then checks every invariant; refuses to start once the run is stopping. */
async function step(name: string, m: PolicyModel, s: ModelStack, body: () => Promise<void>, fault = false): Promise<void> {
  if (s.stopping) throw new Error('the run is over: no further command');
  s.figures.steps += 1;
  s.figures.byCommand[name] = (s.figures.byCommand[name] ?? 0) + 1;
  if (fault) s.figures.faults += 1;
  await body();
  await checkAll(s, m);
}

/** Buys `days` days from FIRST_DAY + `offset` and pays them through the test helper; certificates issued. */
export class Buy implements Cmd {
  constructor(
    readonly days: number,
    readonly offset: number,
  ) {}
  check = (m: Readonly<PolicyModel>) => m.purchases.length < MAX_PURCHASES;
  run = (m: PolicyModel, s: ModelStack) =>
    step('buy', m, s, async () => {
      const first = addDays(FIRST_DAY, this.offset);
      const body = await quoteBodyFor(s, first, addDays(first, this.days - 1));
      const quoted = await call(s.app.baseUrl, '/public-quote/adminValidateBuyerResponses', { method: 'POST', key: s.key, body });
      expectAnswer(quoted, 200);
      const id = quoted.body.purchase_id as number;
      const paid = expectAnswer(checkAnswer(s, 'POST /api/v1/test_helpers/purchases/{id}/pay', await payByTestHelper(s.app, s, id)), 200);
      const view = await settledPurchase(s, id);
      const units = (view.items[0].covered_units as Array<{ id: number; index: number }>).sort((a, b) => a.index - b.index);
      const holders = checkAnswer(s, 'GET /api/v1/purchases/{id}/certificate_holders', await api(s, `/purchases/${id}/certificate_holders`))
        .body.data as Array<{ id: number }>;
      if (holders.length !== 1) fail(`purchase ${id} has ${holders.length} holders after its sale, the answered one due`);
      recordSale(m, {
        id,
        unitIds: units.map((u) => u.id),
        firstDate: first,
        holderId: holders[0]!.id,
        paymentIntent: paid.body.data?.payment_intent ?? paid.body.payment_intent,
        feeMinor: platformFeeOf(this.days * DAY_PREMIUM_MINOR),
      });
    });
  toString = () => `Buy(${this.days} days from +${this.offset})`;
}

/** How a request is sent: once, the same Idempotency-Key twice in a row, or twice at once. */
export type Sending = 'once' | 'repeat' | 'concurrent';

/**
 * Sends `send(key)` as `sending` says; answers the one answer that counts. The repeats must answer
 * the same status and resource id (one may be 409 IDEMPOTENCY_KEY_IN_PROGRESS while the other runs).
 */
async function sendAs(sending: Sending, send: (key: string) => Promise<Answer>): Promise<Answer> {
  const key = idempotencyKey('req');
  if (sending === 'once') return send(key);
  const answers = sending === 'repeat' ? [await send(key), await send(key)] : await Promise.all([send(key), send(key)]);
  const counted = answers.filter((a) => a.body?.error?.code !== 'IDEMPOTENCY_KEY_IN_PROGRESS');
  if (counted.length === 0) fail(`both sends of key ${key} answered IDEMPOTENCY_KEY_IN_PROGRESS`);
  if (sending === 'concurrent' && counted.length < 2) counted.push(await send(key)); // the one in progress, asked again
  const [a, b] = counted as [Answer, Answer];
  if (a.status !== b.status || a.body?.data?.id !== b.body?.data?.id)
    fail(`the same Idempotency-Key answered ${a.status} ${a.text.slice(0, 200)} then ${b.status} ${b.text.slice(0, 200)}`);
  return a;
}

/** Adds a certificate holder to a purchase (sent `sending`); a purchase not in force refuses. */
export class AddHolder implements Cmd {
  constructor(
    readonly pick: number,
    readonly sending: Sending,
    readonly storageDown = false,
  ) {}
  check = (m: Readonly<PolicyModel>) => m.purchases.length > 0;
  run = (m: PolicyModel, s: ModelStack) =>
    step(
      this.storageDown ? 'add-holder-storage-down' : 'add-holder',
      m,
      s,
      async () => {
        const p = pickOf(m.purchases, this.pick);
        const refusal = changeRefusal(p);
        const refusedBefore = s.storage.refused;
        if (this.storageDown && !refusal) s.storage.down();
        try {
          const op = 'POST /api/v1/purchases/{id}/certificate_holders';
          const res = await sendAs(this.sending, async (key) =>
            checkAnswer(
              s,
              op,
              await api(s, `/purchases/${p.id}/certificate_holders`, {
                method: 'POST',
                body: VENUE(p.holders.length + 1),
                headers: { 'Idempotency-Key': key },
              }),
            ),
          );
          if (refusal) return void expectAnswer(res, 409, refusal);
          expectAnswer(res, 201);
          p.holders.push({ id: res.body.data.id as number, active: true });
          // The holder's certificates wait for storage: wait until the worker has met the outage.
          if (this.storageDown) await eventually(async () => s.storage.refused > refusedBefore, 30_000);
        } finally {
          s.storage.up();
        }
      },
      this.storageDown,
    );
  toString = () => `AddHolder(#${this.pick}, ${this.sending}${this.storageDown ? ', storage down' : ''})`;
}

/** Removes one of a purchase's holders in force: refused for the last one while a day is active, or when not in force. */
export class RemoveHolder implements Cmd {
  constructor(
    readonly pick: number,
    readonly holder: number,
  ) {}
  check = (m: Readonly<PolicyModel>) => m.purchases.length > 0;
  run = (m: PolicyModel, s: ModelStack) =>
    step('remove-holder', m, s, async () => {
      const p = pickOf(m.purchases, this.pick);
      const h = pickOf(activeHolders(p), this.holder);
      const refusal = holderRemovalRefusal(p, h.id);
      const res = checkAnswer(
        s,
        'DELETE /api/v1/purchases/{id}/certificate_holders/{holderId}',
        await api(s, `/purchases/${p.id}/certificate_holders/${h.id}`, { method: 'DELETE' }),
      );
      if (refusal) return void expectAnswer(res, 409, refusal);
      expectAnswer(res, 200);
      h.active = false;
    });
  toString = () => `RemoveHolder(#${this.pick}, holder #${this.holder})`;
}

/** How a cancellation is carried out: priced at once, through a quote (carried out twice), or one Idempotency-Key twice at once. */
export type CancelWay = 'now' | 'quote' | 'concurrent';
/**
 * What goes wrong meanwhile: nothing, the processor refusing connections until the refund was
 * tried, the processor hanging (holding the refund unanswered) until the service's client gave up
 * on it, the worker restarted.
 */
export type CancelFault = 'none' | 'processor-down' | 'processor-hang' | 'worker-restart';

/** Cancellation `cancellationId` of purchase `purchaseId` must not read `completed` (its refund could not have been made: `why`). */
async function expectNotCompleted(s: ModelStack, purchaseId: number, cancellationId: number, why: string): Promise<void> {
  const view = (await api(s, `/purchases/${purchaseId}`)).body.data;
  const c = (view.cancellations as Array<{ id: number; status: string }>).find((x) => x.id === cancellationId);
  if (c?.status === 'completed') fail(`cancellation ${c.id} completed while ${why}`);
}

/** Cancels the days `mask` selects of a purchase, now (see CancelWay, CancelFault); refusals as the model says. */
export class CancelNow implements Cmd {
  constructor(
    readonly pick: number,
    readonly mask: number,
    readonly way: CancelWay,
    readonly fault: CancelFault = 'none',
  ) {}
  check = (m: Readonly<PolicyModel>) => cancellable(m as PolicyModel).length > 0;
  run = (m: PolicyModel, s: ModelStack) =>
    step(
      this.fault === 'none' ? `cancel-${this.way}` : `cancel-${this.fault}`,
      m,
      s,
      async () => {
        const p = pickOf(cancellable(m), this.pick);
        const unitIds = unitsOf(p, this.mask);
        const refusal = cancellationRefusal(p, unitIds);
        const op = 'POST /api/v1/purchases/{id}/cancel';
        const cancel = (body: unknown, key = idempotencyKey('cancel')) =>
          api(s, `/purchases/${p.id}/cancel`, { method: 'POST', body, headers: { 'Idempotency-Key': key } }).then((r) =>
            checkAnswer(s, op, r),
          );
        const body = { covered_unit_ids: unitIds, requested_by: 'agency', reason: 'Model-based suite' };
        if (refusal) return void expectAnswer(await cancel(body), 409, refusal);
        const refund = cancellationRefundMinor(p, unitIds);
        const refusedBefore = s.processor.refused;
        const abandonedBefore = s.gate.abandoned;
        if (this.fault === 'processor-down') s.processor.down();
        if (this.fault === 'processor-hang') s.gate.hang();
        try {
          let res: Answer;
          if (this.way === 'quote') {
            const q = expectAnswer(
              checkAnswer(
                s,
                'POST /api/v1/purchases/{id}/cancellation_quote',
                await api(s, `/purchases/${p.id}/cancellation_quote`, { method: 'POST', body }),
              ),
              201,
            );
            if (q.body.data.refund.total !== refund) fail(`quote of ${unitIds} refunds ${q.body.data.refund.total}, the model ${refund}`);
            res = expectAnswer(await cancel({ quote_id: q.body.data.id }), 200);
            const again = expectAnswer(await cancel({ quote_id: q.body.data.id }), 200);
            if (again.body.data.id !== res.body.data.id)
              fail(`the same quote made cancellations ${res.body.data.id} and ${again.body.data.id}`);
          } else {
            res = expectAnswer(await sendAs(this.way === 'concurrent' ? 'concurrent' : 'once', (key) => cancel(body, key)), 200);
          }
          if (res.body.data.refund.total !== refund)
            fail(`cancellation of ${unitIds} refunds ${res.body.data.refund.total}, the model ${refund}`);
          if (this.fault === 'processor-down') {
            // The refund is due while the processor refuses: wait until it was tried and refused.
            await eventually(async () => s.processor.refused > refusedBefore, 30_000);
            await expectNotCompleted(s, p.id, res.body.data.id, 'the processor refused every connection');
            s.processor.up();
          }
          if (this.fault === 'processor-hang') {
            // The refund is due while the processor hangs: wait until the service's client gave up on it (its timeout).
            await eventually(async () => s.gate.abandoned > abandonedBefore, 30_000);
            await expectNotCompleted(s, p.id, res.body.data.id, 'the processor held every request unanswered');
            s.gate.open();
          }
          if (this.fault === 'worker-restart') await s.restartWorker();
        } finally {
          s.processor.up();
          s.gate.open();
        }
        applyCancellation(m, p, unitIds);
      },
      this.fault !== 'none',
    );
  toString = () => `CancelNow(#${this.pick}, days ${this.mask}, ${this.way}${this.fault === 'none' ? '' : `, ${this.fault}`})`;
}

/** Cancels days later (a quote with effective_at before the first day), then rescinds it: nothing changes. */
export class ScheduleAndRescind implements Cmd {
  constructor(
    readonly pick: number,
    readonly mask: number,
  ) {}
  check = (m: Readonly<PolicyModel>) => cancellable(m as PolicyModel).some((p) => activeUnits(p).length > 0 && !p.refundedAtProcessor);
  run = (m: PolicyModel, s: ModelStack) =>
    step('schedule-rescind', m, s, async () => {
      const p = pickOf(
        cancellable(m).filter((x) => activeUnits(x).length > 0 && !x.refundedAtProcessor),
        this.pick,
      );
      const active = activeUnits(p);
      const chosen = active.filter((_, k) => this.mask & (1 << k)).map((u) => u.id);
      const unitIds = chosen.length > 0 ? chosen : [active[0]!.id];
      const q = expectAnswer(
        checkAnswer(
          s,
          'POST /api/v1/purchases/{id}/cancellation_quote',
          await api(s, `/purchases/${p.id}/cancellation_quote`, {
            method: 'POST',
            body: { covered_unit_ids: unitIds, effective_at: SCHEDULED_AT },
          }),
        ),
        201,
      );
      const res = expectAnswer(
        checkAnswer(
          s,
          'POST /api/v1/purchases/{id}/cancel',
          await api(s, `/purchases/${p.id}/cancel`, { method: 'POST', body: { quote_id: q.body.data.id } }),
        ),
        200,
      );
      if (res.body.data.status !== 'scheduled') fail(`a cancellation dated ${SCHEDULED_AT} is ${res.body.data.status}, not scheduled`);
      const rescind = () =>
        api(s, `/purchases/${p.id}/cancellations/${res.body.data.id}/rescind`, { method: 'POST' }).then((r) =>
          checkAnswer(s, 'POST /api/v1/purchases/{id}/cancellations/{cancellationId}/rescind', r),
        );
      const first = expectAnswer(await rescind(), 200);
      const again = expectAnswer(await rescind(), 200);
      if (first.body.data.status !== 'rescinded' || again.body.data.status !== 'rescinded')
        fail(`rescinding answered ${first.body.data.status}, then ${again.body.data.status}`);
    });
  toString = () => `ScheduleAndRescind(#${this.pick}, days ${this.mask})`;
}

/** Moves one active day of a purchase to a free day in June 2027 (an endorsement at no price). */
export class MoveDay implements Cmd {
  constructor(
    readonly pick: number,
    readonly unit: number,
    readonly to: number,
  ) {}
  check = (m: Readonly<PolicyModel>) => inForce(m as PolicyModel).length > 0;
  run = (m: PolicyModel, s: ModelStack) =>
    step('move-day', m, s, async () => {
      const p = pickOf(inForce(m), this.pick);
      const u = pickOf(activeUnits(p), this.unit);
      let date = addDays(MOVE_BASE, this.to);
      while (!dateFree(p, date)) date = addDays(date, 1);
      const q = expectAnswer(
        checkAnswer(
          s,
          'POST /api/v1/purchases/{id}/endorsement_quote',
          await api(s, `/purchases/${p.id}/endorsement_quote`, {
            method: 'POST',
            body: { changes: [{ type: 'move_covered_unit', covered_unit_id: u.id, start_date: date }] },
          }),
        ),
        201,
      );
      if (q.body.data.total_difference !== 0) fail(`moving a day costs ${q.body.data.total_difference}, nothing due`);
      const res = expectAnswer(
        checkAnswer(
          s,
          'POST /api/v1/purchases/{id}/endorse',
          await api(s, `/purchases/${p.id}/endorse`, { method: 'POST', body: { quote_id: q.body.data.id } }),
        ),
        200,
      );
      if (res.body.data.status !== 'applied') fail(`the move is ${res.body.data.status}, not applied`);
      u.date = date;
    });
  toString = () => `MoveDay(#${this.pick}, day #${this.unit}, to +${this.to})`;
}

/** A refund from the processor's dashboard: a third of what is left, or all of it (the test helper's charge.refunded). */
export class DashboardRefund implements Cmd {
  constructor(
    readonly pick: number,
    readonly all: boolean,
  ) {}
  check = (m: Readonly<PolicyModel>) => m.purchases.some((p) => refundableMinor(p) > 0);
  run = (m: PolicyModel, s: ModelStack) =>
    step('dashboard-refund', m, s, async () => {
      const p = pickOf(
        m.purchases.filter((x) => refundableMinor(x) > 0),
        this.pick,
      );
      const left = refundableMinor(p);
      const amount = this.all ? left : Math.max(1, Math.floor(left / 3));
      const res = checkAnswer(
        s,
        'POST /api/v1/test_helpers/purchases/{id}/refund',
        await api(s, `/test_helpers/purchases/${p.id}/refund`, { method: 'POST', body: this.all ? {} : { amount } }),
      );
      expectAnswer(res, 200);
      if (res.body.data.amount !== amount) fail(`the dashboard refund answered ${res.body.data.amount}, ${amount} asked`);
      applyDashboardRefund(m, p, amount);
    });
  toString = () => `DashboardRefund(#${this.pick}, ${this.all ? 'all that is left' : 'a third'})`;
}

/**
 * A bulk cancellation of the purchases `mask` selects (by id): each one in force loses every day
 * not started, priced like a single cancellation; one not in force (every day cancelled, refunded
 * in full) is skipped (lifecycle.md, "Many at once").
 */
export class BulkCancel implements Cmd {
  constructor(readonly mask: number) {}
  check = (m: Readonly<PolicyModel>) => cancellable(m as PolicyModel).length > 0;
  run = (m: PolicyModel, s: ModelStack) =>
    step('bulk-cancel', m, s, async () => {
      const all = cancellable(m);
      const chosen = all.filter((_, k) => this.mask & (1 << k));
      const purchases = chosen.length > 0 ? chosen : [all[0]!];
      const started = checkAnswer(
        s,
        'POST /api/v1/bulk_cancellations',
        await api(s, '/bulk_cancellations', {
          method: 'POST',
          body: { purchase_ids: purchases.map((p) => p.id), reason: 'Model-based suite' },
        }),
      );
      expectAnswer(started, 202);
      const done = await eventually(async () => {
        const b = checkAnswer(s, 'GET /api/v1/bulk_cancellations/{id}', await api(s, `/bulk_cancellations/${started.body.data.id}`)).body
          .data;
        return b.status === 'completed' ? b : null;
      }, 60_000);
      for (const p of purchases) {
        const item = (done.items as Array<{ purchase_id: number; status: string; refund_total: number | null }>).find(
          (i) => i.purchase_id === p.id,
        );
        const active = activeUnits(p).map((u) => u.id);
        const refusal = cancellationRefusal(p, []);
        if (refusal) {
          if (item?.status !== 'skipped') fail(`bulk item of purchase ${p.id} is ${item?.status}, skipped due (${refusal})`);
          continue;
        }
        if (item?.status !== 'accepted') fail(`bulk item of purchase ${p.id} is ${item?.status}, accepted due`);
        const refund = cancellationRefundMinor(p, active);
        // refund_total is filled once the item's cancellation is priced; compared when there.
        if (item.refund_total !== null && item.refund_total !== undefined && item.refund_total !== refund)
          fail(`bulk item of purchase ${p.id} refunds ${item.refund_total}, the model ${refund}`);
        applyCancellation(m, p, active);
      }
    });
  toString = () => `BulkCancel(purchases ${this.mask})`;
}

/**
 * The buyer withdraws online through their signed link (lifecycle.md "The buyer's own
 * withdrawal"): the page shows what comes back (the model's figure, in dollars), confirming its
 * form cancels every day not started; the link is then used, so a purchase withdraws once.
 */
export class Withdraw implements Cmd {
  constructor(readonly pick: number) {}
  private static candidates = (m: PolicyModel) =>
    cancellable(m).filter((p) => activeUnits(p).length > 0 && !p.refundedAtProcessor && !p.withdrawn);
  check = (m: Readonly<PolicyModel>) => Withdraw.candidates(m as PolicyModel).length > 0;
  run = (m: PolicyModel, s: ModelStack) =>
    step('withdraw', m, s, async () => {
      const p = pickOf(Withdraw.candidates(m), this.pick);
      const path = `/withdraw/${signWithdrawalToken(s.app.container.config.WITHDRAWAL_LINK_KEY, p.id)}`;
      const page = await call(s.app.baseUrl, path, { headers: { accept: 'text/html' } });
      if (page.status !== 200) fail(`the withdrawal page of purchase ${p.id} answered ${page.status}`);
      const active = activeUnits(p).map((u) => u.id);
      const refund = cancellationRefundMinor(p, active);
      const shown = /id="refund-total"[^>]*>\$([0-9,]+\.[0-9]{2})</.exec(page.text)?.[1];
      if (shown === undefined || Math.round(Number(shown.replace(/,/g, '')) * 100) !== refund)
        fail(`the withdrawal page of purchase ${p.id} shows ${shown ?? '(no total)'}, the model ${refund}`);
      const quote = /name="quote" value="(cq_[0-9a-f]{24})"/.exec(page.text)?.[1] ?? fail(`no withdrawal form for purchase ${p.id}`);
      const confirmed = await call(s.app.baseUrl, path, {
        method: 'POST',
        rawBody: new URLSearchParams({ quote }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      if (confirmed.status !== 200 || !confirmed.text.includes('Withdrawal received'))
        fail(`confirming the withdrawal of purchase ${p.id} answered ${confirmed.status}: ${confirmed.text.slice(0, 200)}`);
      p.withdrawn = true;
      applyCancellation(m, p, active);
    });
  toString = () => `Withdraw(#${this.pick})`;
}

/** The buyer disputes the payment with their bank (the test helper), left open or decided: recorded, no money moves. */
export class Dispute implements Cmd {
  constructor(
    readonly pick: number,
    readonly outcome: 'open' | 'won' | 'lost',
  ) {}
  check = (m: Readonly<PolicyModel>) => m.purchases.length > 0;
  run = (m: PolicyModel, s: ModelStack) =>
    step('dispute', m, s, async () => {
      const p = pickOf(m.purchases, this.pick);
      const res = expectAnswer(
        checkAnswer(
          s,
          'POST /api/v1/test_helpers/purchases/{id}/dispute',
          await api(s, `/test_helpers/purchases/${p.id}/dispute`, {
            method: 'POST',
            body: { outcome: this.outcome, reason: 'fraudulent' },
          }),
        ),
        200,
      );
      const status: DisputeStatus = this.outcome === 'open' ? 'needs_response' : this.outcome;
      const answered = res.body.data?.status ?? res.body.status;
      if (answered !== status) fail(`the dispute of purchase ${p.id} is recorded ${answered}, ${status} due`);
      p.disputes.push(status);
    });
  toString = () => `Dispute(#${this.pick}, ${this.outcome})`;
}

/** A purchase of 1–4 days from FIRST_DAY + 0–20 days. */
export function buyArbitrary(): fc.Arbitrary<Buy> {
  return fc.tuple(fc.integer({ min: 1, max: 4 }), fc.nat({ max: 20 })).map(([d, o]) => new Buy(d, o));
}

/** The arbitraries of every command; `faults` adds the fault commands. */
export function commandArbitraries(faults: boolean): Array<fc.Arbitrary<Cmd>> {
  const pick = fc.nat({ max: 7 });
  const mask = fc.nat({ max: 15 });
  const cancel = fc
    .tuple(pick, mask, fc.constantFrom<CancelWay>('now', 'quote', 'concurrent'))
    .map(([p, k, w]) => new CancelNow(p, k, w) as Cmd);
  // Cancellations weigh twice: they move money.
  const arbs: Array<fc.Arbitrary<Cmd>> = [
    buyArbitrary(),
    cancel,
    cancel,
    fc.tuple(pick, fc.constantFrom<Sending>('once', 'repeat', 'concurrent')).map(([p, w]) => new AddHolder(p, w)),
    fc.tuple(pick, pick).map(([p, h]) => new RemoveHolder(p, h)),
    fc.tuple(pick, mask).map(([p, k]) => new ScheduleAndRescind(p, k)),
    fc.tuple(pick, pick, fc.nat({ max: 20 })).map(([p, u, t]) => new MoveDay(p, u, t)),
    fc.tuple(pick, fc.boolean()).map(([p, a]) => new DashboardRefund(p, a)),
    fc.integer({ min: 1, max: 7 }).map((k) => new BulkCancel(k)),
    pick.map((p) => new Withdraw(p)),
    fc.tuple(pick, fc.constantFrom<'open' | 'won' | 'lost'>('open', 'won', 'lost')).map(([p, o]) => new Dispute(p, o)),
  ];
  if (faults)
    arbs.push(
      fc
        .tuple(pick, mask, fc.constantFrom<CancelFault>('processor-down', 'processor-hang', 'worker-restart'))
        .map(([p, k, f]) => new CancelNow(p, k, 'now', f)),
      fc.tuple(pick).map(([p]) => new AddHolder(p, 'once', true)),
    );
  return arbs;
}
