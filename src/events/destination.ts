/**
 * Where an event delivery may go, and the one HTTP POST that delivers it.
 *
 * Live-mode endpoints must never reach this service's own network (SSRF): the URL must be https,
 * and every address its host resolves to, at connection time (so a DNS answer that changes after
 * the check cannot slip through), must be public: loopback, private (RFC 1918, unique local),
 * link-local, carrier-grade NAT, "this network", multicast and reserved ranges are refused.
 * Test-mode endpoints may use http and any address, loopback included, so an agency can point
 * one at a receiver on its own machine during development.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

const BLOCKED = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED.addSubnet(prefix, bits, 'ipv6');
}

/** True when `address` (an IPv4 or IPv6 literal) lies in a range live deliveries must not reach. */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return false;
  // An IPv4-mapped IPv6 address is judged by its IPv4 part (a ::ffff:0:0/96 rule in the list
  // would match every IPv4 address: BlockList treats the two alike).
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return BLOCKED.check(mapped[1]!, 'ipv4');
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Thrown when a live delivery's destination is not allowed; never worth retrying. */
export class DestinationRefusedError extends Error {
  override name = 'DestinationRefusedError';
}

/** Whitespace, control characters, quotes and angle brackets: never part of a URL as written. */
const URL_UNSAFE = /[\s\p{Cc}"'`<>]/u;
/** The answer (a VALIDATION_ERROR detail of `url`) to an endpoint URL holding one of those. */
export const URL_UNSAFE_PROBLEM = 'must not contain spaces or quotes (percent-encode them: a space is %20, " is %22, \' is %27)';

/**
 * Why `rawUrl` cannot be an endpoint of `mode`, or null when it can (checked when an endpoint is
 * created or changed; live deliveries check the resolved addresses again when they connect).
 */
export function endpointUrlProblem(rawUrl: string, mode: 'live' | 'test'): string | null {
  // The URL parser would quietly percent-encode these (or trim them at the ends): a URL typed
  // with them is a mistake to answer, not to store (issue 53, item 10).
  if (URL_UNSAFE.test(rawUrl)) return URL_UNSAFE_PROBLEM;
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not carry credentials';
  if (mode === 'test') return url.protocol === 'http:' || url.protocol === 'https:' ? null : 'must be an http or https URL';
  if (url.protocol !== 'https:') return 'must be an https URL for a live-mode endpoint (test mode also allows http)';
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || isPrivateAddress(host)) {
    return 'must not point at a loopback, private or link-local address in live mode (test mode allows them)';
  }
  return null;
}

/** The outcome of one POST: the receiver's status code. */
export interface PostResult {
  status: number;
}

/**
 * POSTs `body` (JSON) to `rawUrl` with `headers`, waiting at most `timeoutMs` for the answer
 * (connection included); the response body is read and discarded. With `allowPrivate` false
 * (live mode) the host's addresses are checked as the connection is made.
 * Errors: DestinationRefusedError (a refused destination), or the network error / timeout.
 */
export function postEvent(
  rawUrl: string,
  body: string,
  headers: Record<string, string>,
  options: { allowPrivate: boolean; timeoutMs: number },
): Promise<PostResult> {
  const url = new URL(rawUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!options.allowPrivate) {
    if (url.protocol !== 'https:') return Promise.reject(new DestinationRefusedError('live-mode deliveries go over https only'));
    // An IP literal skips the lookup below, so it is checked here.
    if (isPrivateAddress(host)) return Promise.reject(new DestinationRefusedError(`${host} is a loopback, private or link-local address`));
  }
  const lookup: net.LookupFunction = (hostname, opts, callback) => {
    dns.lookup(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as dns.LookupAddress[];
      const refused = options.allowPrivate ? undefined : list.find((a) => isPrivateAddress(a.address));
      if (refused)
        return callback(
          new DestinationRefusedError(`${hostname} resolves to ${refused.address}, a loopback, private or link-local address`),
          '',
          0,
        );
      if (opts.all) return callback(null, list as unknown as string, 0);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<PostResult>((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'insurance-coi-service-webhooks/1',
          ...headers,
        },
        lookup,
        timeout: options.timeoutMs,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
        res.on('error', reject);
      },
    );
    const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    req.on('close', () => clearTimeout(deadline));
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.on('error', (err) => reject(err));
    req.end(body);
  });
}
