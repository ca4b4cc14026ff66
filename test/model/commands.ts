/**
 * The commands of the model-based suite (issue 54): fast-check `AsyncCommand`s over the model
 * (test/model/policy-model.ts) and the real stack (test/model/real.ts). Each `check(model)` says
 * whether the command applies now; `run(model, stack)` calls the real API, predicts the answer
 * and updates the model from the documented rules (never from the service's answer: ids only
 * name things), then checks every invariant (test/model/invariants.ts).
 *
 * Commands: buy a one-time purchase of 1–4 days (of the product, or of the bundle of it and an
 * equipment waiver for the same days) and pay it; add a certificate holder (once, the
 * same Idempotency-Key twice in a row, or twice at once); remove one; cancel days now (priced at
 * once, through a quote carried out twice, or the same Idempotency-Key twice at once), including
 * days already cancelled (a refusal); cancel later and rescind; a bulk cancellation of some of the purchases; move a day (an
 * endorsement at no price); add a day (an endorsement paid by the saved card: a second payment
 * intent, which later refunds draw on first); a refund from the processor's dashboard (part, or all that is left); the
 * buyer's withdrawal through their signed link; a dispute (open, won or lost); a subscription
 * bought (chosen days or a whole month) and renewed, up to twice. Faults: the
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
import { api, checkAnswer, settledPurchase, type Answer } from './invariants';
import {
  activeHolders,
  activeUnits,
  addDays,
  applyCancellation,
  applyDashboardRefund,
  cancellationRefundMinor,
  cancellationRefusal,
  changeRefusal,
  DAY_PREMIUM_MINOR,
  EQUIPMENT_DAY_PREMIUM_MINOR,
  holderRemovalRefusal,
  recordSale,
  refundableMinor,
  type DisputeStatus,
  type ModelPurchase,
  type PolicyModel,
} from './policy-model';
import { platformFeeOf, quoteBodyFor, type ModelStack } from './real';
import { signWithdrawalToken } from '../../src/withdrawals/token';
import { cancellable, expectAnswer, fail, FIRST_DAY, idempotencyKey, MAX_PURCHASES, oneTime, pickOf, step, type Cmd } from './command-kit';
import { AddDay, MoveDay } from './endorsement-commands';
import { BuySubscription, Renew } from './subscription-commands';

export { AddDay, MoveDay } from './endorsement-commands';
export { BuySubscription, Renew } from './subscription-commands';

/** When a scheduled cancellation takes effect: before any covered day, after now. */
const SCHEDULED_AT = '2027-04-20T12:00:00.000Z';

const VENUE = (n: number) => ({
  name: `Model Hall ${n} LLC`,
  address: { line1: `${n} River Rd`, city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
  description_of_operations: 'Model-based suite',
});

/** The units of `p` the bits of `mask` select (bit k: the k-th unit, item by item), or the (mask mod count)-th when it selects none. */
const unitsOf = (p: ModelPurchase, mask: number): number[] => {
  const chosen = p.units.filter((_, k) => mask & (1 << k)).map((u) => u.id);
  return chosen.length > 0 ? chosen : [p.units[mask % p.units.length]!.id];
};

/** Buys `days` days from FIRST_DAY + `offset` (of the bundle, when `bundle`) and pays them through the test helper; certificates issued. */
export class Buy implements Cmd {
  constructor(
    readonly days: number,
    readonly offset: number,
    readonly bundle = false,
  ) {}
  check = (m: Readonly<PolicyModel>) => m.purchases.length < MAX_PURCHASES;
  run = (m: PolicyModel, s: ModelStack) =>
    step(this.bundle ? 'buy-bundle' : 'buy', m, s, async () => {
      const first = addDays(FIRST_DAY, this.offset);
      const body = await quoteBodyFor(s, first, addDays(first, this.days - 1), this.bundle ? 'bundle' : 'product');
      const quoted = await call(s.app.baseUrl, '/public-quote/adminValidateBuyerResponses', { method: 'POST', key: s.key, body });
      expectAnswer(quoted, 200);
      const id = quoted.body.purchase_id as number;
      const paid = expectAnswer(checkAnswer(s, 'POST /api/v1/test_helpers/purchases/{id}/pay', await payByTestHelper(s.app, s, id)), 200);
      const view = await settledPurchase(s, id);
      type Item = { id: number; product_id: number; covered_units: Array<{ id: number; index: number }> };
      const unitIdsOf = (item: Item | undefined) => (item?.covered_units ?? []).sort((a, b) => a.index - b.index).map((u) => u.id);
      const items = view.items as Item[];
      if (items.length !== (this.bundle ? 2 : 1)) fail(`purchase ${id} has ${items.length} items, ${this.bundle ? 2 : 1} due`);
      const holders = checkAnswer(s, 'GET /api/v1/purchases/{id}/certificate_holders', await api(s, `/purchases/${id}/certificate_holders`))
        .body.data as Array<{ id: number; purchase_item_id: number | null }>;
      // The answered holder, one per item (a bundle's is answered once, for both).
      if (holders.length !== items.length) fail(`purchase ${id} has ${holders.length} holders after its sale, one per item due`);
      const holderOf = (item: Item | undefined) =>
        holders.find((h) => h.purchase_item_id === item?.id)?.id ?? fail(`purchase ${id}: no answered holder of item ${item?.id}`);
      const primary = items.find((i) => i.product_id === s.productId);
      const bundled = items.find((i) => i.product_id !== s.productId);
      const premium = this.days * (DAY_PREMIUM_MINOR + (this.bundle ? EQUIPMENT_DAY_PREMIUM_MINOR : 0));
      recordSale(m, {
        id,
        unitIds: unitIdsOf(primary),
        ...(this.bundle ? { bundledUnitIds: unitIdsOf(bundled), bundledHolderId: holderOf(bundled) } : {}),
        firstDate: first,
        holderId: holderOf(primary),
        paymentIntent: paid.body.data?.payment_intent ?? paid.body.payment_intent,
        feeMinor: platformFeeOf(premium),
      });
    });
  toString = () => `Buy(${this.days} days from +${this.offset}${this.bundle ? ', bundle' : ''})`;
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
  check = (m: Readonly<PolicyModel>) => oneTime(m as PolicyModel).length > 0;
  run = (m: PolicyModel, s: ModelStack) =>
    step(
      this.storageDown ? 'add-holder-storage-down' : 'add-holder',
      m,
      s,
      async () => {
        const p = pickOf(oneTime(m), this.pick);
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
  check = (m: Readonly<PolicyModel>) => oneTime(m as PolicyModel).length > 0;
  run = (m: PolicyModel, s: ModelStack) =>
    step('remove-holder', m, s, async () => {
      const p = pickOf(oneTime(m), this.pick);
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
/**
 * A refund from the processor's dashboard: a third of what is left, or all of it (the test
 * helper's charge.refunded). Only of a purchase paid once: the helper refunds the sale's charge,
 * and how a dashboard refund of it meets an added day's payment is not documented.
 */
export class DashboardRefund implements Cmd {
  constructor(
    readonly pick: number,
    readonly all: boolean,
  ) {}
  private static candidates = (m: PolicyModel) => oneTime(m).filter((p) => p.payments.length === 1 && refundableMinor(p) > 0);
  check = (m: Readonly<PolicyModel>) => DashboardRefund.candidates(m as PolicyModel).length > 0;
  run = (m: PolicyModel, s: ModelStack) =>
    step('dashboard-refund', m, s, async () => {
      const p = pickOf(DashboardRefund.candidates(m), this.pick);
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
  check = (m: Readonly<PolicyModel>) => oneTime(m as PolicyModel).length > 0;
  run = (m: PolicyModel, s: ModelStack) =>
    step('dispute', m, s, async () => {
      const p = pickOf(oneTime(m), this.pick);
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
/** A purchase of 1–4 days from FIRST_DAY + 0–20 days, one in three of the bundle. */
export function buyArbitrary(): fc.Arbitrary<Buy> {
  return fc.tuple(fc.integer({ min: 1, max: 4 }), fc.nat({ max: 20 }), fc.nat({ max: 2 })).map(([d, o, b]) => new Buy(d, o, b === 0));
}

/**
 * A sequence's first purchase: one in six a subscription of 1–3 chosen days (so that renewals get
 * their turn within a short sequence), else as buyArbitrary.
 */
export function firstPurchaseArbitrary(): fc.Arbitrary<Cmd> {
  return fc.oneof(
    { weight: 5, arbitrary: buyArbitrary() as fc.Arbitrary<Cmd> },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.integer({ min: 1, max: 3 }), fc.nat({ max: 20 })).map(([d, o]) => new BuySubscription(d, o) as Cmd),
    },
  );
}

/** The arbitraries of every command; `faults` adds the fault commands. */
export function commandArbitraries(faults: boolean): Array<fc.Arbitrary<Cmd>> {
  const pick = fc.nat({ max: 7 });
  // Up to 8 units: a bundle of 4 days has 8.
  const mask = fc.nat({ max: 255 });
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
    fc.tuple(pick, fc.nat({ max: 20 }), fc.nat({ max: 1 })).map(([p, t, i]) => new AddDay(p, t, i)),
    fc.tuple(pick, fc.boolean()).map(([p, a]) => new DashboardRefund(p, a)),
    fc.integer({ min: 1, max: 7 }).map((k) => new BulkCancel(k)),
    pick.map((p) => new Withdraw(p)),
    fc.tuple(fc.nat({ max: 3 }), fc.nat({ max: 20 })).map(([d, o]) => new BuySubscription(d, o)),
    // Renewals weigh twice: they apply only once a sequence has bought its subscription.
    fc.boolean().map((c) => new Renew(c)),
    fc.boolean().map((c) => new Renew(c)),
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
