/**
 * What the model-based suite's commands share (test/model/commands.ts and the endorsement and
 * subscription commands beside it): the command type, the first covered day, how an answer is
 * expected, which purchases a command may act on, and `step`, which counts a command and checks
 * every invariant after it.
 */
import type fc from 'fast-check';
import { checkAll, type Answer } from './invariants';
import { changeRefusal, type PolicyModel } from './policy-model';
import type { ModelStack } from './real';

export type Cmd = fc.AsyncCommand<PolicyModel, ModelStack>;

/** The first covered day of the purchases the suite buys (their days follow it). */
export const FIRST_DAY = '2027-05-01';
/** Purchases one sequence buys at most (each costs a checkout and certificates). */
export const MAX_PURCHASES = 3;

let keys = 0;
/** A new Idempotency-Key naming `what`. */
export const idempotencyKey = (what: string) => `model-${what}-${Date.now()}-${keys++}`;

/** Throws the failure of an answer the model did not expect. */
export function fail(what: string): never {
  throw new Error(`unexpected answer: ${what}`);
}

/** `res` must be `status` (and, for a refusal, carry `code`). */
export function expectAnswer(res: Answer, status: number, code?: string): Answer {
  const got = res.body?.error?.code ?? res.body?.code;
  if (res.status !== status || (code !== undefined && got !== code))
    fail(`${res.status} ${got ?? ''} where ${status} ${code ?? ''} was due: ${res.text.slice(0, 300)}`);
  return res;
}

/** The `pick`-th (mod count) of `items`. */
export const pickOf = <T>(items: T[], pick: number): T => items[pick % items.length]!;

/** The one-time purchases (a subscription's periods have commands of their own: BuySubscription, Renew). */
export const oneTime = (m: PolicyModel) => m.purchases.filter((p) => !p.subscription);
/** Purchases that can still be cancelled or changed by the model's rules (no partial dashboard refund: see below). */
export const inForce = (m: PolicyModel) => oneTime(m).filter((p) => changeRefusal(p) === null);
/**
 * Purchases a cancellation may be asked of. A purchase part-refunded from the dashboard is left
 * out: how a cancellation's refund meets a dashboard refund is not documented yet, so the model
 * cannot predict it (see the report of issue 54).
 */
export const cancellable = (m: PolicyModel) => oneTime(m).filter((p) => !p.partlyRefundedAtProcessor);

/** Counts the command in the stack's figures, runs `body`, then checks every invariant; refuses to start once the run is stopping. */
export async function step(name: string, m: PolicyModel, s: ModelStack, body: () => Promise<void>, fault = false): Promise<void> {
  if (s.stopping) throw new Error('the run is over: no further command');
  s.figures.steps += 1;
  s.figures.byCommand[name] = (s.figures.byCommand[name] ?? 0) + 1;
  if (fault) {
    s.figures.faults += 1;
    s.figures.faultsByCommand[name] = (s.figures.faultsByCommand[name] ?? 0) + 1;
  }
  await body();
  await checkAll(s, m);
}
