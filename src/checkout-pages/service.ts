/**
 * What the buyer's return pages show (`GET /checkout/complete`, `GET /checkout/cancelled`): one
 * purchase, named by its id and opened by its return token, with its live status and, once
 * issued, each certificate number with its public verification link and each product's
 * proof-of-coverage link.
 *
 * The token is compared with `purchases.return_token` in constant time. A malformed query, an
 * unknown purchase and a wrong token all give null, so the routes answer one and the same 404
 * and purchase ids cannot be probed. The view holds nothing personal beyond the named insured
 * name the verification page already shows: no buyer email, no download URLs, no amounts. Once
 * paid it also carries the buyer's withdrawal link (src/withdrawals/) when the terms allow it.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { PurchaseStatus } from '../../workflows/contracts';
import type { PurchaseRecord } from '../purchases/purchase-record';
import type { SaleRepository } from '../purchases/sale-repository';
import type { CertificatesRepository } from '../certificates/repository';
import { verificationUrl } from '../certificates/certificate-data';
import { COMPLETE_PAGE_PATH, returnPageUrl } from '../purchases/return-urls';

/** What the buyer is told, from the purchase status. */
export type ReturnPageState = 'awaiting_payment' | 'issuing' | 'issued' | 'refunded' | 'expired' | 'failed';

/** Seconds between refreshes while the state can still move on (HTML meta refresh; JSON hint). */
export const REFRESH_SECONDS = 3;

const STATE_OF: Record<PurchaseStatus, ReturnPageState> = {
  quoted: 'awaiting_payment',
  awaiting_payment: 'awaiting_payment',
  paid: 'issuing',
  awaiting_certificates: 'issuing',
  issued: 'issued',
  partly_cancelled: 'issued',
  cancelled: 'refunded',
  refunded: 'refunded',
  expired: 'expired',
  failed: 'failed',
};

/** States after which the page stops refreshing itself. */
const FINAL: ReadonlySet<ReturnPageState> = new Set(['issued', 'refunded', 'expired', 'failed']);

/** The JSON view of a return page (also what the HTML is rendered from). */
export interface ReturnPageView {
  purchase_id: number;
  state: ReturnPageState;
  /** The purchase's own status (`purchases.status`). */
  purchase_status: PurchaseStatus;
  /** True once the state no longer changes by itself (the HTML stops refreshing). */
  final: boolean;
  /** Seconds until asking again, or null when final. */
  refresh_after_seconds: number | null;
  test_mode: boolean;
  paid_at: string | null;
  certificates_issued_at: string | null;
  /** Each certificate with its public verification link (listed once issued). */
  certificates: Array<{
    certificate_number: string;
    product_name: string;
    coverage_label: string;
    named_insured_name: string | null;
    verification_url: string;
  }>;
  /** One proof-of-coverage link per product (listed once issued). */
  proofs_of_coverage: Array<{ product_name: string; certificate_count: number; proof_of_coverage_url: string }>;
  /** The buyer's online withdrawal page (signed link) once paid, when every item's terms allow it; else null. */
  withdrawal_url: string | null;
  checked_at: string;
}

export const PURCHASE_ID_PATTERN = /^[1-9][0-9]{0,9}$/;
/** The highest purchase id PostgreSQL's `integer` holds; larger ids are refused before the query. */
const MAX_ID = 2_147_483_647;
/** New tokens are 43 base64url characters, tokens of older purchases 64 hex characters. */
export const RETURN_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43,64}$/;

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** True when `given` equals `stored`, in time independent of where they differ (and of their lengths). */
export function tokensMatch(stored: string, given: string): boolean {
  return timingSafeEqual(digest(stored), digest(given));
}

/** `purchase` and `token` of a query string when both are well formed (a repeated one is not), else null. */
export function parseReturnQuery(query: Record<string, string | string[] | undefined>): { purchaseId: number; token: string } | null {
  const { purchase, token } = query;
  if (typeof purchase !== 'string' || typeof token !== 'string') return null;
  if (!PURCHASE_ID_PATTERN.test(purchase) || Number(purchase) > MAX_ID || !RETURN_TOKEN_PATTERN.test(token)) return null;
  return { purchaseId: Number(purchase), token };
}

export function createCheckoutPageService(deps: {
  sales: Pick<SaleRepository, 'findById'>;
  certificates: Pick<CertificatesRepository, 'listForPurchase' | 'archives'>;
  publicBaseUrl: string;
  /** The purchase's withdrawal link when it offers one (src/withdrawals/links.ts); none without. */
  withdrawalUrlOf?: (p: PurchaseRecord) => Promise<string | null>;
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());
  return {
    /** The complete page's URL of a purchase (the cancelled page links to it). */
    completePageUrl(purchaseId: number, token: string): string {
      return returnPageUrl(deps.publicBaseUrl, COMPLETE_PAGE_PATH, purchaseId, token);
    },

    /** The view of the purchase the query names and opens, or null (one answer for every failure). */
    async view(query: Record<string, string | string[] | undefined>): Promise<ReturnPageView | null> {
      const parsed = parseReturnQuery(query);
      if (!parsed) return null;
      const purchase = await deps.sales.findById(parsed.purchaseId);
      if (!purchase?.returnToken || !tokensMatch(purchase.returnToken, parsed.token)) return null;

      const state = STATE_OF[purchase.status] ?? 'awaiting_payment';
      const final = FINAL.has(state);
      const issued = purchase.certificatesIssuedAt !== null;
      const [certificates, archives, withdrawalUrl] = await Promise.all([
        issued ? deps.certificates.listForPurchase(purchase.id) : [],
        issued ? deps.certificates.archives(purchase.id) : [],
        deps.withdrawalUrlOf ? deps.withdrawalUrlOf(purchase) : null,
      ]);
      return {
        purchase_id: purchase.id,
        state,
        purchase_status: purchase.status,
        final,
        refresh_after_seconds: final ? null : REFRESH_SECONDS,
        test_mode: purchase.mode === 'test',
        paid_at: purchase.paidAt?.toISOString() ?? null,
        certificates_issued_at: purchase.certificatesIssuedAt?.toISOString() ?? null,
        certificates: certificates.map((c) => ({
          certificate_number: c.certificateNumber,
          product_name: c.productName,
          coverage_label: c.localLabel,
          named_insured_name: c.namedInsuredName,
          verification_url: verificationUrl(deps.publicBaseUrl, c.certificateNumber, c.proof),
        })),
        proofs_of_coverage: archives
          .filter((a) => a.kind === 'product' && a.proofCode)
          .map((a) => {
            const certs = certificates.filter((c) => c.productLineId === a.productLineId);
            return {
              product_name: certs[0]?.productName ?? '',
              certificate_count: certs.length,
              proof_of_coverage_url: verificationUrl(deps.publicBaseUrl, a.proofCode!),
            };
          }),
        withdrawal_url: withdrawalUrl,
        checked_at: now().toISOString(),
      };
    },
  };
}

export type CheckoutPageService = ReturnType<typeof createCheckoutPageService>;
