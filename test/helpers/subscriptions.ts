/**
 * Subscription suites' common ground against the real servers: a stack whose processor calls go
 * through a recording proxy, with an agency that sells a monthly product, and the paid first
 * period of a subscription checkout (a signed `checkout.session.completed` webhook built here,
 * since stripe-mock keeps no subscription state and sends no events).
 */
import type { TestApp } from './app';
import { createAgencyWithMonthlyProduct, waitIssued, type Agency } from './certificates';
import type { ProcessorProxy } from './processor-proxy';
import { WEBHOOK_SECRET, deliverWebhook, subscriptionSessionCompletedEvent } from './purchases';
import { useStack } from './stack';

export interface MonthlyAgencyStack {
  readonly app: TestApp;
  readonly proxy: ProcessorProxy;
  readonly agency: Agency;
  /** The agency's monthly (recurring) product. */
  readonly monthlyProductId: number;
}

/**
 * useStack with the processor proxy, the test webhook secret and no practical rate limit, then
 * (in beforeAll) an agency named by `code` with a monthly product. Read the fields in a hook or a test.
 */
export function useMonthlyAgencyStack(code: string): MonthlyAgencyStack {
  const stack = useStack({ proxy: true, app: { PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, RATE_LIMIT_PER_MINUTE: '100000' } });
  let made: { agency: Agency; monthlyProductId: number } | undefined;
  beforeAll(async () => {
    made = await createAgencyWithMonthlyProduct(stack.app, code);
  });
  const agencyMade = () => {
    if (!made) throw new Error('useMonthlyAgencyStack: the agency is not made yet (read it in a hook or a test)');
    return made;
  };
  return {
    get app() {
      return stack.app;
    },
    get proxy() {
      return stack.proxy;
    },
    get agency() {
      return agencyMade().agency;
    },
    get monthlyProductId() {
      return agencyMade().monthlyProductId;
    },
  };
}

/**
 * Pays the first period of the subscription checkout `sessionId` of purchase `purchaseId`: a
 * signed `checkout.session.completed` (event `eventId`, subscription `subscription`, optionally
 * its first `invoice`), delivered (expects 200), then waits until the certificates are issued
 * under `pi_paid_<purchaseId>` (at most `timeoutMs`). Returns the getCertificates answer.
 */
export async function payFirstPeriod(
  app: TestApp,
  agency: Agency,
  paid: { purchaseId: number; sessionId: string; eventId: string; subscription: string; invoice?: string },
  timeoutMs?: number,
) {
  const event = subscriptionSessionCompletedEvent({
    id: paid.eventId,
    purchaseId: paid.purchaseId,
    sessionId: paid.sessionId,
    subscription: paid.subscription,
    ...(paid.invoice === undefined ? {} : { invoice: paid.invoice }),
  });
  expect((await deliverWebhook(app, event)).status).toBe(200);
  return waitIssued(agency, `pi_paid_${paid.purchaseId}`, timeoutMs);
}
