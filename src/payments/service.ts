/**
 * Payment options (b) and (c) of spec §4.4 step 3; ARCHITECTURE §3 step 4. Option (a), the
 * redirect, is the session URL that adminValidateBuyerResponses already returns.
 *
 * - `emailCheckoutLink`: the purchase's checkout session (the same one: update-with-start
 *   attaches to the running purchase workflow) emailed to the buyer with the products, the
 *   amount (minor units shown as currency) and the expiry; a repeat within
 *   `checkoutLinkDedupeSeconds` (CHECKOUT_LINK_EMAIL_DEDUPE_SECONDS, 600) of a send of the same
 *   session to the same buyer answers that send (`deduplicated: true`) without mailing again.
 * - `chargeSavedCard` (`processUserDirectPayprocPayment`): an off-session payment intent, created
 *   and confirmed with a payment method saved on the buyer's processor customer, for the
 *   purchase's priced total (minor units). Spec §7.2 forbids blind retries, so every attempt is
 *   recorded before the processor is called (idempotency key `purchase-<id>-direct-charge`,
 *   `…-direct-charge-<n>` for the n-th attempt after a definitive decline) and its payment
 *   intent id is stored as soon as it is known. A repeated call first settles the earlier
 *   attempt: it retrieves the stored payment intent, or — when the response was lost — re-sends
 *   the identical request with the same idempotency key, which the processor answers with the
 *   original result instead of charging again. Only a definitively failed attempt lets a new
 *   one start. On success the purchase workflow gets the `paid` signal, so certificates follow
 *   the normal path, and the now-pointless checkout session is expired.
 *
 * Both take the buyer's `idp_accnt_uuid` + `access_token` (spec §5.5) and a purchase of the
 * key's root account and that buyer (a test key sees only test purchases). Errors (bare body,
 * spec §7.2): ACCESS_TOKEN_INVALID/EXPIRED (401); NOT_FOUND (404) for any other purchase;
 * INVALID_REQUEST (400) when the purchase is not awaiting payment (paid, expired, failed) or the
 * processor refused the request; CARD_ERROR (400) for a declined card (retry only with a
 * different card; the same card is refused for that purchase without calling the processor);
 * AUTHENTICATION_ERROR (401) for the processor account; CONNECTION_ERROR (503) when the charge
 * did not finish within the API's deadline (call again: it settles the same attempt);
 * INTERNAL_ERROR (500) when the email could not be sent.
 */
import { AppError, notFound } from '../shared/errors';
import type { Principal } from '../api-keys/service';
import type { VerifiedBuyer } from '../buyers/service';
import type { Mailer } from '../mail/mailer';
import type { PurchaseWorkflows } from '../purchases/workflow-client';
import { paymentRefusal } from '../purchases/rules';
import type { PaymentsRepository } from './repository';
import type { PurchaseRecord } from '../purchases/purchase-record';
import type { SaleRepository } from '../purchases/sale-repository';
import type { AccountsRepository } from '../accounts/repository';
import type { DirectPaymentRequest, DirectPaymentResponse, EmailCheckoutLinkRequest, EmailCheckoutLinkResponse } from './schemas';
import { checkoutLinkEmail } from './checkout-link-email';

/** A new saved-card charge needs at least this long before the purchase's payment deadline. */
const MIN_TIME_LEFT_MS = 60_000;

/**
 * The payment options over their own records (`repo`: checkout-link sends, saved-card attempts),
 * the purchases domain's reads (`sales`: the purchase as read, `PurchaseRecord`, and its items),
 * the accounts' (`accounts`: the seller's name for the email), the buyer check, the purchase
 * workflows and the mailer; see the module comment for what each call does and throws.
 */
export function createPaymentService(deps: {
  repo: PaymentsRepository;
  sales: Pick<SaleRepository, 'findByHandle' | 'itemDetails'>;
  accounts: Pick<AccountsRepository, 'findById'>;
  verifyBuyer: (principal: Principal, idpAccntUuid: string, accessToken: string) => Promise<VerifiedBuyer>;
  workflows: Pick<PurchaseWorkflows, 'startCheckout' | 'chargeSavedCard'>;
  mailer: Mailer;
  /** Seconds within which a repeated checkout-link email is answered from the earlier send (0: off). */
  checkoutLinkDedupeSeconds?: number;
  now?: () => Date;
}) {
  const { repo } = deps;
  const now = deps.now ?? (() => new Date());

  /** The purchase if it belongs to the key's root account and this buyer (a test key: a test purchase); else 404 NOT_FOUND. */
  async function loadPurchase(principal: Principal, buyer: VerifiedBuyer, purchaseId: number): Promise<PurchaseRecord> {
    const [purchase] = await deps.sales.findByHandle({ purchaseId }, { rootAccountId: principal.rootAccountId, buyerId: buyer.buyerId }, 1);
    if (!purchase || (principal.mode === 'test' && purchase.mode !== 'test')) throw notFound('purchase', purchaseId);
    return purchase;
  }

  /** Throws INVALID_REQUEST unless the purchase can still be paid for `marginMs` more (../purchases/rules.ts `paymentRefusal`). */
  function assertPayable(p: PurchaseRecord, marginMs: number): void {
    const refusal = paymentRefusal(p, now(), marginMs);
    if (refusal) throw new AppError(refusal.code, refusal.message);
  }

  return {
    /**
     * Spec §4.4 step 3 (b): emails the purchase's checkout link to the buyer and returns
     * `{ purchase_id, emailed_to, checkout_session_id, expires_at, emailed_at, deduplicated }`.
     * A call sends one email, unless the same session went to the same buyer within the dedupe
     * window: then it answers that send's `emailed_at` with `deduplicated: true`. Sends of one
     * purchase are decided one at a time (concurrent calls send once).
     */
    async emailCheckoutLink(principal: Principal, req: EmailCheckoutLinkRequest): Promise<EmailCheckoutLinkResponse> {
      const buyer = await deps.verifyBuyer(principal, req.idp_accnt_uuid, req.access_token);
      const purchase = await loadPurchase(principal, buyer, req.purchase_id);
      const seller = await deps.accounts.findById(purchase.rootAccountId);
      if (!seller) throw notFound('purchase', req.purchase_id);
      const live = await repo.liveCharge(purchase.id);
      if (live?.status === 'succeeded' || live?.status === 'processing')
        throw new AppError('INVALID_REQUEST', `Purchase ${purchase.id} is already paid`);
      if (live) {
        throw new AppError(
          'INVALID_REQUEST',
          `A saved-card charge of purchase ${purchase.id} has no known outcome yet; call processUserDirectPayprocPayment again to settle it first`,
        );
      }
      assertPayable(purchase, 0);
      const session = await deps.workflows.startCheckout({ ...purchase, buyerEmail: buyer.email });
      const answer = (sentAt: Date, deduplicated: boolean) => ({
        purchase_id: purchase.id,
        emailed_to: buyer.email,
        checkout_session_id: session.id,
        expires_at: session.expires_at,
        emailed_at: sentAt.toISOString(),
        deduplicated,
      });
      const reservation = await repo.reserveCheckoutLinkEmail({
        purchaseId: purchase.id,
        checkoutSessionId: session.id,
        recipient: buyer.email,
        windowSeconds: deps.checkoutLinkDedupeSeconds ?? 0,
      });
      if (!reservation.reserved) return answer(reservation.sentAt, true);
      const lines = (await deps.sales.itemDetails(purchase.id)).map((i) => ({
        name: i.productName,
        units: i.units.length,
        isTripExcess: i.isTripExcess,
      }));
      await deps.mailer
        .send(
          checkoutLinkEmail({
            to: buyer.email,
            buyerFirstName: buyer.firstName,
            sellerName: seller.name,
            purchaseId: purchase.id,
            lines,
            amountMinor: session.amount_total,
            currency: session.currency,
            url: session.url,
            expiresAt: session.expires_at,
          }),
        )
        .catch(async (err: unknown) => {
          await repo.releaseCheckoutLinkEmail(reservation.id);
          throw err;
        });
      return answer(reservation.sentAt, false);
    },

    /**
     * Spec §4.4 step 3 (c), `processUserDirectPayprocPayment`: charges the purchase's total to a
     * saved payment method, off-session, at most once (see the module comment); returns
     * `{ purchase_id, payment_intent, status: 'succeeded' | 'processing' }`. A repeat after a
     * success answers the same payment intent without charging again.
     */
    async chargeSavedCard(principal: Principal, req: DirectPaymentRequest): Promise<DirectPaymentResponse> {
      const buyer = await deps.verifyBuyer(principal, req.idp_accnt_uuid, req.access_token);
      const purchase = await loadPurchase(principal, buyer, req.purchase_id);
      const live = await repo.liveCharge(purchase.id);
      // A repeat after a success answers the same payment intent from the record, charging nothing.
      if (live?.status === 'succeeded' && live.paymentIntentId)
        return { purchase_id: purchase.id, payment_intent: live.paymentIntentId, status: 'succeeded' };
      // An attempt of unknown outcome is settled by the workflow whatever the time; a new one needs time left.
      if (!live) assertPayable(purchase, MIN_TIME_LEFT_MS);
      const result = await deps.workflows.chargeSavedCard(purchase.id, req.payment_method_id);
      if (result.ok) return { purchase_id: purchase.id, payment_intent: result.paymentIntentId, status: result.status };
      const extra = {
        ...(result.declineCode ? { decline_code: result.declineCode } : {}),
        ...(result.paymentIntentId ? { payment_intent: result.paymentIntentId } : {}),
      };
      throw new AppError(result.code, result.message, { extra });
    },
  };
}

export type PaymentService = ReturnType<typeof createPaymentService>;
