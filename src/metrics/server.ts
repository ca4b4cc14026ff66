/**
 * The metrics listener of a process: `GET /metrics` (Prometheus text format), and for the worker
 * `GET /healthz` (the process is up) and `GET /readyz` (its own readiness checks, 200 or 503
 * with `{ status, checks }`). It listens on its own port (config METRICS_PORT for the API,
 * WORKER_METRICS_PORT for the worker), kept off the public API port so figures stay internal.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(options: {
  registry: Registry;
  host: string;
  /** 0 picks a free port. */
  port: number;
  readiness?: () => Promise<{ ready: boolean; checks: Record<string, boolean> }>;
}): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) =>
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    if (req.method !== 'GET') return send(405, 'text/plain', 'GET only\n');
    if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => send(200, options.registry.contentType, text),
        (err: unknown) => send(500, 'text/plain', `metrics failed: ${err instanceof Error ? err.message : String(err)}\n`),
      );
      return;
    }
    if (path === '/healthz') return send(200, 'application/json', JSON.stringify({ status: 'ok' }));
    if (path === '/readyz' && options.readiness) {
      options.readiness().then(
        ({ ready, checks }) =>
          send(ready ? 200 : 503, 'application/json', JSON.stringify({ status: ready ? 'ready' : 'not_ready', checks })),
        () => send(503, 'application/json', JSON.stringify({ status: 'not_ready', checks: {} })),
      );
      return;
    }
    send(404, 'text/plain', 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
