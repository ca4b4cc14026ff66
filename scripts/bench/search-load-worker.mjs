/**
 * Worker thread of the search benchmark (scripts/bench/search.ts): runs autocannon with its own
 * event loop, so the load generator does not share the API's main thread. Like
 * load-worker.mjs, but POSTs JSON bodies: each connection sends `bodies` in turn, round robin.
 *
 * workerData: { url, path, headers, bodies: string[], connections, seconds }.
 * Replies once: { ok: true, samples: Float64Array (latency of every 2xx response, ms),
 * durationSeconds, non2xx, errors, timeouts } or { ok: false, error }.
 *
 * Plain JavaScript on purpose: worker threads do not inherit tsx's TypeScript loader.
 */
import { parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';

function run(seconds, samples) {
  return new Promise((resolve, reject) => {
    const headers = { ...workerData.headers, 'content-type': 'application/json' };
    const instance = autocannon(
      {
        url: workerData.url,
        connections: workerData.connections,
        duration: seconds,
        requests: workerData.bodies.map((body) => ({ method: 'POST', path: workerData.path, headers, body })),
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) samples.push(responseTime);
    });
  });
}

try {
  const samples = [];
  const result = await run(workerData.seconds, samples);
  parentPort.postMessage({
    ok: true,
    samples: Float64Array.from(samples),
    durationSeconds: result.duration,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  });
} catch (err) {
  parentPort.postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) });
}
