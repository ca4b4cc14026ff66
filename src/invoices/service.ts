/**
 * getInvoiceData (spec §4.5; issue 7): the payment processor's invoice and its line items behind
 * a purchase, read through the processor's library and returned as snake_case JSON
 * (`GetInvoiceDataResponse`; every amount in integer minor units, as the processor reports it).
 *
 * How the invoice is found: one-time checkouts are created with invoice creation on
 * (`createCheckoutSession`), so once the session is paid the processor attaches an invoice to it.
 * The service retrieves the purchase's checkout session, then that invoice by id, then — only
 * when the invoice's embedded line list is truncated — every line page by page. Nothing is
 * stored here: the processor is the record, so a later change (void, credit note) shows at once.
 *
 * No invoice (200, `invoices: []`, `status` says why): `unpaid` (no session yet, or the session
 * is not paid), `pending` (the session is paid but the processor has not attached the invoice
 * yet; retry with backoff), `not_invoiced` (paid without an invoice: a saved-card charge, which
 * expires the checkout session, or a session created without invoice creation). A `not_invoiced`
 * purchase answers the processor's receipt instead (`receipt`: the payment intent's latest
 * charge, read with the payment intent; null when the processor holds none, e.g. a test helper's
 * made-up payment intent, which it answers 404); every other answer has `receipt: null`.
 *
 * Errors (bare body, spec §7.2): 404 NOT_FOUND for a purchase that is unknown or outside the
 * caller's scope — another root account, another teammate (teammate surface), the other mode
 * than the key's, another buyer than `idp_accnt_uuid` — all read the same; the processor's
 * failures mapped once by `mapProcessorError` (spec §7.1: CONNECTION_ERROR 503, API_ERROR 500,
 * RATE_LIMIT_ERROR 429, AUTHENTICATION_ERROR 401, INVALID_REQUEST 400). The teammate and root
 * ids themselves are checked by the account scopes (TEAMMATE_NOT_FOUND, SELLER_NOT_FOUND).
 */
import type Stripe from 'stripe';
import type { Principal } from '../api-keys/service';
import type { AccountScope } from '../accounts/scope';
import { handleOf, MAX_PAYMENT_INTENT_CANDIDATES, onePurchase } from '../certificates/purchase-handles';
import type { Payproc } from '../payproc/client';
import { withProcessorErrors } from '../payproc/errors';
import { idOf } from '../payproc/ids';
import type { PurchaseRecord } from '../purchases/purchase-record';
import type { SaleRepository } from '../purchases/sale-repository';
import type { GetInvoiceDataResponse, InvoiceData, InvoiceDataStatus, InvoiceLine, PaymentReceipt } from './schemas';

/** Upper bound on lines read from one invoice (the processor's own limit is far lower). */
const MAX_LINES = 10_000;

/** The request fields the service reads (both surfaces share them). */
export interface InvoiceDataQuery {
  payment_intent?: string;
  purchase_id?: number;
  checkout_session_id?: string;
  idp_accnt_uuid?: string;
}

/** Unix seconds → ISO 8601 UTC. */
const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

function toLine(l: Stripe.InvoiceLineItem): InvoiceLine {
  const price = l.pricing?.price_details;
  return {
    id: l.id,
    description: l.description ?? null,
    quantity: l.quantity ?? null,
    amount: l.amount,
    currency: l.currency,
    period_start: iso(l.period.start),
    period_end: iso(l.period.end),
    price_id: idOf(price?.price),
    product_id: price?.product ?? null,
  };
}

function toInvoice(inv: Stripe.Invoice, lines: Stripe.InvoiceLineItem[]): InvoiceData {
  const paidAt = inv.status_transitions?.paid_at;
  return {
    id: inv.id,
    number: inv.number ?? null,
    status: inv.status ?? null,
    currency: inv.currency,
    subtotal: inv.subtotal,
    tax: (inv.total_taxes ?? []).reduce((sum, t) => sum + t.amount, 0),
    total: inv.total,
    amount_paid: inv.amount_paid,
    amount_due: inv.amount_due,
    created: iso(inv.created),
    paid_at: paidAt ? iso(paidAt) : null,
    period_start: iso(inv.period_start),
    period_end: iso(inv.period_end),
    hosted_invoice_url: inv.hosted_invoice_url ?? null,
    invoice_pdf: inv.invoice_pdf ?? null,
    lines: lines.map(toLine),
  };
}

/** The receipt of a paid charge (null for a charge that is missing or not paid). */
function toReceipt(charge: Stripe.Charge | string | null | undefined): PaymentReceipt | null {
  if (!charge || typeof charge === 'string' || !charge.paid) return null;
  return {
    charge_id: charge.id,
    amount: charge.amount,
    amount_refunded: charge.amount_refunded,
    currency: charge.currency,
    paid_at: iso(charge.created),
    receipt_number: charge.receipt_number ?? null,
    receipt_url: charge.receipt_url ?? null,
  };
}

/** Why a purchase whose session carries no invoice has none (see the module comment). */
function noInvoiceStatus(purchase: Pick<PurchaseRecord, 'paidAt'>, session: Stripe.Checkout.Session): InvoiceDataStatus {
  const sessionPaid =
    session.status === 'complete' && (session.payment_status === 'paid' || session.payment_status === 'no_payment_required');
  if (sessionPaid) return session.invoice_creation?.enabled ? 'pending' : 'not_invoiced';
  // Paid, but not through this session: the saved-card charge expires the session.
  return purchase.paidAt ? 'not_invoiced' : 'unpaid';
}

/**
 * The getInvoiceData service over the purchases domain's read of the purchase a request names
 * (`sales.findByHandle`: the purchase read model) and the processor's library (`payproc`).
 */
export function createInvoiceService(deps: { sales: Pick<SaleRepository, 'findByHandle'>; payproc: Payproc }) {
  /** The invoice's every line: the embedded list when complete, else all pages. */
  async function allLines(stripe: Stripe, invoice: Stripe.Invoice): Promise<Stripe.InvoiceLineItem[]> {
    if (invoice.lines && !invoice.lines.has_more) return invoice.lines.data;
    return stripe.invoices.listLineItems(invoice.id, { limit: 100 }).autoPagingToArray({ limit: MAX_LINES });
  }

  /** The receipt of payment intent `id` (its latest charge), or null when the processor holds no such payment intent. */
  async function receiptOf(stripe: Stripe, id: string): Promise<PaymentReceipt | null> {
    try {
      const intent = await stripe.paymentIntents.retrieve(id, { expand: ['latest_charge'] });
      return toReceipt(intent.latest_charge);
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return null;
      throw err;
    }
  }

  return {
    /**
     * Spec §4.5 `getInvoiceData`: the purchase named by `purchase_id`, `checkout_session_id` or `payment_intent` within
     * `scope` (and the key's mode, and the buyer when `idp_accnt_uuid` is sent) →
     * `{ purchase_id, payment_intent, status, invoices: [{ …amounts in minor units, lines }] }`.
     * Throws NOT_FOUND (404), AMBIGUOUS_PAYMENT_INTENT (409, a payment intent of several of the
     * caller's purchases) or the mapped processor error; see the module comment.
     */
    async getInvoiceData(principal: Principal, scope: AccountScope, req: InvoiceDataQuery): Promise<GetInvoiceDataResponse> {
      const ref = handleOf(req);
      // The caller's scope is part of the query, not a check after it: another root account's,
      // teammate's, mode's or buyer's purchase is not found, exactly like an unknown one.
      const found = await deps.sales.findByHandle(
        ref,
        {
          rootAccountId: scope.rootAccountId,
          agentId: scope.agentId,
          mode: principal.mode,
          ...(req.idp_accnt_uuid !== undefined ? { buyerIdpUuid: req.idp_accnt_uuid } : {}),
        },
        MAX_PAYMENT_INTENT_CANDIDATES,
      );
      const purchase = onePurchase(ref, found, 'purchase');

      const answer = (
        status: InvoiceDataStatus,
        invoices: InvoiceData[] = [],
        receipt: PaymentReceipt | null = null,
      ): GetInvoiceDataResponse => ({
        purchase_id: purchase.id,
        payment_intent: purchase.paymentIntentId,
        status,
        invoices,
        receipt,
      });
      /** A paid purchase without an invoice: its receipt is the record. */
      const notInvoiced = async (stripe: Stripe) =>
        answer('not_invoiced', [], purchase.paymentIntentId ? await receiptOf(stripe, purchase.paymentIntentId) : null);
      // A subscription renewal was paid by a known invoice (no checkout session of its own).
      const knownInvoice = purchase.payprocInvoiceId;
      if (knownInvoice) {
        const stripe = deps.payproc.client(purchase.mode);
        return withProcessorErrors(async () => {
          const invoice = await stripe.invoices.retrieve(knownInvoice);
          return answer('invoiced', [toInvoice(invoice, await allLines(stripe, invoice))]);
        });
      }
      const stripe = deps.payproc.client(purchase.mode);
      // No session yet: nothing was offered for payment through checkout (paid: by a saved card).
      if (!purchase.checkoutSessionId) return purchase.paidAt ? withProcessorErrors(() => notInvoiced(stripe)) : answer('unpaid');

      const sessionId = purchase.checkoutSessionId;
      return withProcessorErrors(async () => {
        const session = await stripe.checkout.sessions.retrieve(sessionId);
        const invoiceId = idOf(session.invoice);
        if (!invoiceId) {
          const status = noInvoiceStatus(purchase, session);
          return status === 'not_invoiced' ? notInvoiced(stripe) : answer(status);
        }
        const invoice = await stripe.invoices.retrieve(invoiceId);
        return answer('invoiced', [toInvoice(invoice, await allLines(stripe, invoice))]);
      });
    },
  };
}

export type InvoiceService = ReturnType<typeof createInvoiceService>;
