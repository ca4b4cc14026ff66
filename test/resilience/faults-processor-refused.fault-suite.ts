/**
 * Resilience on the dev shape: the processor refuses connections (stripe-mock stopped) for
 * PROCESSOR_OUTAGE_MS (2 minutes on every change, 10 with RESILIENCE_FULL=1: lib/scope.ts) under
 * the steady load. Every other purchase's webhook is held back until the outage ends, so payments
 * are reported both during it and after it; afterwards no purchase may be `failed` and every paid
 * one has all its certificates once. During the same outage 20 issued purchases (60 in the full
 * run) are cancelled, one a second (issue 24, lib/cancellations.ts): each
 * accepted with 200 while the processor is down, and afterwards refunds created = cancellations
 * accepted, 0 duplicates, 0 lost. During it too, 20 claims under review (both runs) are approved
 * with a payout to the claimant's connected account (issue 51, lib/claim-payouts.ts): each
 * approval answered 200 while the processor is down, and afterwards each claim paid exactly once
 * (one transfer per claim payment key at the processor, status paid, one claim.paid event), none
 * lost. Runs beside the other fault suites on a stack of its own,
 * taking turns (lib/schedule.ts).
 */
import { describeProcessorOutageSuite } from './lib/dev-faults';

describeProcessorOutageSuite('processorRefused', 'Resilience: the processor refuses connections');
