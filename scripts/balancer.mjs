/**
 * The small load-balancing front of `npm run dev -- --api N` (N > 1): one HTTP listener on the
 * API's port that spreads requests round-robin over the API processes, through the `http-proxy`
 * package. A process that refuses connections (restarting, crashed) is skipped for 2 s and the
 * request goes to the next one; the body is buffered (up to 2 MiB, above the API's own limit)
 * so such a retry resends it. Nothing was sent to a refusing process, so retrying is safe for
 * every method. When none accepts: 502 with the API's error envelope. Adds X-Forwarded-For.
 *
 * Not for production: there a real load balancer (Kubernetes Service, cloud LB) does this job.
 */
import http from 'node:http';
import { Readable } from 'node:stream';
import httpProxy from 'http-proxy';

const MAX_BODY_BYTES = 2 * 1024 * 1024;
const DOWN_FOR_MS = 2000;

/**
 * Starts the front on `host:port` in front of `targets` (base URLs such as http://127.0.0.1:3001).
 * @param {{ host: string, port: number, targets: string[] }} options
 * @returns {Promise<{ url: string, close(): Promise<void>, counts: number[] }>} `counts[i]`:
 *   requests handed to `targets[i]`.
 */
export async function startBalancer({ host, port, targets }) {
  const proxy = httpProxy.createProxyServer({ xfwd: true, proxyTimeout: 120_000 });
  const downUntil = targets.map(() => 0);
  const counts = targets.map(() => 0);
  let next = 0;

  const envelope = (res, status, code, message) => {
    if (res.headersSent) return res.destroy();
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code, message } }));
  };

  const forward = (req, res, body, tried) => {
    const now = Date.now();
    let i = -1;
    for (let k = 0; k < targets.length; k++) {
      const candidate = (next + k) % targets.length;
      if (!tried.has(candidate) && downUntil[candidate] <= now) {
        i = candidate;
        break;
      }
    }
    if (i === -1) return envelope(res, 502, 'CONNECTION_ERROR', 'No API process is accepting connections; retry with backoff');
    next = (i + 1) % targets.length;
    tried.add(i);
    counts[i] += 1;
    proxy.web(req, res, { target: targets[i], buffer: Readable.from([body]) }, (err) => {
      // Refused or reset before any answer: nothing was processed there, try the next process.
      if (!res.headersSent && (err.code === 'ECONNREFUSED' || err.code === 'ECONNRESET')) {
        downUntil[i] = Date.now() + DOWN_FOR_MS;
        return forward(req, res, body, tried);
      }
      envelope(res, 502, 'CONNECTION_ERROR', 'The API process did not answer; retry with backoff');
    });
  };

  const server = http.createServer((req, res) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        envelope(res, 413, 'PAYLOAD_TOO_LARGE', `Request body is larger than ${MAX_BODY_BYTES} bytes`);
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => forward(req, res, Buffer.concat(chunks), new Set()));
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    url: `http://${host}:${port}`,
    counts,
    close: () =>
      new Promise((resolve) => {
        proxy.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
