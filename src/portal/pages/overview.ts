/**
 * The landing page, GET /portal?mode=test|live (issue 53, item 11): where sign-in leads unless
 * its `next` names another portal page. For the mode shown: the 5 newest paid purchases (the
 * API's search), the endpoints that fail (the API's `failing` mark, or the newest delivery's last
 * attempt not answered 2xx; the newest delivery of each of up to 100 endpoints is read), and the
 * active keys to check: an old value that stops working within 7 days (after a rotation), or no
 * value ever used. Read-only: viewers see it too.
 */
import type Router from '@koa/router';
import type { AppState } from '../../http/context';
import { modeOf, type PortalCtx, type PortalKit } from '../kit';
import { lastUsed } from '../views';
import { overviewPage, type FailingEndpoint, type KeyToCheck } from '../views-overview';

/** How far ahead an old key value's end counts as "about to stop working". */
export const EXPIRING_WITHIN_MS = 7 * 24 * 3600_000;

export function registerOverviewPage(pages: Router<AppState>, kit: PortalKit): void {
  const { deps, frame, send, viewOf } = kit;
  pages.get('/', async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const mode = modeOf(ctx.query.mode);
    const view = viewOf(ctx, mode);
    const [search, endpoints, allKeys] = await Promise.all([
      deps.purchaseSearch.searchAccount(view, { search_text: '', page_size: 5, page_index: 0 }),
      deps.webhookEndpoints.list(view, { pageSize: 100, pageIndex: 0 }),
      deps.apiKeys.list(view.rootAccountId),
    ]);
    const failing: FailingEndpoint[] = [];
    await Promise.all(
      endpoints.items.map(async (endpoint, i) => {
        const [latest] = await deps.events.deliveriesToEndpoint(view, endpoint.id, 1);
        const last = latest?.attempts.at(-1);
        const answered2xx = last?.response_status != null && last.response_status >= 200 && last.response_status < 300;
        const deliveryFails = latest?.status === 'failed' || (latest?.status === 'pending' && last !== undefined && !answered2xx);
        if (endpoint.status === 'failing' || deliveryFails) failing[i] = { endpoint, latest: latest ?? null };
      }),
    );
    const now = Date.now();
    const keys: KeyToCheck[] = [];
    for (const k of allKeys.filter((key) => key.mode === mode && key.status === 'active')) {
      const ending = k.values
        .filter((v) => v.state === 'grace' && v.expiresAt && v.expiresAt.getTime() - now <= EXPIRING_WITHIN_MS)
        .map((v) => v.expiresAt!)
        .sort((a, b) => a.getTime() - b.getTime())[0];
      if (ending) keys.push({ id: k.id, name: k.name, why: 'expiring', at: ending });
      else if (!lastUsed(k)) keys.push({ id: k.id, name: k.name, why: 'unused', at: k.createdAt });
    }
    send(
      ctx,
      200,
      overviewPage(frame(ctx, 'Overview', { active: 'overview', modes: { current: mode, href: (m) => `/portal?mode=${m}` } }), {
        mode,
        purchases: search.purchases,
        failing: failing.filter(Boolean),
        keys,
      }),
    );
  });
}
