/**
 * A recording HTTP proxy in front of the real stripe-mock. stripe-mock is stateless and answers
 * with fixture ids, so tests read what was actually sent (method, path, form body, idempotency
 * key) from here. `failNext` makes the next matching request fail with a processor-style error
 * body, for the failure paths stripe-mock cannot produce on demand.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  params: URLSearchParams;
  idempotencyKey: string | undefined;
  authorization: string | undefined;
}

interface Failure {
  method: string;
  pathPrefix: string;
  status: number;
  body: unknown;
}

export interface ProcessorProxy {
  url: string;
  requests: RecordedRequest[];
  failNext(f: Failure): void;
  close(): Promise<void>;
}

export async function startProcessorProxy(target = process.env.PAYPROC_API_BASE ?? 'http://127.0.0.1:12111'): Promise<ProcessorProxy> {
  const upstream = new URL(target);
  const requests: RecordedRequest[] = [];
  const failures: Failure[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = (req.url ?? '/').split('?')[0]!;
      requests.push({
        method: req.method ?? 'GET',
        path,
        params: new URLSearchParams(body.toString()),
        idempotencyKey: req.headers['idempotency-key'] as string | undefined,
        authorization: req.headers.authorization,
      });
      const i = failures.findIndex((f) => f.method === req.method && path.startsWith(f.pathPrefix));
      if (i >= 0) {
        const [f] = failures.splice(i, 1);
        res.writeHead(f!.status, { 'content-type': 'application/json', 'stripe-should-retry': 'false' });
        res.end(JSON.stringify(f!.body));
        return;
      }
      const fwd = http.request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      fwd.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      fwd.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failNext: (f) => failures.push(f),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
