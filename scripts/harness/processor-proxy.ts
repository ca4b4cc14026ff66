/**
 * A recording HTTP proxy in front of the real stripe-mock. stripe-mock is stateless and answers
 * with fixture ids, so tests read what was actually sent (method, path, form body, idempotency
 * key) from here. `failNext` makes the next matching request fail with a processor-style error
 * body, for the failure paths stripe-mock cannot produce on demand. `dropResponseOnce` forwards
 * the next matching request to stripe-mock and then never answers it: it resets the client's
 * connection (`reset`, the default) or keeps it open until the client times out (`hang`), so the
 * processor acted but the client cannot know. `patchResponses` rewrites every matching
 * successful JSON answer, for processor state stripe-mock does not keep (tests say so).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  /** The query string's parameters (a GET's `expand[]`, say). */
  query: URLSearchParams;
  params: URLSearchParams;
  idempotencyKey: string | undefined;
  authorization: string | undefined;
  /** When it arrived (epoch ms). */
  at: number;
}

interface Failure {
  method: string;
  pathPrefix: string;
  status: number;
  body: unknown;
}

interface Match {
  method: string;
  pathPrefix: string;
}

interface Drop extends Match {
  how?: 'reset' | 'hang';
}

interface ResponsePatch extends Match {
  /** Returns the body to answer with instead of stripe-mock's (parsed JSON). */
  patch(body: any, request: RecordedRequest): unknown;
}

export interface ProcessorProxy {
  url: string;
  requests: RecordedRequest[];
  failNext(f: Failure): void;
  dropResponseOnce(m: Drop): void;
  patchResponses(p: ResponsePatch): void;
  close(): Promise<void>;
}

export async function startProcessorProxy(target = process.env.PAYPROC_API_BASE ?? 'http://127.0.0.1:12111'): Promise<ProcessorProxy> {
  const upstream = new URL(target);
  const requests: RecordedRequest[] = [];
  const failures: Failure[] = [];
  const drops: Drop[] = [];
  const patches: ResponsePatch[] = [];
  const matches = (m: Match, method: string | undefined, path: string) => m.method === method && path.startsWith(m.pathPrefix);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = (req.url ?? '/').split('?')[0]!;
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        path,
        query: new URLSearchParams((req.url ?? '').split('?')[1] ?? ''),
        params: new URLSearchParams(body.toString()),
        idempotencyKey: req.headers['idempotency-key'] as string | undefined,
        authorization: req.headers.authorization,
        at: Date.now(),
      };
      requests.push(recorded);
      const i = failures.findIndex((f) => f.method === req.method && path.startsWith(f.pathPrefix));
      if (i >= 0) {
        const [f] = failures.splice(i, 1);
        res.writeHead(f!.status, { 'content-type': 'application/json', 'stripe-should-retry': 'false' });
        res.end(JSON.stringify(f!.body));
        return;
      }
      const d = drops.findIndex((m) => matches(m, req.method, path));
      const drop = d >= 0 ? drops.splice(d, 1)[0] : undefined;
      const patch = patches.find((m) => matches(m, req.method, path));
      const fwd = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (up) => {
          if (!drop && !patch) {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
            return;
          }
          const parts: Buffer[] = [];
          up.on('data', (c: Buffer) => parts.push(c));
          up.on('end', () => {
            const status = up.statusCode ?? 502;
            let out = Buffer.concat(parts);
            if (patch && status < 300) out = Buffer.from(JSON.stringify(patch.patch(JSON.parse(out.toString()), recorded)));
            if (drop) {
              // the processor acted; the client never hears about it
              if (drop.how !== 'hang') req.socket.destroy();
              return;
            }
            const headers = { ...up.headers };
            delete headers['content-length'];
            delete headers['transfer-encoding'];
            res.writeHead(status, { ...headers, 'content-length': String(out.length) });
            res.end(out);
          });
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
    dropResponseOnce: (m) => drops.push(m),
    patchResponses: (p) => patches.push(p),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Makes `proxy` answer every payment intent the service creates (POST /v1/payment_intents) as
 * the processor would for a card that pays: `succeeded`, with one id per idempotency key (a retry
 * gets the first answer's id back; stripe-mock itself answers every call with the same fixture
 * id). `declined(request)` true answers `requires_payment_method` with a `card_declined` error
 * instead; `onCreated(id, request)` sees each succeeded answer (to hold its amount, say);
 * `newId(request)` names a new idempotency key's payment intent instead of stripe-mock's fixture
 * id (ids that differ, for a test that tells payments apart). Returns the map idempotency key →
 * payment intent id, filled as requests arrive.
 */
export function answerPaymentIntentsAsPaid(
  proxy: Pick<ProcessorProxy, 'patchResponses'>,
  o: {
    declined?: (request: RecordedRequest) => boolean;
    onCreated?: (id: string, request: RecordedRequest) => void;
    newId?: (request: RecordedRequest) => string;
  } = {},
): Map<string, string> {
  const intentIds = new Map<string, string>();
  proxy.patchResponses({
    method: 'POST',
    pathPrefix: '/v1/payment_intents',
    patch: (body, req) => {
      const key = req.idempotencyKey ?? '';
      if (!intentIds.has(key)) intentIds.set(key, o.newId?.(req) ?? body.id);
      const id = intentIds.get(key)!;
      if (o.declined?.(req))
        return {
          ...body,
          id,
          status: 'requires_payment_method',
          last_payment_error: { code: 'card_declined', decline_code: 'generic_decline' },
        };
      o.onCreated?.(id, req);
      return { ...body, id, status: 'succeeded' };
    },
  });
  return intentIds;
}
