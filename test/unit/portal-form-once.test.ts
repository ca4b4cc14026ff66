/**
 * The portal's form-once middleware (src/portal/form-once.ts) alone, with plain stand-ins for
 * Koa's context: each request carries its own copy of the session, as two requests of one browser
 * do when both read the session row before either saved it.
 */
import type Koa from 'koa';
import { REPEATED_FORM_NOTICE, formOnce } from '../../src/portal/form-once';
import type { AppState } from '../../src/http/context';
import type { PortalSession } from '../../src/portal/kit';

interface FakeCtx {
  method: string;
  url: string;
  status: number;
  location: string | null;
  request: { body: Record<string, unknown> };
  response: { get(name: string): string };
  session: PortalSession;
  redirect(to: string): void;
}

/** A POST of `body` to `url` with a session of its own (a copy of `session`). */
function post(url: string, body: Record<string, unknown>, session: PortalSession = {}): FakeCtx {
  const ctx: FakeCtx = {
    method: 'POST',
    url,
    status: 404,
    location: null,
    request: { body },
    response: { get: (name: string) => (name === 'Location' ? (ctx.location ?? '') : '') },
    session: structuredClone(session),
    redirect(to: string) {
      ctx.location = to;
    },
  };
  return ctx;
}

const run = (mw: Koa.Middleware<AppState>, ctx: FakeCtx, next: () => Promise<void>) =>
  mw(ctx as unknown as Parameters<Koa.Middleware<AppState>>[0], next);

describe('formOnce', () => {
  const form = { _csrf: 'token-1', name: 'Website checkout', mode: 'test' };

  test('when a copy of a form arrives after the first has answered, with a session read before the first saved its own, then it is not carried out again and follows the first', async () => {
    const mw = formOnce();
    let created = 0;
    const createKey = (ctx: FakeCtx) => async () => {
      created++;
      ctx.status = 303;
      ctx.redirect(`/portal/keys/${created}/issued`);
    };
    const stale: PortalSession = {};
    const first = post('/portal/keys', form, stale);
    await run(mw, first, createKey(first));
    const late = post('/portal/keys', form, stale);
    await run(mw, late, createKey(late));

    expect(created).toBe(1);
    expect([late.status, late.location, late.session.flash]).toEqual([303, '/portal/keys/1/issued', REPEATED_FORM_NOTICE]);
  });

  test('when another form of the same page (other fields) is sent, or a failed one is sent again, then each is carried out', async () => {
    const mw = formOnce();
    let calls = 0;
    const refuse = (ctx: FakeCtx) => async () => {
      calls++;
      ctx.status = 400;
    };
    await run(mw, post('/portal/keys', form), refuse(post('/portal/keys', form)));
    const again = post('/portal/keys', form);
    await run(mw, again, refuse(again));
    const other = post('/portal/keys', { ...form, name: 'Another key' });
    await run(mw, other, refuse(other));
    expect(calls).toBe(3);
  });
});
