/**
 * Worker thread of `runHttpLoad` (scripts/bench/lib.ts): runs autocannon with its own event
 * loop, so the load generator does not share the API's main thread.
 *
 * workerData: { url, headers, connections, seconds, post? }. With `post: { path, bodies }` each
 * connection POSTs the JSON `bodies` in turn (round robin) to `path`; otherwise it GETs `url`.
 * Replies once: { ok: true, samples: Float64Array (latency of every 2xx response, ms),
 * durationSeconds, non2xx, errors, timeouts, autocannon: { p50, p99, responses2xx } }
 * or { ok: false, error }.
 *
 * Plain JavaScript on purpose: worker threads do not inherit tsx's TypeScript loader.
 */
import { parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';

/** One autocannon run; `samples` collects the 2xx latencies (ms, hrtime precision). */
function run(seconds, samples) {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: workerData.url,
        headers: workerData.headers,
        connections: workerData.connections,
        duration: seconds,
        ...(workerData.post
          ? {
              requests: workerData.post.bodies.map((body) => ({
                method: 'POST',
                path: workerData.post.path,
                headers: { ...workerData.headers, 'content-type': 'application/json' },
                body,
              })),
            }
          : {}),
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
  // In a worker thread autocannon hands back its raw (histogram-encoded) result.
  const result = await run(workerData.seconds, samples);
  const agg = autocannon.aggregateResult([result], {
    url: workerData.url,
    connections: workerData.connections,
    duration: workerData.seconds,
  });
  parentPort.postMessage({
    ok: true,
    samples: Float64Array.from(samples),
    durationSeconds: result.duration,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    autocannon: { p50: agg.latency.p50, p99: agg.latency.p99, responses2xx: result['2xx'] },
  });
} catch (err) {
  parentPort.postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) });
}
