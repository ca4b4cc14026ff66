/**
 * Times every request into `http_request_duration_seconds{method,route,status,mode}` and counts 429
 * answers into `rate_limit_refusals_total{limiter}` (`api_key` on keyed surfaces, `address` on
 * the public pages). The route label is the matched template (`/api/v1/products/:id`), never the
 * raw path, so ids do not multiply series; anything refused before routing (403, 429) or unmatched is `unmatched`. The mode
 * label is the API key's (`live` or `test`); a request that failed before its key was looked up
 * (the database down) is counted by the mode its well-formed key value names (`ik_test_…`); a
 * processor webhook by its verified event's livemode (also when handling it failed); `none`
 * otherwise (health, unverified webhooks, public pages). The paging alerts select
 * `mode!="test"`, so an integrator's test traffic never wakes anyone. Runs outside the error
 * handler so it sees the status actually sent.
 */
import type { Middleware } from 'koa';
import { parseKeyValue } from '../api-keys/secrets';
import type { AppState } from './context';
import type { ApiMetrics } from '../metrics/registry';

const PUBLIC_PAGES = /^\/(verify|checkout)(\/|$)/;

export function httpMetrics(metrics: ApiMetrics): Middleware<AppState> {
  return async (ctx, next) => {
    const end = metrics.httpDuration.startTimer();
    try {
      await next();
    } finally {
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute;
      const status = ctx.status;
      const mode = ctx.state.principal?.mode ?? parseKeyValue(ctx.get('x-api-key') || undefined)?.mode ?? ctx.state.trafficMode ?? 'none';
      end({ method: ctx.method, route: typeof route === 'string' ? route : 'unmatched', status: String(status), mode });
      if (status === 429) metrics.rateLimited.inc({ limiter: PUBLIC_PAGES.test(ctx.path) ? 'address' : 'api_key' });
    }
  };
}
