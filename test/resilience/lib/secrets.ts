/**
 * Finding secrets and another account's data in text (responses, headers, log lines).
 *
 * A secret is reported when its whole value appears, or the first or last 16 characters of its
 * random part (so a log that prints half a key is caught too). A marker (a name, email, id of another
 * account) is reported only as a whole token: not inside a longer id (`pi_paid_12` is not found
 * in `pi_paid_123`).
 */

/** A named value that must never appear. */
export interface Secret {
  name: string;
  value: string;
}

/** Windows of `value` to look for: the value itself plus the head and tail of its random part (after the type prefix). */
function probesOf(value: string): string[] {
  const tail = value.replace(/^(?:ik_(?:live|test)_|bat_|whsec_|[sr]k_(?:live|test)_)/, '');
  const probes = [value];
  if (tail.length >= 24) probes.push(tail.slice(0, 16), tail.slice(-16));
  return probes;
}

/** Names of the `secrets` found in `text`. */
export function findSecrets(text: string, secrets: Secret[]): string[] {
  return [...new Set(secrets.filter((s) => probesOf(s.value).some((p) => text.includes(p))).map((s) => s.name))];
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Names of the `markers` found in `text` as whole tokens (case-insensitive). */
export function findMarkers(text: string, markers: Secret[]): string[] {
  return [
    ...new Set(
      markers.filter((m) => new RegExp(`(?<![A-Za-z0-9_-])${escape(m.value)}(?![A-Za-z0-9_-])`, 'i').test(text)).map((m) => m.name),
    ),
  ];
}

/** One HTTP exchange seen by the recorder. */
export interface Exchange {
  method: string;
  url: string;
  requestBody: string;
  status: number;
  headers: string;
  body: string;
}

/**
 * Wraps `globalThis.fetch` so every exchange the test process makes (fixtures included) is kept
 * for the secret scan; `stop()` restores the original fetch.
 */
export function recordFetch(): { exchanges: Exchange[]; stop(): void } {
  const original = globalThis.fetch;
  const exchanges: Exchange[] = [];
  globalThis.fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const res = await original(input, init);
    const copy = res.clone();
    const body = await copy.text().catch(() => '');
    exchanges.push({
      method: init?.method ?? 'GET',
      url: String(input instanceof Request ? input.url : input),
      requestBody: typeof init?.body === 'string' ? init.body : '',
      status: res.status,
      headers: [...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n'),
      body,
    });
    return res;
  };
  return { exchanges, stop: () => void (globalThis.fetch = original) };
}
