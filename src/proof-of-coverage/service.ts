/**
 * teamEmailProofofCoverage (spec §4.5; issue 7): records one `proof_of_coverage_emails` row per
 * distinct recipient and starts the durable workflow that sends them (SMTP, retried, never sent
 * twice; see activities/proof-email.ts). Answers once the sends are queued, not sent.
 *
 * The purchase is named like getCertificates names it (exactly one of purchase_id,
 * checkout_session_id, payment_intent). Errors (bare, §7.2): 404 NOT_FOUND for a purchase outside
 * the caller's scope (as getCertificates); 409 AMBIGUOUS_PAYMENT_INTENT for a payment intent of
 * several of the caller's purchases; 400 INVALID_REQUEST while the certificates are not issued
 * yet (retry with backoff), after a refund voided them, or when cancellations voided every one. The
 * email leaves out the certificates a cancellation voided (see activities/proof-email.ts). With
 * `certificate_holder_id` it carries only that holder's certificates (404 NOT_FOUND for a holder
 * not active on the purchase; 400 INVALID_REQUEST when none of its certificates is in force).
 */
import type { Principal } from '../api-keys/service';
import type { ProofOfCoverageEmailsRepository } from './repository';
import { AppError, notFound } from '../shared/errors';
import type { AccountScope } from '../accounts/scope';
import type { CertificateService } from '../certificates/service';
import type { CertificatesRepository } from '../certificates/repository';
import { handleOf } from '../certificates/purchase-handles';
import type { CertificateHoldersRepository } from '../certificate-holders/repository';
import type { EmailProofResponse, ProofOfCoverageEmail } from './schemas';

export function createProofOfCoverageService(deps: {
  /** The one writer of the email rows. */
  emails: Pick<ProofOfCoverageEmailsRepository, 'queue' | 'findInScope'>;
  certificates: Pick<CertificateService, 'purchaseInScope'>;
  /** Reads which certificates are still in force (the certificates domain's table). */
  certificateRows: Pick<CertificatesRepository, 'countInForce' | 'listForPurchase'>;
  /** Finds a named certificate holder of the purchase. */
  holders: Pick<CertificateHoldersRepository, 'find'>;
  startSending: (emailIds: number[]) => Promise<void>;
}) {
  return {
    /**
     * One proof-of-coverage email (`email_id` of teamEmailProofofCoverage) and how far it got, when
     * its purchase is the key's (root account, mode, and teammate when the key has one).
     * Errors: NOT_FOUND (404) otherwise, whether or not it exists elsewhere.
     */
    async get(principal: Principal, emailId: number): Promise<ProofOfCoverageEmail> {
      const e = await deps.emails.findInScope(emailId, {
        rootAccountId: principal.rootAccountId,
        mode: principal.mode,
        agentId: principal.agentId,
      });
      if (!e) throw notFound('proof_of_coverage_email', emailId);
      return {
        object: 'proof_of_coverage_email',
        id: e.id,
        purchase_id: e.purchaseId,
        to: e.recipient,
        status: e.status,
        delivery: e.delivery,
        attempts: e.attempts,
        certificate_holder_id: e.certificateHolderId,
        failure_reason: e.lastError,
        created_at: e.createdAt.toISOString(),
        sent_at: e.sentAt?.toISOString() ?? null,
      };
    },

    async email(
      principal: Principal,
      scope: AccountScope,
      req: {
        purchase_id?: number;
        checkout_session_id?: string;
        payment_intent?: string;
        email_addresses: string[];
        note?: string;
        idp_accnt_uuid?: string;
        certificate_holder_id?: number;
      },
    ): Promise<EmailProofResponse> {
      const purchase = await deps.certificates.purchaseInScope(principal, scope, handleOf(req), req.idp_accnt_uuid);
      if (purchase.refundedAt)
        throw new AppError('INVALID_REQUEST', 'This purchase was refunded; its certificates are void and cannot be sent');
      if (!purchase.certificatesIssuedAt) {
        throw new AppError(
          'INVALID_REQUEST',
          'The certificates of this payment are not issued yet; retry with backoff (getCertificates says when they are)',
        );
      }
      if ((await deps.certificateRows.countInForce(purchase.id)) === 0)
        throw new AppError('INVALID_REQUEST', 'Every certificate of this purchase was voided by a cancellation: there is nothing to send');
      if (req.certificate_holder_id !== undefined) {
        const holder = await deps.holders.find(purchase.id, req.certificate_holder_id);
        if (!holder || holder.removedAt)
          throw new AppError('NOT_FOUND', `No active certificate holder ${req.certificate_holder_id} on this purchase`);
        const mine = (await deps.certificateRows.listForPurchase(purchase.id)).filter(
          (c) => c.certificateHolderId === holder.id && c.voidedAt === null,
        );
        if (mine.length === 0)
          throw new AppError('INVALID_REQUEST', `Certificate holder ${holder.id} has no certificate in force: there is nothing to send`);
      }
      const seen = new Set<string>();
      const recipients = req.email_addresses.filter((a) => !seen.has(a.toLowerCase()) && seen.add(a.toLowerCase()));
      const rows = await deps.emails.queue(
        recipients.map((recipient) => ({
          purchaseId: purchase.id,
          apiKeyId: principal.apiKeyId,
          requestedByAgentId: scope.agentId,
          recipient,
          note: req.note || null,
          certificateHolderId: req.certificate_holder_id ?? null,
        })),
      );
      await deps.startSending(rows.map((r) => r.id));
      return {
        purchase_id: purchase.id,
        checkout_session_id: purchase.checkoutSessionId,
        payment_intent: purchase.paymentIntentId,
        emails: rows.map((r) => ({ email_id: r.id, to: r.recipient, status: 'queued' as const })),
      };
    },
  };
}

export type ProofOfCoverageService = ReturnType<typeof createProofOfCoverageService>;
