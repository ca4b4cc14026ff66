/**
 * Issue 8, resilience suite: faults under a steady load of purchases, on the stack of `npm run dev`'s
 * shape (the Temporal dev server with a SQLite file, one API and one worker process; the
 * machinery is test/resilience/lib/fault-suite.ts). This file runs the short faults one after
 * another (lib/dev-faults.ts); the two processor outages (2 minutes, 10 in the full run) run at the same time in
 * faults-processor-refused.fault-suite.ts and faults-processor-hang.fault-suite.ts, each on a
 * stack of its own (lib/schedule.ts gives the loads turns).
 *
 * Afterwards no purchase of the run may be `failed` and none paid may lack a certificate, a PDF
 * or a zip.
 *
 * After the short faults, without the load: the worker SIGKILLed while a certificate holder added
 * to a 30-day purchase has its 30 certificates stored, then a fresh worker: each exactly once, the
 * answered holder's untouched (lib/holder-reissue.ts).
 */
import { describeFaultSuite } from './lib/fault-suite';
import { SHORT_FAULTS } from './lib/dev-faults';
import { PHASES, SLOTS } from './lib/schedule';
import { SCENARIO as HOLDER_REISSUE } from './lib/holder-reissue';

describeFaultSuite({
  title: 'Resilience: faults under load',
  shape: { temporal: 'dev', workers: 1, slot: SLOTS.short },
  faults: SHORT_FAULTS,
  artifact: 'resilience-faults',
  turn: { phase: PHASES.short, bootAfter: PHASES.processorRefused, holds: 'suite' },
  scenarios: [HOLDER_REISSUE],
});
