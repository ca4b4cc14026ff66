/**
 * Raw HTTP for the resilience suites: any method, header, content type and body (string or
 * bytes, sent as is), with a per-request deadline so a hanging route fails the suite instead of
 * the Jest timeout. Answers are read whole and parsed as JSON when they are JSON.
 */

/** One request as the suites build it; `path` includes the query string, already encoded. */
export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** One answer; `error` is set (and `status` 0) when no HTTP answer came within the deadline. */
export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
  contentType: string;
  ms: number;
  error?: string;
}

/**
 * Sends `req` to `baseUrl`; never throws: a timeout or socket error comes back as `status: 0`.
 * A reset on a reused keep-alive socket (the server closed it as idle just as it was reused) is
 * retried once on a fresh one and marked `retried`; a route that kills its connection fails
 * both times, so the retry cannot hide it.
 */
export async function send(baseUrl: string, req: RawRequest, timeoutMs = 15_000): Promise<RawResponse & { retried?: boolean }> {
  const first = await sendOnce(baseUrl, req, timeoutMs);
  if (first.status !== 0 || !/ECONNRESET|UND_ERR_SOCKET/.test(first.error ?? '')) return first;
  return { ...(await sendOnce(baseUrl, req, timeoutMs)), retried: true };
}

async function sendOnce(baseUrl: string, req: RawRequest, timeoutMs: number): Promise<RawResponse> {
  const started = Date.now();
  try {
    const res = await fetch(`${baseUrl}${req.path}`, {
      method: req.method,
      headers: req.headers,
      body: req.body === undefined ? undefined : typeof req.body === 'string' ? req.body : new Uint8Array(req.body),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
    const text = await res.text();
    const contentType = res.headers.get('content-type') ?? '';
    let json: unknown = undefined;
    if (contentType.includes('json')) {
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    }
    return { status: res.status, headers: res.headers, text, json, contentType, ms: Date.now() - started };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return {
      status: 0,
      headers: new Headers(),
      text: '',
      json: undefined,
      contentType: '',
      ms: Date.now() - started,
      error: `${e.name}: ${e.message}${e.cause ? ` (${e.cause.code ?? e.cause.message})` : ''}`,
    };
  }
}
