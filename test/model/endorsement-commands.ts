/**
 * The model-based suite's endorsement commands (issue 54; see test/model/commands.ts): move a day
 * to another date at no price, and add a day paid by the buyer's saved card (a payment intent of
 * its own, which later refunds draw on first).
 */
import { api, checkAnswer, settledPurchase } from './invariants';
import {
  activeUnits,
  addDays,
  applyAddedUnit,
  changeRefusal,
  dateFree,
  DAY_PREMIUM_MINOR,
  EQUIPMENT_DAY_PREMIUM_MINOR,
  type PolicyModel,
} from './policy-model';
import { platformFeeOf, type ModelStack } from './real';
import { cancellable, expectAnswer, fail, inForce, pickOf, step, type Cmd } from './command-kit';

/** Days a moved day may go to: 2027-06-01 onwards. */
const MOVE_BASE = '2027-06-01';
/** Days an added day may be: 2027-07-01 onwards. */
const ADD_BASE = '2027-07-01';

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

/**
 * Adds a day to an item of a purchase in force (the product's, or a bundle's equipment waiver when
 * `item` is odd) on a free day from July 2027: an endorsement priced like a quote (the day's
 * premium plus the platform fee rate on it), paid at once by the buyer's saved card as a payment
 * intent of its own; the day and its certificates follow.
 */
export class AddDay implements Cmd {
  constructor(
    readonly pick: number,
    readonly to: number,
    readonly item: number,
  ) {}
  private static candidates = (m: PolicyModel) => cancellable(m).filter((p) => changeRefusal(p) === null);
  check = (m: Readonly<PolicyModel>) => AddDay.candidates(m as PolicyModel).length > 0;
  run = (m: PolicyModel, s: ModelStack) =>
    step('add-day', m, s, async () => {
      const p = pickOf(AddDay.candidates(m), this.pick);
      const item = p.bundle ? this.item % 2 : 0;
      const items = (await settledPurchase(s, p.id)).items as Array<{ id: number; product_id: number }>;
      const itemId = items.find((i) => (i.product_id === s.productId) === (item === 0))!.id;
      let date = addDays(ADD_BASE, this.to);
      while (!dateFree(p, date)) date = addDays(date, 1);
      const premium = item === 0 ? DAY_PREMIUM_MINOR : EQUIPMENT_DAY_PREMIUM_MINOR;
      const fee = platformFeeOf(premium);
      const q = expectAnswer(
        checkAnswer(
          s,
          'POST /api/v1/purchases/{id}/endorsement_quote',
          await api(s, `/purchases/${p.id}/endorsement_quote`, {
            method: 'POST',
            body: { changes: [{ type: 'add_covered_units', purchase_item_id: itemId, start_date: date, end_date: date }] },
          }),
        ),
        201,
      );
      if (q.body.data.premium_difference !== premium || q.body.data.total_difference !== premium + fee)
        fail(
          `adding ${date} is priced ${q.body.data.premium_difference} + ${q.body.data.platform_fee_difference}, the model ${premium} + ${fee}`,
        );
      const res = expectAnswer(
        checkAnswer(
          s,
          'POST /api/v1/purchases/{id}/endorse',
          await api(s, `/purchases/${p.id}/endorse`, {
            method: 'POST',
            body: { quote_id: q.body.data.id, payment: { method: 'saved_card', payment_method_id: 'pm_card_visa' } },
          }),
        ),
        200,
      );
      if (res.body.data.status !== 'applied') fail(`the added day is ${res.body.data.status}, not applied`);
      const paymentIntent = (res.body.data.payment?.payment_intent as string | undefined) ?? fail('the added day names no payment intent');
      const after = await settledPurchase(s, p.id);
      const units = after.items.find((i: { id: number }) => i.id === itemId).covered_units as Array<{ id: number; local_label: string }>;
      const added =
        units.find((u) => u.local_label === date && !p.units.some((x) => x.id === u.id)) ?? fail(`no unit on ${date} was added`);
      applyAddedUnit(m, p, { unitId: added.id, date, item, premiumMinor: premium, feeMinor: fee, paymentIntent });
    });
  toString = () => `AddDay(#${this.pick}, +${this.to}${this.item % 2 ? ', equipment' : ''})`;
}
