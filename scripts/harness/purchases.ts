/**
 * Drives a purchase through the real API, as an agent's server would: an account with a test
 * key and a quotable product, a connected buyer, `adminValidateBuyerResponses` (which starts the
 * purchase workflow and returns its checkout session), and processor webhooks signed with the
 * processor library's test header helper (stripe-mock sends none). Shared by the workflow tests,
 * the benches and `scripts/record-histories.ts`; it throws plain errors instead of using `expect`.
 */
import Stripe from 'stripe';
import { eventually, type ApiHandle } from './api';
import { call, connectBuyer, createKey, createQuestionSet, createRootAccount } from './fixtures';
import type { RootAccount } from '../../src/accounts/repository';
import { SPECIAL_EVENT_LIABILITY } from '../../src/question-sets/examples';
import { STATUS_QUERY, policyWorkflowId, purchaseWorkflowId } from '../../workflows/contracts';
import type { PolicyStatusView } from '../../workflows/policy';

/** The webhook signing secret the test apps are configured with (`PAYPROC_WEBHOOK_SECRET`). */
export const WEBHOOK_SECRET = 'whsec_test_purchase_workflow_secret';

const signer = new Stripe('sk_test_123');

export interface QuotingAccount {
  /** The root account's id (purchases.root_account_id of everything it sells). */
  accountId: number;
  key: string;
  /** The product line it quotes. */
  productId: number;
  /** A fresh quote request body (a new buyer each call) for the account's one product. */
  quoteBody(): Promise<Record<string, unknown>>;
}

/** One selected product line answering the special-event template (two days in May 2027). */
export function specialEventSelection(productLineId: number, insuredName = 'Kim Park') {
  return {
    product_line_template_id: productLineId,
    product_line_is_trip_excess_product: false,
    event_type: 'wedding',
    attendance: 80,
    liquor: 'no',
    venue_name: 'Lake House',
    named_insured: { name: insuredName },
    certificate_holder: {
      name: 'Lake House Inc',
      address: { line1: '9 Shore Rd', city: 'Madison', region: 'WI', postal_code: '53703', country: 'US' },
    },
    coverage: { time_zone: 'America/Chicago', start_date: '2027-05-01', end_date: '2027-05-02' },
  };
}

/**
 * An agency named `name` with a test-mode key and one product ("Event Liability", 20.00) on the
 * special-event template, created through the API. @throws {Error} when the product is refused.
 */
export async function createEventProductAccount(
  app: ApiHandle,
  name: string,
): Promise<{ account: RootAccount; key: string; productId: number }> {
  const account = await createRootAccount(app.container, name);
  const key = (await createKey(app.container, { rootAccountId: account.id, mode: 'test' })).key;
  const set = await createQuestionSet(app.container, account.id, SPECIAL_EVENT_LIABILITY);
  const product = await call(app.baseUrl, '/api/v1/products', {
    method: 'POST',
    key,
    body: { customerName: 'Event Liability', defaultPrice: 20, questionSetId: set.id },
  });
  if (product.status !== 201 && product.status !== 200) throw new Error(`product create failed: ${product.status} ${product.text}`);
  return { account, key, productId: product.body.data.id as number };
}

/** An agency with a test-mode key, a product with the special-event template, and buyers on demand. */
export async function createQuotingAccount(app: ApiHandle): Promise<QuotingAccount> {
  const { account, key, productId } = await createEventProductAccount(app, 'Workflow Agency');
  let n = 0;
  const quoteBody = async () => {
    const email = `kim${n++}.${account.id}@example.com`;
    const buyer = await connectBuyer(app.baseUrl, key, { firstName: 'Kim', lastName: 'Park', email, sellerSlug: account.slug });
    return { ...buyer, selected_product_lines_to_purchase: [specialEventSelection(productId)] };
  };
  return { accountId: account.id, key, productId, quoteBody };
}

/**
 * A quoting account (see createQuotingAccount) whose product gives no free look, so that a
 * cancellation is priced pro rata from the first day: its cancellation terms patched to
 * `free_look_days: 0`. @throws {Error} when the API refuses the change.
 */
export async function createQuotingAccountWithoutFreeLook(app: ApiHandle): Promise<QuotingAccount> {
  const account = await createQuotingAccount(app);
  const res = await call(app.baseUrl, `/api/v1/products/${account.productId}/cancellation_terms`, {
    method: 'PATCH',
    key: account.key,
    body: { free_look_days: 0 },
  });
  if (res.status !== 200) throw new Error(`cancellation_terms: ${res.status} ${res.text}`);
  return account;
}

/** Quotes and checks out one purchase; resolves once the workflow has returned the session. */
export async function checkout(app: ApiHandle, account: QuotingAccount): Promise<{ purchaseId: number; sessionId: string }> {
  const res = await call(app.baseUrl, '/public-quote/adminValidateBuyerResponses', {
    method: 'POST',
    key: account.key,
    body: await account.quoteBody(),
  });
  if (res.status !== 200) throw new Error(`adminValidateBuyerResponses answered ${res.status}: ${res.text}`);
  return { purchaseId: res.body.purchase_id, sessionId: res.body.id };
}

/**
 * POST /api/v1/test_helpers/purchases/{purchaseId}/pay with `account`'s key: the checkout of the
 * purchase paid (no `outcome`) or its payment failed (`outcome: 'failed'`), as the processor would
 * report it. Answers the call as it came, whatever its status.
 */
export function payByTestHelper(app: Pick<ApiHandle, 'baseUrl'>, account: { key: string }, purchaseId: number, outcome?: 'failed') {
  return call(app.baseUrl, `/api/v1/test_helpers/purchases/${purchaseId}/pay`, {
    method: 'POST',
    key: account.key,
    ...(outcome ? { body: { outcome } } : {}),
  });
}

/**
 * Checks out one purchase and pays it as the processor reports a payment: a signed
 * `checkout.session.completed` webhook (payment intent `pi_paid_<id>`); does not wait for the
 * certificates. Answers the purchase's and the checkout session's ids.
 * @throws {Error} when the checkout or the webhook is not answered 200.
 */
export async function checkoutPaidByWebhook(app: ApiHandle, account: QuotingAccount): Promise<{ purchaseId: number; sessionId: string }> {
  const session = await checkout(app, account);
  const delivered = await deliverWebhook(app, sessionCompletedEvent(session.purchaseId, session.sessionId));
  if (delivered.status !== 200) throw new Error(`webhook: ${delivered.status} ${delivered.text}`);
  return session;
}

/** Checks out one purchase, pays it through the test helper and waits until its workflow has issued the certificates; its id. */
export async function issuedPurchase(app: ApiHandle, account: QuotingAccount): Promise<number> {
  const { purchaseId } = await checkout(app, account);
  const paid = await payByTestHelper(app, account, purchaseId);
  if (paid.status !== 200) throw new Error(`pay: ${paid.status} ${paid.text}`);
  await app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(purchaseId)).result();
  return purchaseId;
}

/** The raw body of the processor's event `id` of `type` about `object` (sign it with deliverWebhook). */
export function processorEvent(type: string, object: Record<string, unknown>, id = `evt_${Math.random().toString(36).slice(2)}`): string {
  return JSON.stringify({
    id,
    object: 'event',
    type,
    livemode: false,
    created: Math.floor(Date.now() / 1000),
    api_version: '2025-01-01',
    data: { object },
  });
}

/**
 * The raw body of a `charge.refunded` event (sign it with deliverWebhook): charge `chargeId` of
 * `paymentIntent`, `amountMinor` charged and `amountRefundedMinor` refunded so far (refunded in
 * full when they are equal), with `purchase_id` in its metadata unless `purchaseId` is null (the
 * processor's own charges carry none: the payment intent names the purchase), or `metadata`
 * when given (an endorsement's charge carries its quote and purchase).
 */
export function chargeRefundedEvent(e: {
  id: string;
  chargeId: string;
  paymentIntent: string;
  amountMinor: number;
  amountRefundedMinor: number;
  purchaseId: number | null;
  metadata?: Record<string, string>;
}): string {
  return processorEvent(
    'charge.refunded',
    {
      id: e.chargeId,
      object: 'charge',
      payment_intent: e.paymentIntent,
      amount: e.amountMinor,
      amount_refunded: e.amountRefundedMinor,
      refunded: e.amountRefundedMinor === e.amountMinor,
      metadata: e.metadata ?? (e.purchaseId === null ? {} : { purchase_id: String(e.purchaseId) }),
    },
    e.id,
  );
}

/** The raw body of a paid `checkout.session.completed` event of session `sessionId`, paid by `paymentIntent`, carrying `metadata`. */
function paidSessionEvent(sessionId: string, paymentIntent: string, metadata: Record<string, string>, id: string): string {
  return processorEvent(
    'checkout.session.completed',
    { id: sessionId, object: 'checkout.session', status: 'complete', payment_status: 'paid', payment_intent: paymentIntent, metadata },
    id,
  );
}

/** The raw body of a paid `checkout.session.completed` event for the purchase's session (payment intent `pi_paid_<id>` unless given). */
export function sessionCompletedEvent(
  purchaseId: number,
  sessionId: string,
  id = `evt_${Math.random().toString(36).slice(2)}`,
  paymentIntent = `pi_paid_${purchaseId}`,
): string {
  return paidSessionEvent(sessionId, paymentIntent, { purchase_id: String(purchaseId) }, id);
}

/** The raw body of a paid `checkout.session.completed` event for an endorsement's checkout session (its difference paid by `paymentIntent`). */
export function endorsementSessionCompletedEvent(sessionId: string, quoteId: string, purchaseId: number, paymentIntent: string): string {
  return paidSessionEvent(
    sessionId,
    paymentIntent,
    { endorsement_quote_id: quoteId, endorsed_purchase_id: String(purchaseId) },
    `evt_${Math.random().toString(36).slice(2)}`,
  );
}

/**
 * The raw body of a paid subscription-mode `checkout.session.completed` event (event `id`) for the
 * purchase's session `sessionId`: the first period paid by `pi_paid_<purchaseId>`, the processor's
 * subscription `subscription` (and its first invoice, when given).
 */
export function subscriptionSessionCompletedEvent(e: {
  id: string;
  purchaseId: number;
  sessionId: string;
  subscription: string;
  invoice?: string;
}): string {
  return processorEvent(
    'checkout.session.completed',
    {
      id: e.sessionId,
      object: 'checkout.session',
      mode: 'subscription',
      status: 'complete',
      payment_status: 'paid',
      payment_intent: `pi_paid_${e.purchaseId}`,
      subscription: e.subscription,
      ...(e.invoice === undefined ? {} : { invoice: e.invoice }),
      metadata: { purchase_id: String(e.purchaseId) },
    },
    e.id,
  );
}

/**
 * The raw body of a paid billing-cycle `invoice.paid` event (event `evt_cycle_<invoiceId>` unless
 * `id` is given) of invoice `invoiceId` of subscription `subscription`, paid by `paymentIntent`;
 * the subscription's metadata names the purchase when `purchaseId` is given, and the invoice says
 * what it collected when `amountPaid` (minor units) is.
 */
export function subscriptionInvoicePaidEvent(e: {
  invoiceId: string;
  subscription: string;
  paymentIntent: string;
  purchaseId?: number;
  amountPaid?: number;
  id?: string;
}): string {
  const metadata = e.purchaseId === undefined ? {} : { metadata: { purchase_id: String(e.purchaseId) } };
  return processorEvent(
    'invoice.paid',
    {
      id: e.invoiceId,
      object: 'invoice',
      billing_reason: 'subscription_cycle',
      status: 'paid',
      ...(e.amountPaid === undefined ? {} : { amount_paid: e.amountPaid }),
      currency: 'usd',
      parent: { type: 'subscription_details', subscription_details: { subscription: e.subscription, ...metadata } },
      payments: {
        object: 'list',
        data: [{ object: 'invoice_payment', payment: { type: 'payment_intent', payment_intent: e.paymentIntent } }],
      },
    },
    e.id ?? `evt_cycle_${e.invoiceId}`,
  );
}

/**
 * Creates the recurring product `Monthly Venue Liability` (30.00 a month, the special-event
 * question set, master policy `masterPolicyNumber`) for root account `rootAccountId` with its key
 * `key`; answers the product's id.
 * @throws {Error} when the API does not create it.
 */
export async function createMonthlyProduct(
  app: ApiHandle,
  rootAccountId: number,
  key: string,
  masterPolicyNumber: string,
): Promise<number> {
  const set = await createQuestionSet(app.container, rootAccountId, SPECIAL_EVENT_LIABILITY);
  const product = await call(app.baseUrl, '/api/v1/products', {
    method: 'POST',
    key,
    body: {
      customerName: 'Monthly Venue Liability',
      defaultPrice: 30,
      questionSetId: set.id,
      insurerName: 'Evergreen Mutual Insurance Co.',
      masterPolicyNumber,
      isRecurring: true,
    },
  });
  if (product.status !== 201) throw new Error(`product create failed: ${product.status} ${product.text}`);
  return product.body.data.id as number;
}

/** POSTs `payload` to `/webhooks/payproc` with a valid processor signature for `secret`. */
export async function deliverWebhook(app: Pick<ApiHandle, 'baseUrl'>, payload: string, secret = WEBHOOK_SECRET) {
  const signature = signer.webhooks.generateTestHeaderString({ payload, secret });
  return call(app.baseUrl, '/webhooks/payproc', { method: 'POST', rawBody: payload, headers: { 'stripe-signature': signature } });
}

/** What the purchase's owner recorded of one processor event (a refund or a dispute). */
export type RecordedProcessorEvent = PolicyStatusView['processorEvents'][number];

/**
 * Waits (up to `timeoutMs` ms) until the purchase's owner `policy-<purchaseId>` has recorded the
 * processor's event `eventId` (a `charge.refunded` or `charge.dispute.*` the webhook handed it),
 * and answers what it recorded, read from the owner's `status` query. Throws when it has not by then.
 */
export async function processorEventRecorded(
  app: ApiHandle,
  purchaseId: number,
  eventId: string,
  timeoutMs = 30_000,
): Promise<RecordedProcessorEvent> {
  const owner = app.container.temporal.client.workflow.getHandle(policyWorkflowId(purchaseId));
  const recorded = await eventually(async () => {
    const view = await owner.query<PolicyStatusView>(STATUS_QUERY).catch(() => null);
    return view?.processorEvents.find((e) => e.eventId === eventId) ?? null;
  }, timeoutMs);
  return recorded as RecordedProcessorEvent; // eventually answers only a found one
}
