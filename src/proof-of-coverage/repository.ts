/**
 * The one writer of `proof_of_coverage_emails`: one row per recipient of a teamEmailProofofCoverage
 * request, `queued` until the sending workflow marks it `sent` (with its delivery, attachments or
 * links, and the relay's message id) or `failed` (every attempt failed; a sent row stays sent).
 * `certificate_holder_id` set: the email carries that holder's certificates only.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import type { PurchaseStatus } from '../../workflows/contracts';

/** A row to send, with what the email needs of its purchase and agency. */
export interface ProofEmailToSend {
  id: number;
  purchaseId: number;
  recipient: string;
  note: string | null;
  status: 'queued' | 'sent' | 'failed';
  delivery: 'attachments' | 'links' | null;
  /** Only this holder's certificates (null: every certificate in force). */
  certificateHolderId: number | null;
  mode: 'live' | 'test';
  purchaseStatus: PurchaseStatus;
  buyerEmail: string | null;
  agencyName: string;
}

/** One email's progress, as `GET /api/v1/proof_of_coverage_emails/{id}` answers it. */
export interface ProofEmailStatus {
  id: number;
  purchaseId: number;
  recipient: string;
  status: 'queued' | 'sent' | 'failed';
  delivery: 'attachments' | 'links' | null;
  attempts: number;
  certificateHolderId: number | null;
  lastError: string | null;
  createdAt: Date;
  sentAt: Date | null;
}

export function createProofOfCoverageEmailsRepository(db: Db) {
  return {
    /**
     * Email `emailId` when its purchase lies in `scope` (the key's root account and mode, and its
     * teammate when the key has one); undefined otherwise, whether or not it exists elsewhere.
     */
    async findInScope(
      emailId: number,
      scope: { rootAccountId: number; mode: 'live' | 'test'; agentId: number | null },
    ): Promise<ProofEmailStatus | undefined> {
      const q = db('proof_of_coverage_emails as e')
        .join('purchases as p', 'p.id', 'e.purchase_id')
        .where({ 'e.id': emailId, 'p.root_account_id': scope.rootAccountId, 'p.mode': scope.mode });
      if (scope.agentId !== null) q.where('p.agent_id', scope.agentId);
      const r = await q.first(
        'e.id',
        'e.purchase_id',
        'e.recipient',
        'e.status',
        'e.delivery',
        'e.attempts',
        'e.certificate_holder_id',
        'e.last_error',
        'e.created_at',
        'e.sent_at',
      );
      if (!r) return undefined;
      return {
        id: r.id,
        purchaseId: r.purchase_id,
        recipient: r.recipient,
        status: r.status,
        delivery: r.delivery ?? null,
        attempts: r.attempts,
        certificateHolderId: r.certificate_holder_id ?? null,
        lastError: r.last_error ?? null,
        createdAt: r.created_at,
        sentAt: r.sent_at ?? null,
      };
    },

    /** Queues one row per recipient (in order); answers their ids. */
    async queue(
      rows: Array<{
        purchaseId: number;
        apiKeyId: number;
        requestedByAgentId: number | null;
        recipient: string;
        note: string | null;
        certificateHolderId: number | null;
      }>,
    ): Promise<Array<{ id: number; recipient: string }>> {
      return db('proof_of_coverage_emails')
        .insert(
          rows.map((r) => ({
            purchase_id: r.purchaseId,
            api_key_id: r.apiKeyId,
            requested_by_agent_id: r.requestedByAgentId,
            recipient: r.recipient,
            note: r.note,
            certificate_holder_id: r.certificateHolderId,
          })),
        )
        .returning(['id', 'recipient']);
    },

    /**
     * The buyer's email after payment of purchase `purchaseId` (issue 48, item 9): queues it once
     * (`after_payment`, at most one row per purchase) when the purchase is issued, has a buyer email
     * and its account's `send_buyer_email_after_payment` is on; answers the row (new, or the one
     * queued before, whatever its status now) or null when none is to be sent.
     */
    async queueAfterPayment(purchaseId: number): Promise<{ id: number; status: 'queued' | 'sent' | 'failed' } | null> {
      const earlier = () => db('proof_of_coverage_emails').where({ purchase_id: purchaseId, after_payment: true }).first('id', 'status');
      const before = await earlier();
      if (before) return before;
      const p = await db('purchases as p')
        .join('root_accounts as ra', 'ra.id', 'p.root_account_id')
        .where('p.id', purchaseId)
        .first('p.buyer_email', 'p.status', 'p.certificates_issued_at', 'ra.send_buyer_email_after_payment');
      if (!p || !p.send_buyer_email_after_payment || !p.buyer_email || !p.certificates_issued_at || p.status === 'refunded') return null;
      await db.raw(
        `insert into proof_of_coverage_emails (purchase_id, api_key_id, requested_by_agent_id, recipient, after_payment)
         values (?, null, null, ?, true)
         on conflict (purchase_id) where after_payment do nothing`,
        [purchaseId, p.buyer_email],
      );
      return (await earlier()) ?? null;
    },

    async toSend(emailId: number): Promise<ProofEmailToSend | undefined> {
      const row = await db('proof_of_coverage_emails as e')
        .join('purchases as p', 'p.id', 'e.purchase_id')
        .join('root_accounts as ra', 'ra.id', 'p.root_account_id')
        .where('e.id', emailId)
        .first(
          'e.id',
          'e.purchase_id',
          'e.recipient',
          'e.note',
          'e.status',
          'e.delivery',
          'e.certificate_holder_id',
          'p.mode',
          'p.status as purchase_status',
          'p.buyer_email',
          'ra.name as agency_name',
        );
      if (!row) return undefined;
      return {
        id: row.id,
        purchaseId: row.purchase_id,
        recipient: row.recipient,
        note: row.note ?? null,
        status: row.status,
        delivery: row.delivery ?? null,
        certificateHolderId: row.certificate_holder_id ?? null,
        mode: row.mode,
        purchaseStatus: row.purchase_status,
        buyerEmail: row.buyer_email ?? null,
        agencyName: row.agency_name,
      };
    },

    async countAttempt(emailId: number): Promise<void> {
      await db('proof_of_coverage_emails').where({ id: emailId }).increment('attempts', 1);
    },

    async markSent(emailId: number, sent: { delivery: 'attachments' | 'links'; messageId: string }): Promise<void> {
      await db('proof_of_coverage_emails')
        .where({ id: emailId })
        .update({ status: 'sent', delivery: sent.delivery, message_id: sent.messageId, sent_at: db.fn.now(), last_error: null });
    },

    /** Records that every attempt failed (a sent row stays sent). */
    async markFailed(emailId: number, reason: string): Promise<void> {
      await db('proof_of_coverage_emails')
        .where({ id: emailId })
        .whereNot('status', 'sent')
        .update({ status: 'failed', last_error: reason.slice(0, 2000) });
    },

    /**
     * A buyer's erasure on purchases `purchaseIds`, in `trx`: their proof-of-coverage emails sent to any
     * of `emails` (compared case-insensitively) are recorded as sent to `placeholder` instead.
     */
    async eraseRecipient(trx: Knex.Transaction, purchaseIds: number[], emails: string[], placeholder: string): Promise<void> {
      await trx('proof_of_coverage_emails')
        .whereIn('purchase_id', purchaseIds)
        .whereRaw(`lower(recipient) in (${emails.map(() => 'lower(?)').join(', ')})`, emails)
        .update({ recipient: placeholder });
    },
  };
}

export type ProofOfCoverageEmailsRepository = ReturnType<typeof createProofOfCoverageEmailsRepository>;
