/**
 * An agency that sells through the real API and reads certificates back, for the certificate
 * suites: a root account with two teammates (agents), a test-mode key of the first teammate,
 * a per-day event product and a trip-excess product; buying pays by a signed
 * `checkout.session.completed` webhook; `waitIssued` polls getCertificates as the spec's
 * timing rule tells an agent to (§4.5). Throws plain errors instead of using `expect`.
 */
import { eventually, type ApiHandle } from './api';
import { call, connectBuyer, createKey, createQuestionSet, createRootAccount } from './fixtures';
import { createMonthlyProduct, deliverWebhook, sessionCompletedEvent } from './purchases';
import { createAccountsRepository } from '../../src/accounts/repository';
import { SPECIAL_EVENT_LIABILITY, TRIP_EXCESS } from '../../src/question-sets/examples';

export interface Agency {
  app: ApiHandle;
  key: string;
  slug: string;
  rootUuid: string;
  teammateUuid: string;
  otherTeammateUuid: string;
  eventProductId: number;
  tripProductId: number;
}

export interface PaidPurchase {
  purchaseId: number;
  paymentIntent: string;
  buyerUuid: string;
}

let buyerSeq = 0;

export async function createAgency(app: ApiHandle, name = 'Harbor & Pine Insurance Agency'): Promise<Agency> {
  const c = app.container;
  const account = await createRootAccount(c, name);
  const accounts = createAccountsRepository(c.db);
  const agent = await accounts.upsertAgent({ rootAccountId: account.id, name: 'Dana Agent', email: `dana.${account.id}@agency.test` });
  const other = await accounts.upsertAgent({ rootAccountId: account.id, name: 'Omar Agent', email: `omar.${account.id}@agency.test` });
  const key = (await createKey(c, { rootAccountId: account.id, mode: 'test', agentId: agent.id })).key;
  const uuidOf = async (id: number) => (await c.db('agents').where({ id }).first('idp_teammate_uuid')).idp_teammate_uuid as string;
  const product = async (customerName: string, definition: unknown, policy: string) => {
    const set = await createQuestionSet(c, account.id, definition);
    const res = await call(app.baseUrl, '/api/v1/products', {
      method: 'POST',
      key,
      body: {
        customerName,
        defaultPrice: 25,
        questionSetId: set.id,
        insurerName: 'Evergreen Mutual Insurance Co.',
        masterPolicyNumber: policy,
        claimsPhoneNumber: '+1-800-555-0134',
        deductible: 250,
      },
    });
    if (res.status !== 201) throw new Error(`product create failed: ${res.status} ${res.text}`);
    return res.body.data.id as number;
  };
  return {
    app,
    key,
    slug: account.slug,
    rootUuid: (await c.db('root_accounts').where({ id: account.id }).first('idp_root_account_uuid')).idp_root_account_uuid,
    teammateUuid: await uuidOf(agent.id),
    otherTeammateUuid: await uuidOf(other.id),
    eventProductId: await product('Special Event Liability', SPECIAL_EVENT_LIABILITY, 'EVM-GL-2027-0042'),
    tripProductId: await product('Rental Car Trip Excess', TRIP_EXCESS, 'EVM-TX-2027-0007'),
  };
}

/**
 * An agency (see createAgency) that also sells the recurring product `Monthly Venue Liability`
 * (see createMonthlyProduct, master policy `masterPolicyNumber`): the agency and the product's id.
 * @throws {Error} when the API does not create the product.
 */
export async function createAgencyWithMonthlyProduct(
  app: ApiHandle,
  masterPolicyNumber: string,
): Promise<{ agency: Agency; monthlyProductId: number }> {
  const agency = await createAgency(app);
  const account = await app.container.db('root_accounts').where({ slug: agency.slug }).first('id');
  return { agency, monthlyProductId: await createMonthlyProduct(app, account.id, agency.key, masterPolicyNumber) };
}

/**
 * Connects a new buyer and sends adminValidateBuyerResponses with `selections` (and `extra` body
 * fields such as `metadata`); answers the quote call as it came, whatever its status, with the
 * buyer (their uuid and email address).
 * @throws {Error} when newConnect fails.
 */
export async function quoteForNewBuyer(agency: Agency, selections: Record<string, unknown>[], extra: Record<string, unknown> = {}) {
  const { app, key } = agency;
  const n = buyerSeq++;
  const email = `avery${n}.${Date.now()}@example.com`;
  const buyer = await connectBuyer(app.baseUrl, key, { firstName: 'Avery', lastName: `Quinn${n}`, email, sellerSlug: agency.slug });
  const quote = await call(app.baseUrl, '/public-quote/adminValidateBuyerResponses', {
    method: 'POST',
    key,
    body: { ...buyer, selected_product_lines_to_purchase: selections, ...extra },
  });
  return { quote, buyerUuid: buyer.idp_accnt_uuid, buyerEmail: email };
}

/** Quotes `selection` (one product line, or several) for a new buyer and pays it by a signed webhook (payment intent `pi_paid_<id>`). */
export async function buyAndPay(agency: Agency, selection: Record<string, unknown> | Record<string, unknown>[]): Promise<PaidPurchase> {
  const { quote, buyerUuid } = await quoteForNewBuyer(agency, Array.isArray(selection) ? selection : [selection]);
  if (quote.status !== 200) throw new Error(`adminValidateBuyerResponses: ${quote.status} ${quote.text}`);
  const purchaseId = quote.body.purchase_id as number;
  const delivered = await deliverWebhook(agency.app, sessionCompletedEvent(purchaseId, quote.body.id));
  if (delivered.status !== 200) throw new Error(`webhook: ${delivered.status} ${delivered.text}`);
  return { purchaseId, paymentIntent: `pi_paid_${purchaseId}`, buyerUuid };
}

/** The event product for the local days `start`…`end` (inclusive) in America/Chicago. */
export function eventSelection(agency: Agency, days: { start: string; end: string }, insured = 'Jordan Lee') {
  return {
    product_line_template_id: agency.eventProductId,
    product_line_is_trip_excess_product: false,
    event_type: 'wedding',
    attendance: 120,
    liquor: 'yes',
    venue_name: 'Grand Hall',
    named_insured: { name: insured, address: { line1: '22 Elm Rd', city: 'Boston', region: 'MA', postal_code: '02110', country: 'US' } },
    certificate_holder: {
      name: 'Grand Hall LLC',
      address: { line1: '1 Main St', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
    },
    coverage: { time_zone: 'America/Chicago', start_date: days.start, end_date: days.end },
  };
}

/** The trip product for two trips in Europe/Lisbon. */
export function tripSelection(agency: Agency, insured = 'Riley Chen') {
  return {
    product_line_template_id: agency.tripProductId,
    product_line_is_trip_excess_product: true,
    vehicle_class: 'car',
    drivers: 2,
    named_insured: { name: insured },
    trips: {
      time_zone: 'Europe/Lisbon',
      trips: [
        { start: '2027-06-10T09:00', end: '2027-06-14T18:00' },
        { start: '2027-07-01T08:30', end: '2027-07-03T20:00' },
      ],
    },
  };
}

/** POST getCertificates on `surface` (teammate surface and the agency's teammate by default). */
export function getCertificates(
  agency: Agency,
  paymentIntent: string,
  body: Record<string, unknown> = { idp_teammate_uuid: agency.teammateUuid },
  surface = '/platform-agency-certs',
  key = agency.key,
) {
  return call(agency.app.baseUrl, `${surface}/getCertificates`, { method: 'POST', key, body: { ...body, payment_intent: paymentIntent } });
}

/** Polls getCertificates until the status is `issued` and returns that body. */
export async function waitIssued(agency: Agency, paymentIntent: string, timeoutMs = 60_000) {
  return eventually(async () => {
    // An idempotent read, polled: a connection reset on a reused keep-alive socket (seen on a
    // loaded machine) is retried like any other not-yet answer (spec §7.2).
    const res = await getCertificates(agency, paymentIntent).catch((err: unknown) => {
      if ((err as { cause?: { code?: string } }).cause?.code === 'ECONNRESET') return null;
      throw err;
    });
    if (!res) return null;
    // The webhook's payment intent becomes known when the workflow records the payment.
    if (res.status === 404 && res.body?.code === 'NOT_FOUND') return null;
    if (res.status !== 200) throw new Error(`getCertificates: ${res.status} ${res.text}`);
    return res.body.status === 'issued' ? res.body : null;
  }, timeoutMs);
}
