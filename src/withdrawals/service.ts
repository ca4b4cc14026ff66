/**
 * The buyer's own withdrawal (an online withdrawal function, as EU distance contracts must offer
 * from 19 June 2026): the page behind the signed link (./token.ts) shows the buyer what withdrawing
 * now gives back and carries it out when they confirm.
 *
 * - `show(token)`: prices a withdrawal from every covered unit not started yet, asked by the
 *   `buyer`, with the purchase service's own quote (src/purchases/service.ts `quoteCancellation`
 *   with `withdrawal`: the refund rule of src/purchases/refund-rule.ts, the purchase's test clock
 *   included: within 14 days of payment everything of the unstarted units comes back, premium, tax
 *   and fee share, whatever the terms; after that the terms each item was bought with apply),
 *   stores it as a quote of this page (./repository.ts) and answers it. Nothing changes but that
 *   stored quote: the page never cancels on GET.
 * - `confirm(token, form)`: carries out the quote the form names (its per-render nonce: a quote
 *   this page showed for this purchase) through the purchase service's `cancel`, i.e. the purchase's
 *   `policy-<id>` workflow, exactly as the agency's own cancel, so the agency hears of it through
 *   the same events (`purchase.cancelled`, `refund.succeeded`, `certificates.voided`) with
 *   `requested_by: "buyer"`.
 *
 * Single use: once a cancellation carries out one of this page's quotes, the link answers that
 * the withdrawal was made (and how its refund stands) and never prices or cancels again; sending
 * the same confirmation again answers the same withdrawal. Two confirmations racing with different
 * quotes give one withdrawal: the policy workflow takes one change at a time and refuses the other
 * as stale.
 *
 * The quote and the cancellation are recorded under the API key that sold the purchase (the agency
 * is who the buyer contracted with), with `requested_by` `buyer`.
 *
 * Views (`WithdrawalView.kind`): `not_found` (a forged, damaged or unknown link: one answer for
 * all), `not_offered` (an item's terms do not allow the buyer's own withdrawal), `not_cancellable`
 * (not paid), `nothing_left` (refunded in full, or every unit started or already cancelled),
 * `offer` (the quote and the confirm form; `notice` says why it is shown again after a confirm),
 * `withdrawn` (the withdrawal made through this link), `busy` (the policy workflow did not answer
 * in time: the withdrawal may still go through; nothing is done twice). Amounts in minor units.
 */
import type { Principal } from '../api-keys/service';
import { AppError } from '../shared/errors';
import type { PurchaseItemDetail, PurchaseRecord } from '../purchases/purchase-record';
import type { StoredCancellation } from '../purchases/ledger-record';
import type { SaleRepository } from '../purchases/sale-repository';
import type { LedgerRepository } from '../purchases/ledger-repository';
import type { PurchaseService } from '../purchases/service';
import type { CancellationQuote } from '../purchases/schemas';
import type { WithdrawalsRepository } from './repository';
import { withdrawalOffered } from './links';
import { verifyWithdrawalToken } from './token';

/** The reason kept with a withdrawal's quote and cancellation. */
export const WITHDRAWAL_REASON = 'Withdrawn by the buyer online (withdrawal link)';

/** A quote id as the form carries it. */
const QUOTE_ID = /^cq_[0-9a-f]{24}$/;

/** A covered unit of the quote, as the page lists it. */
export interface WithdrawalUnit {
  productName: string;
  kind: 'day' | 'trip';
  label: string;
  certificateNumber: string | null;
  premiumMinor: number;
  earnedMinor: number;
  refundableMinor: number;
}

/** What the page shows (see the module comment for each kind). */
export type WithdrawalView =
  | { kind: 'not_found' }
  | { kind: 'not_offered' | 'not_cancellable' | 'busy'; purchaseId: number; testMode: boolean }
  | { kind: 'nothing_left'; purchaseId: number; testMode: boolean; refundedInFull: boolean }
  | {
      kind: 'offer';
      purchaseId: number;
      testMode: boolean;
      /** Why the offer is shown again after a confirm: the quote no longer held, or the form was not one of this page's. */
      notice?: 'quote_changed' | 'form_invalid';
      quote: {
        id: string;
        method: CancellationQuote['method'];
        currency: string;
        premiumMinor: number;
        taxMinor: number;
        platformFeeMinor: number;
        totalMinor: number;
        expiresAt: Date;
        endsPolicy: boolean;
        units: WithdrawalUnit[];
      };
      /** Free-look days of the terms (the first item's). */
      freeLookDays: number;
    }
  | {
      kind: 'withdrawn';
      purchaseId: number;
      testMode: boolean;
      /** `confirmed`: this request made it (or repeated it); `already_used`: a confirm of another quote after the link was used. */
      outcome: 'confirmed' | 'already_used' | 'shown';
      cancellation: {
        id: number;
        status: StoredCancellation['status'];
        currency: string;
        totalMinor: number;
        unitCount: number;
        createdAt: Date;
        completedAt: Date | null;
      };
    };

/** Acting for the purchase's own selling key: the scope in which the purchase service finds it. */
export function principalOf(p: PurchaseRecord): Principal {
  return { apiKeyId: p.apiKeyId, rootAccountId: p.rootAccountId, mode: p.mode, agentId: p.agentId, platformFeeBps: null };
}

export function createWithdrawalService(deps: {
  sales: Pick<SaleRepository, 'findById' | 'itemDetails'>;
  ledger: Pick<LedgerRepository, 'cancellations'>;
  purchaseService: Pick<PurchaseService, 'quoteCancellation' | 'cancel'>;
  withdrawals: WithdrawalsRepository;
  /** WITHDRAWAL_LINK_KEY. */
  key: string;
}) {
  /** The purchase a token opens and its items, or the view that ends there (not found, not offered). */
  async function open(token: string): Promise<{ p: PurchaseRecord; items: PurchaseItemDetail[] } | WithdrawalView> {
    const id = verifyWithdrawalToken(deps.key, token);
    if (id === null) return { kind: 'not_found' };
    const p = await deps.sales.findById(id);
    if (!p) return { kind: 'not_found' };
    const items = await deps.sales.itemDetails(id);
    if (!withdrawalOffered(items)) return { kind: 'not_offered', purchaseId: id, testMode: p.mode === 'test' };
    return { p, items };
  }

  /** The cancellation that carried out one of this page's quotes, if any (rescinded ones aside). */
  async function withdrawal(purchaseId: number): Promise<StoredCancellation | undefined> {
    const [quoteIds, cancellations] = await Promise.all([deps.withdrawals.quoteIdsOf(purchaseId), deps.ledger.cancellations(purchaseId)]);
    return cancellations.find((c) => c.quoteId !== null && quoteIds.has(c.quoteId) && c.status !== 'rescinded');
  }

  function withdrawnView(p: PurchaseRecord, c: StoredCancellation, outcome: 'confirmed' | 'already_used' | 'shown'): WithdrawalView {
    return {
      kind: 'withdrawn',
      purchaseId: p.id,
      testMode: p.mode === 'test',
      outcome,
      cancellation: {
        id: c.id,
        status: c.status,
        currency: c.currency,
        totalMinor: c.totalMinor,
        unitCount: c.coveredUnitIds.length,
        createdAt: c.createdAt,
        completedAt: c.completedAt,
      },
    };
  }

  /** The refusals of the purchase service that are states of the page, as its views; anything else is thrown. */
  function refusalView(p: PurchaseRecord, err: unknown): WithdrawalView {
    const testMode = p.mode === 'test';
    if (err instanceof AppError) {
      if (err.code === 'PURCHASE_NOT_CANCELLABLE') return { kind: 'not_cancellable', purchaseId: p.id, testMode };
      if (err.code === 'PURCHASE_ALREADY_CANCELLED') return { kind: 'nothing_left', purchaseId: p.id, testMode, refundedInFull: true };
      if (err.code === 'NOTHING_TO_CANCEL' || err.code === 'COVERED_UNIT_STARTED' || err.code === 'COVERED_UNIT_ALREADY_CANCELLED')
        return { kind: 'nothing_left', purchaseId: p.id, testMode, refundedInFull: false };
      if (err.code === 'CONNECTION_ERROR') return { kind: 'busy', purchaseId: p.id, testMode };
    }
    throw err;
  }

  /** Prices the withdrawal now, keeps the quote as this page's, and answers the offer. */
  async function offer(p: PurchaseRecord, items: PurchaseItemDetail[], notice?: 'quote_changed' | 'form_invalid'): Promise<WithdrawalView> {
    let q: CancellationQuote;
    try {
      q = await deps.purchaseService.quoteCancellation(
        principalOf(p),
        p.id,
        { requested_by: 'buyer', reason: WITHDRAWAL_REASON },
        { withdrawal: true },
      );
    } catch (err) {
      return refusalView(p, err);
    }
    await deps.withdrawals.recordQuote(p.id, q.id);
    const unitOf = new Map(
      items.flatMap((i) => i.units.map((u) => [u.id, { productName: i.productName, kind: u.kind, label: u.localLabel }] as const)),
    );
    return {
      kind: 'offer',
      purchaseId: p.id,
      testMode: p.mode === 'test',
      ...(notice ? { notice } : {}),
      quote: {
        id: q.id,
        method: q.method,
        currency: q.currency,
        premiumMinor: q.refund.premium,
        taxMinor: q.refund.tax,
        platformFeeMinor: q.refund.platform_fee,
        totalMinor: q.refund.total,
        expiresAt: new Date(q.expires_at),
        endsPolicy: q.ends_policy,
        units: q.covered_units.map((u) => {
          const unit = unitOf.get(u.covered_unit_id);
          return {
            productName: unit?.productName ?? '',
            kind: unit?.kind ?? 'day',
            label: unit?.label ?? '',
            certificateNumber: u.certificate_number,
            premiumMinor: u.premium,
            earnedMinor: u.earned,
            refundableMinor: u.refundable,
          };
        }),
      },
      freeLookDays: items[0]!.cancellationTerms.freeLookDays,
    };
  }

  return {
    /**
     * The page for `token` (GET): the withdrawal made through it if there is one, else a fresh
     * quote of every unstarted unit with the confirm form, else why there is nothing to withdraw.
     * Stores the quote it shows; cancels nothing.
     */
    async show(token: string): Promise<WithdrawalView> {
      const opened = await open(token);
      if ('kind' in opened) return opened;
      const done = await withdrawal(opened.p.id);
      if (done) return withdrawnView(opened.p, done, 'shown');
      return offer(opened.p, opened.items);
    },

    /**
     * The buyer confirms (POST): `form.quote` must be a quote this page showed for this purchase.
     * Carries it out through the purchase's policy workflow and answers the withdrawal
     * (`outcome: confirmed`; the same quote again answers the same). After a withdrawal through
     * the link, another quote answers `already_used` and does nothing. A quote that no longer
     * holds (expired after 15 minutes, or a unit started or was cancelled meanwhile) or a form
     * that is not this page's answers a fresh offer with a `notice`.
     */
    async confirm(token: string, form: Record<string, unknown>): Promise<WithdrawalView> {
      const opened = await open(token);
      if ('kind' in opened) return opened;
      const { p, items } = opened;
      const quoteId = typeof form.quote === 'string' && QUOTE_ID.test(form.quote) ? form.quote : null;
      const done = await withdrawal(p.id);
      if (done) return withdrawnView(p, done, done.quoteId === quoteId ? 'confirmed' : 'already_used');
      if (quoteId === null || !(await deps.withdrawals.isQuoteOf(p.id, quoteId))) return offer(p, items, 'form_invalid');
      try {
        const c = await deps.purchaseService.cancel(principalOf(p), p.id, { quote_id: quoteId });
        const stored = (await deps.ledger.cancellations(p.id)).find((x) => x.id === c.id)!;
        return withdrawnView(p, stored, 'confirmed');
      } catch (err) {
        if (err instanceof AppError && (err.code === 'CANCELLATION_QUOTE_EXPIRED' || err.code === 'CANCELLATION_QUOTE_STALE')) {
          // Another confirmation of this link may have won the race.
          const winner = await withdrawal(p.id);
          if (winner) return withdrawnView(p, winner, winner.quoteId === quoteId ? 'confirmed' : 'already_used');
          return offer(p, items, 'quote_changed');
        }
        return refusalView(p, err);
      }
    },
  };
}

export type WithdrawalService = ReturnType<typeof createWithdrawalService>;
