/**
 * A test of the model-based suite (issue 54, "Done when"): with a deliberately broken rule, the
 * refund of every cancellation one minor unit more than its quote (a worker whose
 * `createCancellationRefund` raises the stored cancellation's total by 1 before the real activity
 * refunds it), a short fault-free run finds a broken invariant and shrinks it to a short sequence
 * (a purchase and one command that refunds: a cancellation, the buyer's withdrawal or a bulk
 * cancellation, whichever the seed draws first).
 */
import fc from 'fast-check';
import { startModelStack, type ModelStack } from './real';
import { runModel } from './run';

jest.setTimeout(300_000);

let stack: ModelStack | undefined;
afterAll(async () => {
  await stack?.close();
});

test('when the refund activity refunds one minor unit more than the quote, then the short run fails and shrinks to at most three commands', async () => {
  stack = await startModelStack((real) => ({
    async createCancellationRefund(input: { cancellationId: number }) {
      // The broken rule: one minor unit more than quoted, once per cancellation (the first try).
      const db = stack!.app.container.db;
      await db('policy_transactions')
        .where({ id: input.cancellationId })
        .whereNull('refunds')
        .update({ premium_minor: db.raw('premium_minor + 1'), total_minor: db.raw('total_minor + 1') });
      return real.createCancellationRefund(input);
    },
  }));
  const seed = 54;
  const details = await runModel(stack, { seed, numRuns: 20, maxCommands: 5, faults: false });
  const report = fc.defaultReportMessage(details) ?? '';
  console.log(
    `broken rule found by seed ${seed}: ${details.failed}; shrunk ${details.numShrinks} times; ${details.numRuns} runs; ${JSON.stringify(stack.figures)}\n${report}`,
  );
  expect(details.failed).toBe(true);
  expect(String(details.errorInstance)).toMatch(/invariant broken|unexpected answer/);
  // fast-check prints the commands that ran, then its replay metadata in a comment.
  const sequence = fc.stringify(details.counterexample).replace(/\/\*.*?\*\//g, '');
  expect(sequence.match(/[A-Z][A-Za-z]+\(/g)?.length).toBeLessThanOrEqual(3);
  expect(sequence).toMatch(/Buy\(.*(CancelNow|Withdraw|BulkCancel)\(/);
});
