/**
 * The only writer of `operator_audit_log`: who did what by hand, to what, why, and how it ended.
 *
 * An action is recorded in two steps: `begin` before it runs (so an action that cannot be
 * recorded does not run, and one whose process dies is still on record, without an outcome),
 * then `finish` once with its outcome. `list` reads the log newest first.
 *
 * `actorKind` names the door the action came through: the operator CLI (`operator_cli`,
 * `npm run ops`, always with a reason: the table refuses an `operator_cli` row without one; the
 * operator named by their token or OS user, `actorVia`), the agency portal (`portal`: the
 * teammate's email, with the client's address), the key CLI (`key_cli`, `npm run keys`: the OS
 * user) and the Temporal codec endpoint (`codec`: each decode, with its caller and address). Another door adds its kind to `ActorKind` (./types.ts), not a table.
 */
import type { Db } from '../db/knex';
import type { ActorKind, ActorVia, AuditEntry, AuditListOptions, AuditOutcome, AuditStart } from './types';

export type { ActorKind, ActorVia, AuditOutcome, AuditStart, AuditEntry } from './types';

interface Row {
  id: string | number;
  started_at: Date;
  finished_at: Date | null;
  actor_kind: ActorKind;
  actor: string;
  action: string;
  target_kind: string | null;
  target_id: string | null;
  root_account_id: number | null;
  reason: string | null;
  client_address: string | null;
  actor_via: ActorVia | null;
  outcome: AuditOutcome | null;
  outcome_detail: string | null;
  details: Record<string, unknown>;
}

const toEntry = (r: Row): AuditEntry => ({
  id: Number(r.id),
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  actorKind: r.actor_kind,
  actor: r.actor,
  action: r.action,
  targetKind: r.target_kind,
  targetId: r.target_id,
  rootAccountId: r.root_account_id,
  reason: r.reason,
  clientAddress: r.client_address,
  actorVia: r.actor_via,
  outcome: r.outcome,
  outcomeDetail: r.outcome_detail,
  details: r.details,
});

export function createAuditRepository(db: Db) {
  return {
    /** Records that `entry.actor` is starting `entry.action`; returns the row's id for `finish`. Throws what the database throws (then do not act). */
    async begin(entry: AuditStart): Promise<number> {
      const [row] = await db('operator_audit_log')
        .insert({
          actor_kind: entry.actorKind,
          actor: entry.actor,
          action: entry.action,
          target_kind: entry.targetKind,
          target_id: entry.targetId,
          root_account_id: entry.rootAccountId,
          reason: entry.reason,
          client_address: entry.clientAddress ?? null,
          actor_via: entry.actorVia ?? null,
        })
        .returning('id');
      return Number((row as { id: string | number }).id);
    },

    /**
     * Records how action `id` ended, once: `detail` is why it was refused or the error it failed
     * with; `details` what it answered. A second call for the same id changes nothing (false).
     */
    async finish(
      id: number,
      result: { outcome: AuditOutcome; detail?: string | null; details?: Record<string, unknown> },
    ): Promise<boolean> {
      const n = await db('operator_audit_log')
        .where({ id })
        .whereNull('outcome')
        .update({
          outcome: result.outcome,
          outcome_detail: result.detail ?? null,
          details: JSON.stringify(result.details ?? {}),
          finished_at: db.fn.now(),
        });
      return n === 1;
    },

    /** The entries `options` names (see AuditListOptions), newest first (by recording order). */
    async list(options: AuditListOptions): Promise<AuditEntry[]> {
      // Ids are handed out in recording order: newest first is id descending.
      const q = db<Row>('operator_audit_log').select('*').orderBy('id', 'desc');
      if (options.target) q.where({ target_kind: options.target.kind, target_id: options.target.id });
      if (options.rootAccountId !== undefined) q.where({ root_account_id: options.rootAccountId });
      // A part of who or what, as typed: LIKE's wildcards in it are plain characters.
      const part = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      if (options.actor) q.whereILike('actor', part(options.actor));
      if (options.action) q.whereILike('action', part(options.action));
      if (options.from) q.where('started_at', '>=', options.from);
      if (options.to) q.where('started_at', '<', options.to);
      const max = options.upTo10000 ? 10_000 : 1000;
      return ((await q.limit(Math.min(Math.max(options.limit, 1), max)).offset(Math.max(options.offset ?? 0, 0))) as Row[]).map(toEntry);
    },
  };
}

export type AuditRepository = ReturnType<typeof createAuditRepository>;
