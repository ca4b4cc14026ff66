/**
 * `npm run verify-certificate -- <url-or-token> [--jwks <file>] [--base-url <url>] [--json]`:
 * checks a certificate's signed proof (issue 50 item 3), as a venue would.
 *
 * - The argument is what the certificate's QR code holds (`<base>/verify/<number>?proof=<jws>`,
 *   the API's `verification_url`) or the bare token.
 * - Offline, with `--jwks <file>` (a saved copy of `<base>/.well-known/jwks.json`): verifies the
 *   signature with those keys and prints the signed facts; no network.
 * - Online, without `--jwks`: fetches the keys from the service (the URL's origin and path before
 *   `/verify/`, or `--base-url`), verifies the signature, then asks the verification page for the
 *   live status (valid, not yet valid, expired, voided, superseded) and prints both.
 *
 * Exit codes: 0 verified; 1 refused (altered token, unknown key, malformed) or the service said no;
 * 2 a usage error or the service could not be reached. `--json` prints one JSON object.
 */
import { readFileSync } from 'node:fs';
import type { JSONWebKeySet } from 'jose';
import { ProofRefused, verifyProof } from '../src/certificates/signed-proof';
import { parseCommandLine, UsageError } from './cli';

const USAGE = `usage: npm run verify-certificate -- <verification-url-or-token> [--jwks <file>] [--base-url <url>] [--json]
  --jwks <file>      verify offline against this JWK Set (a saved /.well-known/jwks.json); no network
  --base-url <url>   the service (default: the URL's own, before /verify/); online check of keys and live status`;

/** The token and, for a URL, the service's base URL before `/verify/`. */
function parseInput(input: string): { token: string; base: string | null } {
  if (!/^https?:\/\//i.test(input)) return { token: input.trim(), base: null };
  const url = new URL(input);
  const token = url.searchParams.get('proof');
  if (!token) throw new UsageError('this link carries no signed proof (?proof=): it is an unsigned verification link');
  const at = url.pathname.lastIndexOf('/verify/');
  return { token, base: at < 0 ? url.origin : `${url.origin}${url.pathname.slice(0, at)}` };
}

async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandLine(argv, { jwks: { type: 'string' }, 'base-url': { type: 'string' } }, USAGE);
  if ('exit' in parsed) return parsed.exit === 0 ? 0 : 2;
  const { values, positionals } = parsed;
  const { token, base: fromUrl } = parseInput(positionals[0]!);
  const base = (values['base-url'] ?? fromUrl)?.replace(/\/+$/, '') ?? null;
  const out = (human: string, json: object) => console.log(values.json ? JSON.stringify(json) : human);

  let jwks: JSONWebKeySet;
  if (values.jwks) {
    jwks = JSON.parse(readFileSync(values.jwks, 'utf8')) as JSONWebKeySet;
  } else {
    if (!base) throw new UsageError('give --jwks <file> to verify offline, or --base-url (or the full link) to verify online');
    const res = await fetch(`${base}/.well-known/jwks.json`);
    if (!res.ok) throw new Error(`${base}/.well-known/jwks.json answered ${res.status}`);
    jwks = (await res.json()) as JSONWebKeySet;
  }
  let verified;
  try {
    verified = await verifyProof(token, jwks);
  } catch (err) {
    if (!(err instanceof ProofRefused)) throw err;
    out(`REFUSED (${err.reason}): ${err.message}`, { verified: false, reason: err.reason, message: err.message });
    return 1;
  }
  const f = verified.facts;
  const lines = [
    `Signature verified (key ${verified.kid})${values.jwks ? ', offline' : ''}`,
    `  certificate ${f.certificate_number} revision ${f.revision}, issued ${f.issued_at} (${f.status})`,
    `  named insured ${f.named_insured_name}; holder ${f.certificate_holder_name ?? 'to whom it may concern'}`,
    `  coverage ${f.coverage_starts_at} to ${f.coverage_ends_at} (${f.coverage_time_zone})`,
  ];
  if (values.jwks) {
    out(lines.join('\n'), { verified: true, offline: true, kid: verified.kid, facts: f, live: null });
    return 0;
  }
  const res = await fetch(`${base}/verify/${encodeURIComponent(f.certificate_number)}?proof=${token}`, {
    headers: { accept: 'application/json' },
  });
  const live = (await res.json()) as { state?: string; checked_at?: string; superseded_by?: string | null; message?: string };
  if (!res.ok) {
    out(`${lines.join('\n')}\nREFUSED by the service (${res.status}): ${live.message ?? ''}`, {
      verified: false,
      status: res.status,
      live,
    });
    return 1;
  }
  lines.push(`Live status: ${live.state}${live.superseded_by ? ` (superseded by ${live.superseded_by})` : ''}, checked ${live.checked_at}`);
  out(lines.join('\n'), { verified: true, offline: false, kid: verified.kid, facts: f, live });
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof UsageError ? err.message : `error: ${(err as Error).message}`);
    process.exit(2);
  },
);
