/**
 * The certificate reads that find what a caller names (issue 6; spec §2.4): the purchases a
 * getCertificates handle resolves to within the caller's scope, and the certificates a
 * verification code (a certificate number, or a proof-of-coverage code) names, with only what
 * the public verification page may show. Reads only: it writes no table.
 */
import type { PurchaseStatus } from '../../workflows/contracts';
import type { PurchaseHandle } from './purchase-handles';
import type { Knex } from 'knex';
import type { Db } from '../db/knex';

/** The purchase a getCertificates call resolves to, with its issuance state. */
export interface CertificatePurchase {
  purchaseId: number;
  rootAccountId: number;
  agentId: number | null;
  buyerIdpUuid: string;
  checkoutSessionId: string | null;
  paymentIntentId: string | null;
  mode: 'live' | 'test';
  status: PurchaseStatus;
  paidAt: Date | null;
  certificatesIssuedAt: Date | null;
  refundedAt: Date | null;
}

/** What the verification page may show: no address, email or price (issue 6). */
export interface VerificationCertificate {
  certificateNumber: string;
  productName: string;
  namedInsuredName: string | null;
  startsAt: Date;
  endsAt: Date;
  timeZone: string;
  testMode: boolean;
  stored: boolean;
  voided: boolean;
  /** When it was voided: its unit's cancellation, or the purchase's full refund; null while in force. */
  voidedAt: Date | null;
  revision: number;
  /** A past version: when, and by which certificate number, it was replaced (null: current). */
  supersededAt: Date | null;
  supersededByNumber: string | null;
  /** Whom it was issued to (the name only: no address on a public page). */
  certificateHolderName: string | null;
}

/** `findInScope` / `findForVerification` over `db` (a transaction or the pool). */
export function createCertificateLookups(db: Db | Knex.Transaction) {
  return {
    /**
     * The purchases `handle` names among those the caller may see (`filter`: root account,
     * teammate unless null, mode, and the buyer when given), newest first, at most `limit`: none,
     * one, or (a payment intent shared by several of the caller's purchases) more. The scope is
     * part of the query, so another account's purchase holding the same payment intent is never
     * counted.
     */
    async findInScope(
      handle: PurchaseHandle,
      filter: { rootAccountId: number; agentId: number | null; mode: 'live' | 'test'; buyerIdpUuid?: string },
      limit: number,
    ): Promise<Array<CertificatePurchase & { createdAt: Date }>> {
      const q = db('purchases as p')
        .join('buyers as b', 'b.id', 'p.buyer_id')
        .where({ 'p.root_account_id': filter.rootAccountId, 'p.mode': filter.mode });
      if ('purchaseId' in handle) q.where('p.id', handle.purchaseId);
      else if ('checkoutSessionId' in handle) q.where('p.checkout_session_id', handle.checkoutSessionId);
      else q.where('p.payment_intent_id', handle.paymentIntent);
      if (filter.agentId !== null) q.where('p.agent_id', filter.agentId);
      if (filter.buyerIdpUuid !== undefined) q.where('b.idp_accnt_uuid', filter.buyerIdpUuid.toLowerCase());
      const rows = await q
        .orderBy('p.id', 'desc')
        .limit(limit)
        .select(
          'p.id',
          'p.root_account_id',
          'p.agent_id',
          'b.idp_accnt_uuid',
          'p.checkout_session_id',
          'p.payment_intent_id',
          'p.mode',
          'p.status',
          'p.paid_at',
          'p.certificates_issued_at',
          'p.refunded_at',
          'p.created_at',
        );
      return rows.map((r) => ({
        purchaseId: r.id,
        rootAccountId: r.root_account_id,
        agentId: r.agent_id,
        buyerIdpUuid: r.idp_accnt_uuid,
        checkoutSessionId: r.checkout_session_id ?? null,
        paymentIntentId: r.payment_intent_id ?? null,
        mode: r.mode,
        status: r.status,
        paidAt: r.paid_at,
        certificatesIssuedAt: r.certificates_issued_at,
        refundedAt: r.refunded_at,
        createdAt: r.created_at,
      }));
    },

    /**
     * The certificates a verification code names: one certificate (any version) for a certificate
     * number, or the current certificates of one product line of one purchase for a
     * proof-of-coverage code.
     */
    async findForVerification(code: string): Promise<VerificationCertificate[]> {
      const base = () =>
        db('certificates as c')
          .join('purchases as p', 'p.id', 'c.purchase_id')
          .join('purchase_items as i', 'i.id', 'c.purchase_item_id')
          .join('covered_units as cu', 'cu.id', 'c.covered_unit_id')
          .join('product_lines as pl', 'pl.id', 'c.product_line_id')
          .orderBy('cu.starts_at')
          .select(
            'c.certificate_number',
            'pl.customer_name',
            db.raw("i.named_insured ->> 'name' as named_insured_name"),
            'cu.starts_at',
            'cu.ends_at',
            'cu.time_zone',
            'p.mode',
            'c.storage_key',
            'p.refunded_at',
            'c.voided_at',
            'c.revision',
            'c.superseded_at',
            'next.certificate_number as superseded_by_number',
            'h.name as holder_name',
          )
          .leftJoin('certificates as next', 'next.id', 'c.superseded_by_id')
          .leftJoin('certificate_holders as h', 'h.id', 'c.certificate_holder_id');
      let rows = await base().where('c.certificate_number', code);
      if (rows.length === 0) {
        const archive = await db('certificate_archives')
          .where({ proof_code: code, kind: 'product' })
          .first('purchase_id', 'product_line_id');
        if (archive)
          rows = await base()
            .where({ 'c.purchase_id': archive.purchase_id, 'c.product_line_id': archive.product_line_id })
            .whereNull('c.superseded_at');
      }
      return rows.map((r) => ({
        certificateNumber: r.certificate_number,
        productName: r.customer_name,
        namedInsuredName: r.named_insured_name,
        startsAt: r.starts_at,
        endsAt: r.ends_at,
        timeZone: r.time_zone,
        testMode: r.mode === 'test',
        stored: r.storage_key !== null,
        voided: r.refunded_at !== null || r.voided_at !== null,
        voidedAt: r.voided_at ?? r.refunded_at ?? null,
        revision: r.revision,
        supersededAt: r.superseded_at ?? null,
        supersededByNumber: r.superseded_by_number ?? null,
        certificateHolderName: r.holder_name ?? null,
      }));
    },
  };
}
