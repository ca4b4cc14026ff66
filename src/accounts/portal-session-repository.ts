/**
 * The only writer of `portal_sessions`: the agency portal's server-side sessions (its teammates'
 * sign-ins, hence the accounts domain), shaped as the external store koa-session calls (`get`,
 * `set`, `destroy`), which the container hands the portal: the portal holds no database of its own.
 *
 * The cookie holds a random session id; the table keys the session by the id's SHA-256, so a
 * copy of the table signs nobody in. `maxAge` (ms) is the idle timeout: every request that
 * touches the session (rolling) moves `expires_at` forward; `get` answers null once it has
 * passed. `deleteExpired` removes what has expired (the portal calls it now and then).
 */
import crypto from 'node:crypto';
import type { Db } from '../db/knex';

const idHash = (key: string) => crypto.createHash('sha256').update(key).digest('hex');

export function createPortalSessionRepository(db: Db) {
  return {
    async get(key: string): Promise<Record<string, unknown> | null> {
      const row = await db('portal_sessions')
        .where({ id_hash: idHash(key) })
        .andWhere('expires_at', '>', db.fn.now())
        .first('data');
      return row ? (row.data as Record<string, unknown>) : null;
    },

    async set(key: string, session: Record<string, unknown>, maxAgeMs: number | 'session'): Promise<void> {
      const ms = typeof maxAgeMs === 'number' ? maxAgeMs : 24 * 3600_000;
      await db('portal_sessions')
        .insert({ id_hash: idHash(key), data: JSON.stringify(session), expires_at: new Date(Date.now() + ms) })
        .onConflict('id_hash')
        .merge(['data', 'expires_at']);
    },

    async destroy(key: string): Promise<void> {
      await db('portal_sessions')
        .where({ id_hash: idHash(key) })
        .delete();
    },

    /** Removes expired sessions; returns how many. */
    async deleteExpired(): Promise<number> {
      return db('portal_sessions').where('expires_at', '<=', db.fn.now()).delete();
    },
  };
}

export type PortalSessionRepository = ReturnType<typeof createPortalSessionRepository>;
