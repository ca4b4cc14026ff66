/**
 * getInvoiceData routes (spec §4.5, §7.2; issue 7):
 * - `POST /platform-agency-certs/getInvoiceData` (teammate scope, `idp_teammate_uuid`) and
 * - `POST /platform-agency-root-certs/getInvoiceData` (root scope, `idp_root_account_uuid`):
 * parse the body, resolve the caller's scope, call the service; 200 JSON without envelope,
 * failures are the bare error of §7.2. Amounts are integer minor units.
 */
import type { RouteRegistration } from '../http/routes';
import { bareError } from '../http/openapi';
import { ambiguousPaymentIntentResponse } from '../certificates/schemas';
import { scopedRoute, type ScopedOperation } from '../certificates/scoped-routes';
import type { AccountScopes } from '../accounts/scope';
import type { InvoiceService } from './service';
import { GetInvoiceDataRequest, GetInvoiceDataResponse, RootGetInvoiceDataRequest } from './schemas';

const description =
  'The payment processor’s invoice behind a purchase, with every line item (the products and, when the API key has one, the platform fee as its own line), read from the processor at call time. All amounts (subtotal, tax, total, amount_paid, amount_due, line amount) are integers in the currency’s minor units (cents for usd), never decimals. `invoices` is a list: one invoice for a one-time purchase, one per billing period for a subscription. A purchase without an invoice answers 200 with `invoices: []` and a `status` saying why (`unpaid`, `pending`: retry with backoff, `not_invoiced`). Name the purchase by exactly one of `purchase_id`, `checkout_session_id` or `payment_intent`.';
const notFoundDescription =
  "NOT_FOUND: no purchase with that purchase_id, checkout_session_id or payment_intent in the caller's scope (another account, teammate, mode or buyer reads the same)";
const processorErrors = {
  401: bareError('AUTHENTICATION_ERROR: the payment processor account could not be authenticated'),
  429: bareError('RATE_LIMIT_ERROR: too many requests (gateway or processor); retry after the Retry-After header (seconds)'),
  500: bareError('INTERNAL_ERROR, or API_ERROR: the payment processor returned an error; retry with backoff'),
  503: bareError('CONNECTION_ERROR: the payment processor could not be reached; retry with backoff'),
  409: ambiguousPaymentIntentResponse,
} as const;
const ok = {
  description: 'The invoice(s) of the purchase, or none with the reason in `status`',
  content: { 'application/json': { schema: GetInvoiceDataResponse } },
};

const getInvoiceData = (service: InvoiceService): ScopedOperation<GetInvoiceDataRequest | RootGetInvoiceDataRequest> => ({
  path: '/getInvoiceData',
  requests: { teammate: GetInvoiceDataRequest, root: RootGetInvoiceDataRequest },
  summary: "The processor's invoice and line items behind a purchase",
  description,
  ok,
  notFound: notFoundDescription,
  responses: processorErrors,
  handle: (principal, scope, body) => service.getInvoiceData(principal, scope, body),
});

/** getInvoiceData on the teammate surface (mount under `/platform-agency-certs`). */
export const teammateInvoiceRoutes = (service: InvoiceService, scopes: AccountScopes): RouteRegistration =>
  scopedRoute('teammate', scopes, getInvoiceData(service));
/** getInvoiceData on the root surface (mount under `/platform-agency-root-certs`). */
export const rootInvoiceRoutes = (service: InvoiceService, scopes: AccountScopes): RouteRegistration =>
  scopedRoute('root', scopes, getInvoiceData(service));
