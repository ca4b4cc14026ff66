/**
 * A form carried out once (issue 53, item 1): every portal change answers its POST with a 303
 * redirect to a page showing the result (post/redirect/get), so a reload repeats nothing; and a
 * form sent again as it was (the same CSRF token, a token being made afresh for every page, to
 * the same action with the same fields) is not carried out again: the second POST is sent where
 * the first one's redirect led, with a notice that nothing was changed again.
 *
 * The session keeps, per form carried out, a SHA-256 of its action and fields (the token among
 * them) and where it led (the newest 50). Two copies of one form sent at the same moment (a
 * double click) reach this process together, before either has saved the session: the second
 * waits for the first and follows it, taking over what the first kept in its session (the
 * one-time result, the previews), since whichever of the two saves the session last decides
 * what it holds. A copy can also arrive just after the first has answered, with a session read
 * before the first saved its own: the process keeps each form it carried out for `RECENT_FORM_MS`
 * beyond its answer, so that copy follows it too. Several app processes share the session store
 * but not that memory, so only the sequential repeat is caught across processes.
 */
import crypto from 'node:crypto';
import type Koa from 'koa';
import type { AppState } from '../http/context';
import type { PortalCtx, PortalSession } from './kit';

/** What a form's first answer leaves for a copy of it waiting in this process. */
type Outcome = { location: string | null; kept: Pick<PortalSession, 'reveal' | 'previews' | 'sent'> };

/** How many forms a session remembers as carried out. */
export const SENT_FORMS_KEPT = 50;

/** How long (ms) a form carried out in this process is still recognised without the session. */
export const RECENT_FORM_MS = 60_000;

export const REPEATED_FORM_NOTICE = 'This form was already sent, so nothing was changed again.';

/**
 * The middleware, for the signed-in POSTs after the CSRF check: a repeated form is redirected
 * (303) to its first answer's location; a form answered with a redirect is remembered.
 */
export function formOnce(): Koa.Middleware<AppState> {
  /** Forms being or recently carried out in this process: key → their outcome (location null: no redirect). */
  const inFlight = new Map<string, Promise<Outcome>>();
  return async (rawCtx, next) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    if (ctx.method !== 'POST' || typeof body._csrf !== 'string' || !ctx.session) return next();
    // The form's token, action and fields: the same form sent again, not another from its page.
    const fields = JSON.stringify(Object.entries(body).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const key = crypto.createHash('sha256').update(`${ctx.url}\n${fields}`).digest('base64url');
    const repeat = (location: string) => {
      ctx.session!.flash = REPEATED_FORM_NOTICE;
      ctx.status = 303;
      ctx.redirect(location);
    };
    const sent = ctx.session.sent?.find(([k]) => k === key);
    if (sent) return repeat(sent[1]);
    const first = inFlight.get(key);
    if (first) {
      const { location, kept } = await first;
      if (!location) return next();
      for (const [k, v] of Object.entries(kept)) if (v !== undefined) Object.assign(ctx.session, { [k]: v });
      return repeat(location);
    }
    let settle!: (outcome: Outcome) => void;
    inFlight.set(
      key,
      new Promise((resolve) => {
        settle = resolve;
      }),
    );
    let location: string | null = null;
    try {
      await next();
      location = ctx.status === 303 ? ctx.response.get('Location') || null : null;
      if (location && ctx.session)
        ctx.session.sent = [[key, location] as [string, string], ...(ctx.session.sent ?? [])].slice(0, SENT_FORMS_KEPT);
    } finally {
      const s = ctx.session;
      settle({ location, kept: { reveal: s?.reveal, previews: s?.previews, sent: s?.sent } });
      // Kept a while after it ends: a copy whose session was read before this one's was saved
      // arrives after this answer, finds nothing in its session, and must still follow it.
      setTimeout(() => inFlight.delete(key), RECENT_FORM_MS).unref();
    }
  };
}
