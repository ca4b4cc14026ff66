/**
 * The payment processor (Stripe) clients, one per mode (spec §1.4: test resources use the
 * processor's test mode). Live and test secrets are configured separately; `PAYPROC_API_BASE`
 * points both at stripe-mock locally and is empty for the real API.
 *
 * Network retries are on (stripe-node retries only with an idempotency key, which every
 * write here carries, built from business ids: ARCHITECTURE/STYLE practice 4).
 */
import Stripe from 'stripe';
import type { Config } from '../config';

export type PayprocMode = 'live' | 'test';

export interface Payproc {
  /** The client for `mode`'s secret. */
  client(mode: PayprocMode): Stripe;
}

export function createPayproc(
  config: Pick<Config, 'PAYPROC_LIVE_SECRET_KEY' | 'PAYPROC_TEST_SECRET_KEY' | 'PAYPROC_API_BASE'> &
    Partial<Pick<Config, 'PAYPROC_TIMEOUT_MS'>>,
  options: { maxNetworkRetries?: number; timeoutMs?: number } = {},
): Payproc {
  const endpoint = config.PAYPROC_API_BASE ? new URL(config.PAYPROC_API_BASE) : undefined;
  const make = (secret: string) =>
    new Stripe(secret, {
      maxNetworkRetries: options.maxNetworkRetries ?? 2,
      timeout: options.timeoutMs ?? config.PAYPROC_TIMEOUT_MS ?? 20_000,
      telemetry: false,
      ...(endpoint
        ? {
            host: endpoint.hostname,
            port: endpoint.port || (endpoint.protocol === 'https:' ? 443 : 80),
            protocol: endpoint.protocol === 'https:' ? 'https' : 'http',
          }
        : {}),
    });
  const clients = { live: make(config.PAYPROC_LIVE_SECRET_KEY), test: make(config.PAYPROC_TEST_SECRET_KEY) };
  return { client: (mode) => clients[mode] };
}
