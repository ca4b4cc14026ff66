/**
 * Reading certificates (spec §4.5 getCertificates, §2.4; issue 6 "Reading certificates").
 *
 * `getCertificates(principal, scope, req)`: every certificate of the purchase the request names
 * (exactly one of `purchase_id`, `checkout_session_id`, `payment_intent`), each with a V4 signed
 * download URL valid `urlTtlSeconds` seconds, the per-payment zip URL and the per-product zip
 * URLs with their proof-of-coverage (QR) link; a certificate's `verification_url` carries its
 * signed proof (`?proof=`, issue 50 item 3) as its QR code does. An unpaid purchase (status `unpaid`) or one still
 * issuing (`pending`: its first certificates, or later ones: an added holder's, an endorsement's
 * new versions, until every one and the zips over them are stored; read in one snapshot,
 * `currentSet`) answers with empty lists and its `purchase_status`: the caller retries.
 * A purchase that is unknown, of another account, of another teammate (teammate scope), of the
 * other mode than the key's, or of another buyer than `idp_accnt_uuid` → 404 NOT_FOUND; the
 * scope is part of the lookup, not a check after it.
 *
 * `verify(code)`: what the public verification page shows for a certificate number or a
 * proof-of-coverage code (null when neither): state per certificate and overall, coverage
 * windows, product and named insured, each version as it printed them (a past version keeps its
 * own window after an endorsement moved the unit); nothing else personal.
 */
import { DateTime } from 'luxon';
import type { Principal } from '../api-keys/service';
import type { ObjectStore } from '../storage/object-store';
import type { AccountScope } from '../accounts/scope';
import { verificationUrl } from './certificate-data';
import type { CertificatesRepository } from './repository';
import type { VerificationCertificate } from './lookup-repository';
import type { PurchaseRecord } from '../purchases/purchase-record';
import type { SaleRepository } from '../purchases/sale-repository';
import { handleOf, MAX_PAYMENT_INTENT_CANDIDATES, onePurchase, type PurchaseHandle } from './purchase-handles';
import type { GetCertificatesResponse } from './schemas';

/** Coverage state of a certificate at a moment (issue 6: the verification page's words). */
export type CoverageState = 'valid' | 'not_yet_valid' | 'expired' | 'voided' | 'superseded';

export interface VerificationView {
  code: string;
  kind: 'certificate' | 'proof_of_coverage';
  /** Overall: voided if void; valid if any window covers now; not_yet_valid if one is ahead; else expired. */
  state: CoverageState;
  product_name: string;
  named_insured_name: string | null;
  test_mode: boolean;
  checked_at: string;
  coverage: Array<{
    certificate_number: string;
    starts_at: string;
    ends_at: string;
    time_zone: string;
    starts_local: string;
    ends_local: string;
    state: CoverageState;
    voided_at: string | null;
  }>;
  /** A past version of a certificate: the number of the version that replaced it, and when (else null). */
  superseded_by: string | null;
  superseded_at: string | null;
  /** The certificate's version (1 first); null for a proof of coverage. */
  revision: number | null;
}

export interface CertificateServiceDeps {
  repo: CertificatesRepository;
  /** The purchases domain's read of the purchase a request names (the purchase read model). */
  sales: Pick<SaleRepository, 'findByHandle'>;
  store: ObjectStore;
  publicBaseUrl: string;
  /** Lifetime of signed URLs in seconds (config CERTIFICATE_URL_TTL_SECONDS). */
  urlTtlSeconds: number;
  now?: () => Date;
}

function stateAt(c: VerificationCertificate, now: Date): CoverageState {
  if (c.supersededAt) return 'superseded';
  if (c.voided) return 'voided';
  if (now < c.startsAt) return 'not_yet_valid';
  if (now >= c.endsAt) return 'expired';
  return 'valid';
}

export function createCertificateService(deps: CertificateServiceDeps) {
  const now = deps.now ?? (() => new Date());
  const sign = (key: string, downloadName: string) => deps.store.signedReadUrl(key, { expiresInSeconds: deps.urlTtlSeconds, downloadName });

  /**
   * The purchase `handle` names (as read: `PurchaseRecord`) if the caller may see it: same root
   * account, the scope's teammate (unless root scope), the key's mode, and the buyer when named;
   * all applied in the purchases domain's lookup (`findByHandle`).
   * Throws 404 NOT_FOUND otherwise, the same for every reason, and 409 AMBIGUOUS_PAYMENT_INTENT
   * (with the candidates) when a payment intent names several of the caller's purchases.
   */
  async function purchaseInScope(
    principal: Pick<Principal, 'mode'>,
    scope: AccountScope,
    handle: PurchaseHandle,
    buyerIdpUuid?: string,
  ): Promise<PurchaseRecord> {
    const found = await deps.sales.findByHandle(
      handle,
      {
        rootAccountId: scope.rootAccountId,
        agentId: scope.agentId,
        mode: principal.mode,
        ...(buyerIdpUuid !== undefined ? { buyerIdpUuid } : {}),
      },
      MAX_PAYMENT_INTENT_CANDIDATES,
    );
    return onePurchase(handle, found);
  }

  return {
    purchaseInScope,

    async getCertificates(
      principal: Pick<Principal, 'mode'>,
      scope: AccountScope,
      req: { purchase_id?: number; checkout_session_id?: string; payment_intent?: string; idp_accnt_uuid?: string },
    ): Promise<GetCertificatesResponse> {
      const purchase = await purchaseInScope(principal, scope, handleOf(req), req.idp_accnt_uuid);
      const head = {
        purchase_id: purchase.id,
        checkout_session_id: purchase.checkoutSessionId,
        payment_intent: purchase.paymentIntentId,
        purchase_status: purchase.status,
      };
      const empty = (status: GetCertificatesResponse['status']): GetCertificatesResponse => ({
        ...head,
        status,
        certificate_count: 0,
        urls_expire_at: null,
        certificates: [],
        payment_zip_url: null,
        product_zips: [],
      });
      if (!purchase.paidAt) return empty('unpaid');
      if (!purchase.certificatesIssuedAt) return empty(purchase.refundedAt ? 'voided' : 'pending');

      // One snapshot of the certificates and zips: while any is being issued (a holder's, an
      // endorsement's new versions) the answer is `pending`, never `issued` with part of the set.
      const set = await deps.repo.currentSet(purchase.id);
      if (!set.complete && !purchase.refundedAt) return empty('pending');
      const archives = set.archives;
      const certificates = set.certificates.filter((c) => c.storageKey !== null);
      const expiresAt = new Date(now().getTime() + deps.urlTtlSeconds * 1000);
      const paymentZip = archives.find((a) => a.kind === 'payment');
      const items = await Promise.all(
        certificates.map(async (c) => ({
          certificate_number: c.certificateNumber,
          product_line_id: c.productLineId,
          product_name: c.productName,
          covered_unit_index: c.unitIndex,
          covered_unit_kind: c.unitKind,
          coverage_starts_at: c.startsAt.toISOString(),
          coverage_ends_at: c.endsAt.toISOString(),
          coverage_time_zone: c.timeZone,
          coverage_label: c.localLabel,
          named_insured_name: c.namedInsuredName,
          download_url: await sign(c.storageKey!, `${c.certificateNumber}.pdf`),
          verification_url: verificationUrl(deps.publicBaseUrl, c.certificateNumber, c.proof),
          size_bytes: c.sizeBytes!,
          sha256: c.sha256!,
          voided_at: (c.voidedAt ?? purchase.refundedAt)?.toISOString() ?? null,
          certificate_holder: c.certificateHolderId === null ? null : { id: c.certificateHolderId, name: c.certificateHolderName ?? '' },
          revision: c.revision,
        })),
      );
      const productZips = await Promise.all(
        archives
          .filter((a) => a.kind === 'product')
          .map(async (a) => {
            const certs = certificates.filter((c) => c.productLineId === a.productLineId);
            return {
              product_line_id: a.productLineId!,
              product_name: certs[0]?.productName ?? '',
              certificate_count: certs.length,
              zip_url: await sign(a.storageKey, `certificates-${purchase.id}-product-${a.productLineId}.zip`),
              proof_of_coverage_url: verificationUrl(deps.publicBaseUrl, a.proofCode!),
            };
          }),
      );
      return {
        ...head,
        // Voided: refunded in full, or every certificate voided by cancellations.
        status: purchase.refundedAt || (certificates.length > 0 && certificates.every((c) => c.voidedAt !== null)) ? 'voided' : 'issued',
        certificate_count: items.length,
        urls_expire_at: expiresAt.toISOString(),
        certificates: items,
        payment_zip_url: paymentZip ? await sign(paymentZip.storageKey, `certificates-${purchase.id}.zip`) : null,
        product_zips: productZips,
      };
    },

    async verify(code: string): Promise<VerificationView | null> {
      if (!/^(COI|POC)-[A-Z0-9-]{1,60}$/.test(code)) return null;
      const certs = await deps.repo.findForVerification(code);
      if (certs.length === 0) return null;
      const at = now();
      const states = certs.map((c) => stateAt(c, at));
      const state: CoverageState = states.includes('superseded')
        ? 'superseded'
        : states.includes('voided')
          ? 'voided'
          : states.includes('valid')
            ? 'valid'
            : states.includes('not_yet_valid')
              ? 'not_yet_valid'
              : 'expired';
      const local = (d: Date, zone: string) => DateTime.fromJSDate(d, { zone }).toFormat('yyyy-MM-dd HH:mm ZZZZ');
      return {
        code,
        kind: code.startsWith('POC-') ? 'proof_of_coverage' : 'certificate',
        state,
        product_name: certs[0]!.productName,
        named_insured_name: certs[0]!.namedInsuredName,
        test_mode: certs[0]!.testMode,
        checked_at: at.toISOString(),
        coverage: certs.map((c, i) => ({
          certificate_number: c.certificateNumber,
          starts_at: c.startsAt.toISOString(),
          ends_at: c.endsAt.toISOString(),
          time_zone: c.timeZone,
          starts_local: local(c.startsAt, c.timeZone),
          ends_local: local(c.endsAt, c.timeZone),
          state: states[i]!,
          voided_at: c.voidedAt ? c.voidedAt.toISOString() : null,
        })),
        superseded_by: code.startsWith('COI-') ? (certs[0]!.supersededByNumber ?? null) : null,
        superseded_at: code.startsWith('COI-') ? (certs[0]!.supersededAt?.toISOString() ?? null) : null,
        revision: code.startsWith('COI-') ? certs[0]!.revision : null,
      };
    },
  };
}

export type CertificateService = ReturnType<typeof createCertificateService>;
