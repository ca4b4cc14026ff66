/**
 * What an operator must look at (`npm run ops -- stuck`, the worker's gauges): purchases stuck
 * on their way (awaiting payment past the deadline, paid without certificates, failed lately) and
 * cancellations whose refund was refused or is pending too long. Reads only (`purchases` and
 * `policy_transactions` with their agency); their writers are ./sale-repository and
 * ./ledger-repository.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';

/** What an operator reads of one thing that needs a look: which (its purchase's id), whose, its state and since when, and why. */
interface StuckRow {
  id: number;
  rootAccountId: number;
  agency: string;
  mode: string;
  status: string;
  since: Date | null;
  reason: string | null;
}

/** The operator's reads over `db`: stuck purchases and cancellations, and their counts by mode. */
export function createAttentionRepository(db: Db | Knex.Transaction) {
  return {
    /**
     * Purchases an operator should look at (`npm run ops -- stuck`): awaiting payment more than
     * `graceSeconds` past their checkout deadline (the workflow should have ended them), paid more
     * than `graceSeconds` ago without certificates (refunded aside), and failed within the last
     * `failedWithinSeconds` (a failure is final, so an older one has had its look); oldest first,
     * at most `limit` of each kind, with their agency; only `rootAccountId`'s when given.
     */
    async stuck(
      graceSeconds: number,
      limit = 500,
      failedWithinSeconds = 72 * 3600,
      rootAccountId?: number,
    ): Promise<Array<StuckRow & { kind: 'awaiting_payment_past_deadline' | 'paid_without_certificates' | 'failed' }>> {
      const base = () => {
        const q = db('purchases as p')
          .join('root_accounts as a', 'a.id', 'p.root_account_id')
          .select(
            'p.id',
            'p.root_account_id',
            'a.name as agency',
            'p.mode',
            'p.status',
            'p.failure_reason',
            'p.checkout_expires_at',
            'p.paid_at',
            'p.failed_at',
          );
        return rootAccountId === undefined ? q : q.where('p.root_account_id', rootAccountId);
      };
      const ago = db.raw(`now() - (? * interval '1 second')`, [graceSeconds]);
      const [late, unissued, failed] = await Promise.all([
        base().where('p.status', 'awaiting_payment').where('p.checkout_expires_at', '<', ago).orderBy('p.checkout_expires_at').limit(limit),
        base()
          .whereNotNull('p.paid_at')
          .whereNull('p.certificates_issued_at')
          .whereNot('p.status', 'refunded')
          .where('p.paid_at', '<', ago)
          .orderBy('p.paid_at')
          .limit(limit),
        base()
          .where('p.status', 'failed')
          .where('p.failed_at', '>=', db.raw(`now() - (? * interval '1 second')`, [failedWithinSeconds]))
          .orderBy('p.failed_at')
          .limit(limit),
      ]);
      const row =
        (kind: 'awaiting_payment_past_deadline' | 'paid_without_certificates' | 'failed', since: string) =>
        (r: Record<string, unknown>) => ({
          kind,
          id: r.id as number,
          rootAccountId: r.root_account_id as number,
          agency: r.agency as string,
          mode: r.mode as string,
          status: r.status as string,
          since: (r[since] as Date | null) ?? null,
          reason: (r.failure_reason as string | null) ?? null,
        });
      return [
        ...late.map(row('awaiting_payment_past_deadline', 'checkout_expires_at')),
        ...unissued.map(row('paid_without_certificates', 'paid_at')),
        ...failed.map(row('failed', 'failed_at')),
      ];
    },

    /** Cancellations needing an operator, by mode: refused refunds, and those accepted more than `pendingSeconds` ago and not completed. */
    async countCancellationsNeedingAttention(
      pendingSeconds: number,
    ): Promise<Record<'live' | 'test', { refundFailed: number; pending: number }>> {
      const rows: Array<{ mode: 'live' | 'test'; refund_failed: string; pending: string }> = await db('policy_transactions as t')
        .join('purchases as p', 'p.id', 't.purchase_id')
        .where('t.kind', 'cancellation')
        .groupBy('p.mode')
        .select(
          'p.mode',
          db.raw(`count(*) filter (where t.status = 'refund_failed') as refund_failed`),
          db.raw(
            `count(*) filter (where t.status in ('accepted', 'refund_pending') and t.created_at < now() - (? * interval '1 second')) as pending`,
            [pendingSeconds],
          ),
        );
      const out = { live: { refundFailed: 0, pending: 0 }, test: { refundFailed: 0, pending: 0 } };
      for (const r of rows) out[r.mode] = { refundFailed: Number(r.refund_failed), pending: Number(r.pending) };
      return out;
    },

    /** Cancellations an operator must look at (refused refunds; pending past `graceSeconds`), oldest first, with their agency. */
    async stuckCancellations(
      graceSeconds: number,
      limit = 500,
      rootAccountId?: number,
    ): Promise<Array<StuckRow & { kind: 'cancellation_refund_failed' | 'cancellation_pending'; cancellationId: number }>> {
      const q = db('policy_transactions as t')
        .join('purchases as p', 'p.id', 't.purchase_id')
        .join('root_accounts as a', 'a.id', 'p.root_account_id')
        .where('t.kind', 'cancellation')
        .andWhere((w) =>
          w
            .where('t.status', 'refund_failed')
            .orWhere((x) =>
              x
                .whereIn('t.status', ['accepted', 'refund_pending'])
                .where('t.created_at', '<', db.raw(`now() - (? * interval '1 second')`, [graceSeconds])),
            ),
        )
        .orderBy('t.created_at')
        .limit(limit)
        .select(
          't.id as cancellation_id',
          't.status as cancellation_status',
          't.failure_reason',
          't.created_at',
          'p.id',
          'p.root_account_id',
          'a.name as agency',
          'p.mode',
          'p.status',
        );
      if (rootAccountId !== undefined) q.where('p.root_account_id', rootAccountId);
      return (await q).map((r) => ({
        kind: r.cancellation_status === 'refund_failed' ? ('cancellation_refund_failed' as const) : ('cancellation_pending' as const),
        id: r.id,
        cancellationId: r.cancellation_id,
        rootAccountId: r.root_account_id,
        agency: r.agency,
        mode: r.mode,
        status: r.status,
        since: r.created_at ?? null,
        reason: `cancellation ${r.cancellation_id} ${r.cancellation_status}${r.failure_reason ? `: ${r.failure_reason}` : ''}`,
      }));
    },

    /** How many purchases, by mode, were paid more than `olderThanSeconds` ago and still have no certificates (refunded ones aside). */
    async countPaidWithoutCertificates(olderThanSeconds: number): Promise<Record<'live' | 'test', number>> {
      const rows: Array<{ mode: 'live' | 'test'; n: string }> = await db('purchases')
        .whereNotNull('paid_at')
        .whereNull('certificates_issued_at')
        .whereNot({ status: 'refunded' })
        .where('paid_at', '<', db.raw(`now() - (? * interval '1 second')`, [olderThanSeconds]))
        .groupBy('mode')
        .select('mode', db.raw('count(*) as n'));
      const out = { live: 0, test: 0 };
      for (const r of rows) out[r.mode] = Number(r.n);
      return out;
    },
  };
}

/** The operator's reads (see `createAttentionRepository`). */
export type AttentionRepository = ReturnType<typeof createAttentionRepository>;
