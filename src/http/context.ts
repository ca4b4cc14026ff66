/**
 * What middleware puts on `ctx.state` for the handlers after it.
 */
import type { Logger } from '../logger';
import type { Principal } from '../api-keys/service';

export interface AppState {
  /** The request id echoed in `X-Request-Id` (spec §2.5). */
  requestId: string;
  /** Logger bound to this request's id. */
  log: Logger;
  /** Set by the gateway on authenticated surfaces. */
  principal?: Principal;
  /**
   * The mode of a request without an API key, when the request says it: a verified processor
   * event's livemode. The HTTP metrics' `mode` label uses it after the key's.
   */
  trafficMode?: 'live' | 'test';
  /**
   * How errors are rendered: the `/api/v1` envelope (spec §2.5) or, on the quote and certificate
   * surfaces, the bare serialised error of spec §7.2.
   */
  errorStyle: 'envelope' | 'bare';
}
