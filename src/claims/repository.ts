/**
 * The one writer of the claims tables (migration 20261208000500): `claims`, `claim_events`,
 * `claim_attachments` and `product_claim_settings`.
 *
 * - `file` writes a new claim (`submitted`, change 0 in its history) with its attachments in one
 *   transaction. The open-claim index (one open claim per covered unit and incident day) and the
 *   request key decide duplicates: the answer says which claim already holds the slot instead of
 *   throwing.
 * - `recordChange`, `recordComment` and `recordAcknowledgementOverdue` are the claim workflow's
 *   writes (its activities only): the history event and the claim's columns in one transaction,
 *   keyed by the workflow's change number, so a retried step records its change once. A reopen that
 *   meets another open claim on the same unit and day throws `OpenClaimConflict`.
 * - `overdueAcknowledgements` and `countAcknowledgementOverdue`: claims past their acknowledgement
 *   deadline still submitted, for the operator (`ops stuck`, the worker's gauge).
 * - `partiesOf` and `list` read the product lines' insurer and MGA (the parties that decide claims).
 * - Amounts are integer minor units; instants `Date`s (UTC).
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { dbConstraint, dbErrorKind } from '../db/errors';
import type { ClaimAction, ClaimActor, ClaimStatus } from '../../workflows/claim-contracts';

/** Who filed or answers for the claim: name, email and optional phone. */
export interface Claimant {
  name: string;
  email: string;
  phone: string | null;
}

export interface ClaimRecord {
  id: number;
  rootAccountId: number;
  mode: 'live' | 'test';
  agentId: number | null;
  apiKeyId: number | null;
  purchaseId: number;
  coveredUnitId: number;
  productLineId: number;
  certificateNumber: string | null;
  incidentAt: Date;
  /** The incident's local day in the unit's time zone (YYYY-MM-DD). */
  incidentDay: string;
  claimType: string;
  description: string;
  claimant: Claimant;
  amountClaimedMinor: number;
  currency: string;
  status: ClaimStatus;
  approvedAmountMinor: number | null;
  decisionReason: string | null;
  denialCode: string | null;
  paymentReference: string | null;
  /** The claimant's connected account at the processor (`acct_…`) an approved claim is paid to; null: paid by hand. */
  payoutAccount: string | null;
  /** What has been paid on the claim, minor units. */
  paidAmountMinor: number;
  /** The processor's refusal of the last payout (the claim stays approved), or null. */
  payoutFailure: string | null;
  acknowledgementDueAt: Date;
  acknowledgementOverdueAt: Date | null;
  acknowledgedAt: Date | null;
  decidedAt: Date | null;
  paidAt: Date | null;
  closedAt: Date | null;
  seq: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface ClaimEventRecord {
  seq: number;
  kind: string;
  fromStatus: ClaimStatus | null;
  toStatus: ClaimStatus | null;
  actor: ClaimActor;
  note: string | null;
  data: Record<string, unknown>;
  createdAt: Date;
}

export interface ClaimAttachmentRecord {
  id: number;
  claimId: number;
  fileName: string;
  contentType: string;
  declaredSizeBytes: number;
  storageKey: string;
  status: 'awaiting_upload' | 'received' | 'rejected';
  sizeBytes: number | null;
  rejectionReason: string | null;
  createdAt: Date;
}

/** A new claim as the service decided it (status `submitted`). */
export type NewClaim = Omit<
  ClaimRecord,
  | 'id'
  | 'status'
  | 'approvedAmountMinor'
  | 'decisionReason'
  | 'denialCode'
  | 'paymentReference'
  | 'paidAmountMinor'
  | 'payoutFailure'
  | 'acknowledgementOverdueAt'
  | 'acknowledgedAt'
  | 'decidedAt'
  | 'paidAt'
  | 'closedAt'
  | 'seq'
  | 'createdAt'
  | 'updatedAt'
> & {
  requestKey: string | null;
  /** Who files it, when not the key (`apiKeyId`, the selling key, still owns it): the buyer on their claim page. */
  filedBy?: 'buyer';
};

/** An attachment to write with a claim: its storage key is made from the claim's id by `keyOf`. */
export type NewAttachment = Pick<ClaimAttachmentRecord, 'fileName' | 'contentType' | 'declaredSizeBytes'>;

/** What `file` answers: the new claim, the claim an earlier request with the same key filed, or the open claim holding the unit and day. */
export type FileOutcome = { filed: number } | { sameRequest: number } | { openClaim: number };

/** A product line's claim settings as stored (absent: the defaults). */
export interface StoredClaimSettings {
  claimTypes: string[];
  acknowledgementBusinessDays: number;
}

/** Thrown by a reopen when another claim is open on the same unit and day. */
export class OpenClaimConflict extends Error {
  override name = 'OpenClaimConflict';
  constructor(readonly openClaimId: number | null) {
    super(`another claim${openClaimId ? ` (${openClaimId})` : ''} is open on the same covered unit and day`);
  }
}

/** What one change of the claim workflow writes. */
export interface ClaimChangeRecord {
  claimId: number;
  seq: number;
  action: ClaimAction;
  from: ClaimStatus;
  to: ClaimStatus;
  actor: ClaimActor;
  amountMinor?: number;
  reason?: string;
  reasonCode?: string;
  reference?: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Row = Record<string, any>;

const toClaim = (r: Row): ClaimRecord => ({
  id: r.id,
  rootAccountId: r.root_account_id,
  mode: r.mode,
  agentId: r.agent_id ?? null,
  apiKeyId: r.api_key_id ?? null,
  purchaseId: r.purchase_id,
  coveredUnitId: r.covered_unit_id,
  productLineId: r.product_line_id,
  certificateNumber: r.certificate_number ?? null,
  incidentAt: r.incident_at,
  incidentDay: r.incident_day,
  claimType: r.claim_type,
  description: r.description,
  claimant: { name: r.claimant.name, email: r.claimant.email, phone: r.claimant.phone ?? null },
  amountClaimedMinor: Number(r.amount_claimed_minor),
  currency: r.currency,
  status: r.status,
  approvedAmountMinor: r.approved_amount_minor === null ? null : Number(r.approved_amount_minor),
  decisionReason: r.decision_reason ?? null,
  denialCode: r.denial_code ?? null,
  paymentReference: r.payment_reference ?? null,
  payoutAccount: r.payout_account ?? null,
  paidAmountMinor: Number(r.paid_amount_minor ?? 0),
  payoutFailure: r.payout_failure ?? null,
  acknowledgementDueAt: r.acknowledgement_due_at,
  acknowledgementOverdueAt: r.acknowledgement_overdue_at ?? null,
  acknowledgedAt: r.acknowledged_at ?? null,
  decidedAt: r.decided_at ?? null,
  paidAt: r.paid_at ?? null,
  closedAt: r.closed_at ?? null,
  seq: r.seq,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toEvent = (r: Row): ClaimEventRecord => ({
  seq: r.seq,
  kind: r.kind,
  fromStatus: r.from_status ?? null,
  toStatus: r.to_status ?? null,
  actor: { type: r.actor_type, id: r.actor_id ?? null },
  note: r.note ?? null,
  data: r.data ?? {},
  createdAt: r.created_at,
});

const toAttachment = (r: Row): ClaimAttachmentRecord => ({
  id: r.id,
  claimId: r.claim_id,
  fileName: r.file_name,
  contentType: r.content_type,
  declaredSizeBytes: r.declared_size_bytes,
  storageKey: r.storage_key,
  status: r.status,
  sizeBytes: r.size_bytes ?? null,
  rejectionReason: r.rejection_reason ?? null,
  createdAt: r.created_at,
});

/** The columns an action sets beside the status (instants from the database's clock). */
function columnsOf(c: ClaimChangeRecord, trx: Knex.Transaction): Row {
  const now = trx.raw('now()');
  switch (c.action) {
    case 'acknowledge':
      return { acknowledged_at: now };
    case 'approve':
      return { approved_amount_minor: c.amountMinor, decision_reason: c.reason ?? null, denial_code: null, decided_at: now };
    case 'deny':
      return { approved_amount_minor: null, decision_reason: c.reason ?? null, denial_code: c.reasonCode ?? null, decided_at: now };
    case 'record_payment':
      return {
        payment_reference: c.reference ?? null,
        paid_at: now,
        paid_amount_minor: trx.raw('approved_amount_minor'),
        payout_failure: null,
      };
    case 'close':
      return { closed_at: now };
    case 'reopen':
      return { closed_at: null };
    default:
      return {};
  }
}

export function createClaimsRepository(db: Db) {
  /** Inserts history event `seq` of a claim unless it is there (a retried step): true when this call inserted it. */
  async function insertEvent(
    trx: Knex.Transaction,
    e: {
      claimId: number;
      seq: number;
      kind: string;
      from?: ClaimStatus | null;
      to?: ClaimStatus | null;
      actor: ClaimActor;
      note?: string | null;
      data?: Row;
    },
  ): Promise<boolean> {
    const rows = await trx('claim_events')
      .insert({
        claim_id: e.claimId,
        seq: e.seq,
        kind: e.kind,
        from_status: e.from ?? null,
        to_status: e.to ?? null,
        actor_type: e.actor.type,
        actor_id: e.actor.id,
        note: e.note ?? null,
        data: JSON.stringify(e.data ?? {}),
      })
      .onConflict(['claim_id', 'seq'])
      .ignore()
      .returning('id');
    return rows.length > 0;
  }

  async function openClaimOn(coveredUnitId: number, day: string): Promise<number | null> {
    const row = await db('claims').where({ covered_unit_id: coveredUnitId, incident_day: day }).whereNot('status', 'closed').first('id');
    return row ? (row.id as number) : null;
  }
  async function find(claimId: number): Promise<ClaimRecord | undefined> {
    const r = await db('claims').where({ id: claimId }).first();
    return r ? toClaim(r) : undefined;
  }

  return {
    /**
     * Writes a new claim with its history's first event (`submitted`, change 0) and its attachments
     * (`keyOf(claimId, index)` naming each one's storage key), in one transaction. Answers the new
     * claim's id; or, writing nothing, the claim an earlier request with the same `requestKey` filed,
     * or the open claim already on the same covered unit and incident day.
     */
    async file(
      claim: NewClaim,
      attachments: NewAttachment[],
      keyOf: (claimId: number, index: number, a: NewAttachment) => string,
    ): Promise<FileOutcome> {
      try {
        return await db.transaction(async (trx) => {
          const [row] = await trx('claims')
            .insert({
              root_account_id: claim.rootAccountId,
              mode: claim.mode,
              agent_id: claim.agentId,
              api_key_id: claim.apiKeyId,
              purchase_id: claim.purchaseId,
              covered_unit_id: claim.coveredUnitId,
              product_line_id: claim.productLineId,
              certificate_number: claim.certificateNumber,
              incident_at: claim.incidentAt,
              incident_day: claim.incidentDay,
              claim_type: claim.claimType,
              description: claim.description,
              claimant: JSON.stringify(claim.claimant),
              amount_claimed_minor: claim.amountClaimedMinor,
              currency: claim.currency,
              acknowledgement_due_at: claim.acknowledgementDueAt,
              payout_account: claim.payoutAccount,
              request_key: claim.requestKey,
            })
            .returning('id');
          const id = row.id as number;
          await insertEvent(trx, {
            claimId: id,
            seq: 0,
            kind: 'submitted',
            to: 'submitted',
            actor:
              claim.filedBy === 'buyer'
                ? { type: 'buyer', id: null }
                : { type: 'api_key', id: claim.apiKeyId === null ? null : String(claim.apiKeyId) },
            data: { amount_claimed: claim.amountClaimedMinor, currency: claim.currency, claim_type: claim.claimType },
          });
          if (attachments.length)
            await trx('claim_attachments').insert(
              attachments.map((a, i) => ({
                claim_id: id,
                file_name: a.fileName,
                content_type: a.contentType,
                declared_size_bytes: a.declaredSizeBytes,
                storage_key: keyOf(id, i, a),
              })),
            );
          return { filed: id };
        });
      } catch (err) {
        if (dbErrorKind(err) !== 'unique') throw err;
        const constraint = dbConstraint(err);
        if (constraint === 'claims_request_key_unique' && claim.requestKey) {
          const same = await db('claims').where({ request_key: claim.requestKey }).first('id');
          if (same) return { sameRequest: same.id as number };
        }
        const open = await openClaimOn(claim.coveredUnitId, claim.incidentDay);
        if (open !== null) return { openClaim: open };
        throw err;
      }
    },

    /** The open (not closed) claim on covered unit `coveredUnitId` and incident day `day`, or null. */
    openClaimOn,

    find,

    /** The insurer and MGA (root account ids, null when none) product line `productLineId` names. */
    async partiesOf(productLineId: number): Promise<{ insurer: number | null; mga: number | null }> {
      const r = await db('product_lines').where({ id: productLineId }).first('insurer_root_account_id', 'mga_root_account_id');
      return { insurer: r?.insurer_root_account_id ?? null, mga: r?.mga_root_account_id ?? null };
    },

    /**
     * A page of the claims of `mode` an account sees, newest first: for an insurer or MGA
     * (`as: 'party'`) those on products naming it; for an agency those it owns (`agentId`: a teammate's). `status` filters. With the total.
     */
    async list(
      who: { rootAccountId: number; mode: 'live' | 'test'; as: 'party' | 'agency' },
      page: { status?: ClaimStatus; agentId?: number | null; limit: number; offset: number },
    ): Promise<{ claims: ClaimRecord[]; total: number }> {
      const q = db('claims as c').where('c.mode', who.mode);
      if (who.as === 'agency') q.where('c.root_account_id', who.rootAccountId);
      else
        q.join('product_lines as pl', 'pl.id', 'c.product_line_id').andWhere((w) =>
          w.where('pl.insurer_root_account_id', who.rootAccountId).orWhere('pl.mga_root_account_id', who.rootAccountId),
        );
      if (page.status) q.where('c.status', page.status);
      if (page.agentId) q.where('c.agent_id', page.agentId);
      const [rows, [count]] = await Promise.all([
        q.clone().select('c.*').orderBy('c.id', 'desc').limit(page.limit).offset(page.offset),
        q.clone().count<{ n: string }[]>({ n: '*' }),
      ]);
      return { claims: rows.map(toClaim), total: Number(count?.n ?? 0) };
    },

    /**
     * Claims still `submitted` past their acknowledgement deadline (`npm run ops -- stuck`), oldest
     * deadline first, as the operator's rows: the purchase's id, agency and mode, the deadline as
     * `since`, and the claim in `reason`; of root account `rootAccountId` when given.
     */
    async overdueAcknowledgements(limit = 500, rootAccountId?: number) {
      const q = db('claims as c')
        .join('root_accounts as a', 'a.id', 'c.root_account_id')
        .where('c.status', 'submitted')
        .where('c.acknowledgement_due_at', '<', db.fn.now())
        .orderBy('c.acknowledgement_due_at')
        .limit(limit)
        .select('c.id as claim_id', 'c.purchase_id', 'c.root_account_id', 'a.name as agency', 'c.mode', 'c.acknowledgement_due_at');
      if (rootAccountId !== undefined) q.where('c.root_account_id', rootAccountId);
      return (await q).map((r: Row) => ({
        id: r.purchase_id as number,
        rootAccountId: r.root_account_id as number,
        agency: r.agency as string,
        mode: r.mode as string,
        status: 'submitted',
        kind: 'claim_acknowledgement_overdue' as const,
        claimId: r.claim_id as number,
        since: r.acknowledgement_due_at as Date,
        reason: `claim ${r.claim_id} not acknowledged by its deadline`,
      }));
    },

    /** How many claims of each mode are still `submitted` past their acknowledgement deadline (`claims_acknowledgement_overdue`). */
    async countAcknowledgementOverdue(): Promise<Record<'live' | 'test', number>> {
      const rows = await db('claims')
        .where('status', 'submitted')
        .where('acknowledgement_due_at', '<', db.fn.now())
        .groupBy('mode')
        .select('mode', db.raw('count(*)::int as n'));
      const counts = { live: 0, test: 0 };
      for (const r of rows as Array<{ mode: 'live' | 'test'; n: number }>) counts[r.mode] = r.n;
      return counts;
    },

    /** The claims of purchase `purchaseId`, newest first. */
    async listForPurchase(purchaseId: number): Promise<ClaimRecord[]> {
      return (await db('claims').where({ purchase_id: purchaseId }).orderBy('id', 'desc')).map(toClaim);
    },

    /** The claim's history in order (change 0 first). */
    async events(claimId: number): Promise<ClaimEventRecord[]> {
      return (await db('claim_events').where({ claim_id: claimId }).orderBy('seq')).map(toEvent);
    },

    /** The claim's attachments in the order declared. */
    async attachments(claimId: number): Promise<ClaimAttachmentRecord[]> {
      return (await db('claim_attachments').where({ claim_id: claimId }).orderBy('id')).map(toAttachment);
    },

    /** Records what storage holds for an attachment awaiting upload: `received` (with its size) or `rejected` (with why). */
    async settleAttachment(
      attachmentId: number,
      outcome: { status: 'received'; sizeBytes: number } | { status: 'rejected'; sizeBytes: number | null; reason: string },
    ): Promise<void> {
      await db('claim_attachments')
        .where({ id: attachmentId, status: 'awaiting_upload' })
        .update({
          status: outcome.status,
          size_bytes: outcome.sizeBytes,
          rejection_reason: outcome.status === 'rejected' ? outcome.reason : null,
          checked_at: db.fn.now(),
        });
    },

    /**
     * The claim workflow's change `c`: its history event and the claim's status and columns, in one
     * transaction; a change already recorded (a retried step) writes nothing. @throws
     * OpenClaimConflict when a reopen meets another open claim on the same unit and day.
     */
    async recordChange(c: ClaimChangeRecord): Promise<void> {
      try {
        await db.transaction(async (trx) => {
          const data: Row = {};
          if (c.amountMinor !== undefined) data.amount = c.amountMinor;
          if (c.reasonCode !== undefined) data.reason_code = c.reasonCode;
          if (c.reference !== undefined) data.reference = c.reference;
          const inserted = await insertEvent(trx, {
            claimId: c.claimId,
            seq: c.seq,
            kind: c.to,
            from: c.from,
            to: c.to,
            actor: c.actor,
            note: c.reason ?? null,
            data,
          });
          if (!inserted) return;
          await trx('claims')
            .where({ id: c.claimId })
            .update({ status: c.to, seq: c.seq, updated_at: trx.fn.now(), ...columnsOf(c, trx) });
        });
      } catch (err) {
        if (dbErrorKind(err) === 'unique' && dbConstraint(err) === 'claims_open_unit_day') {
          const claim = await find(c.claimId);
          throw new OpenClaimConflict(claim ? await openClaimOn(claim.coveredUnitId, claim.incidentDay) : null);
        }
        throw err;
      }
    },

    /** The processor refused the claim's payout for good (change `seq`): recorded in its history and on the claim, which stays approved; once. */
    async recordPayoutFailure(c: { claimId: number; seq: number; reason: string }): Promise<void> {
      await db.transaction(async (trx) => {
        if (
          await insertEvent(trx, {
            claimId: c.claimId,
            seq: c.seq,
            kind: 'payment_failed',
            actor: { type: 'system', id: null },
            note: c.reason,
          })
        )
          await trx('claims').where({ id: c.claimId }).update({ seq: c.seq, payout_failure: c.reason, updated_at: trx.fn.now() });
      });
    },

    /** A comment in the claim's history (change `seq`); once. */
    async recordComment(c: { claimId: number; seq: number; actor: ClaimActor; text: string }): Promise<void> {
      await db.transaction(async (trx) => {
        if (await insertEvent(trx, { claimId: c.claimId, seq: c.seq, kind: 'comment', actor: c.actor, note: c.text }))
          await trx('claims').where({ id: c.claimId }).update({ seq: c.seq, updated_at: trx.fn.now() });
      });
    },

    /** The acknowledgement deadline passed with the claim still `submitted` (change `seq`); once. */
    async recordAcknowledgementOverdue(c: { claimId: number; seq: number }): Promise<void> {
      await db.transaction(async (trx) => {
        if (
          await insertEvent(trx, { claimId: c.claimId, seq: c.seq, kind: 'acknowledgement_overdue', actor: { type: 'system', id: null } })
        )
          await trx('claims')
            .where({ id: c.claimId })
            .update({ seq: c.seq, acknowledgement_overdue_at: trx.fn.now(), updated_at: trx.fn.now() });
      });
    },

    /** Stored claim settings of `productLineIds` (products without a row are absent). */
    async settings(productLineIds: number[]): Promise<Map<number, StoredClaimSettings>> {
      const rows = await db('product_claim_settings').whereIn('product_line_id', productLineIds);
      return new Map(
        rows.map((r: Row) => [
          r.product_line_id as number,
          { claimTypes: r.claim_types, acknowledgementBusinessDays: r.acknowledgement_business_days },
        ]),
      );
    },

    /** Stores a product line's claim settings (replacing its earlier ones). */
    async saveSettings(productLineId: number, s: StoredClaimSettings): Promise<void> {
      await db('product_claim_settings')
        .insert({
          product_line_id: productLineId,
          claim_types: JSON.stringify(s.claimTypes),
          acknowledgement_business_days: s.acknowledgementBusinessDays,
        })
        .onConflict('product_line_id')
        .merge({
          claim_types: JSON.stringify(s.claimTypes),
          acknowledgement_business_days: s.acknowledgementBusinessDays,
          updated_at: db.fn.now(),
        });
    },
  };
}

export type ClaimsRepository = ReturnType<typeof createClaimsRepository>;
