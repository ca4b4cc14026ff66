/**
 * Test helper: the agency portal driven by hand-made HTTP requests (no browser), as a script or
 * an attacker would: a cookie jar per origin, redirects followed one by one, the sign-in through
 * the local identity provider's form, and the CSRF token read from a page.
 */

export interface PortalAnswer {
  status: number;
  url: string;
  location: string | null;
  text: string;
}

export class PortalClient {
  /** origin → cookie name → value */
  private readonly jar = new Map<string, Map<string, string>>();

  /** The cookies this client holds for `origin` (to hand to another client: a stolen session). */
  cookies(origin: string): Map<string, string> {
    return new Map(this.jar.get(origin) ?? []);
  }

  /** Puts `cookies` into this client's jar for `origin`. */
  adopt(origin: string, cookies: Map<string, string>): void {
    this.jar.set(origin, new Map(cookies));
  }

  /** One request, no redirect followed; Set-Cookie goes into the jar. `form` makes it a urlencoded POST. */
  async request(url: string, form?: Record<string, string>): Promise<PortalAnswer> {
    const { origin } = new URL(url);
    const cookies = [...(this.jar.get(origin) ?? [])].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, {
      method: form ? 'POST' : 'GET',
      headers: {
        ...(cookies ? { cookie: cookies } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
      redirect: 'manual',
    });
    const jar = this.jar.get(origin) ?? new Map<string, string>();
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now());
      if (!value || expired) jar.delete(name);
      else jar.set(name, value);
    }
    this.jar.set(origin, jar);
    const location = res.headers.get('location');
    return { status: res.status, url, location: location && new URL(location, url).href, text: await res.text() };
  }

  /** Follows redirects (at most 15) from `url`; the last answer. */
  async follow(url: string, form?: Record<string, string>): Promise<PortalAnswer> {
    let answer = await this.request(url, form);
    for (let i = 0; i < 15 && answer.location && answer.status >= 300 && answer.status < 400; i++)
      answer = await this.request(answer.location);
    return answer;
  }

  /** Signs in from `appUrl`/portal/sign-in at the identity provider's form; the page it lands on. */
  async signIn(appUrl: string, email: string, password: string, next = '/portal/keys'): Promise<PortalAnswer> {
    const form = await this.follow(`${appUrl}/portal/sign-in?next=${encodeURIComponent(next)}`);
    const action = /<form method="post" action="([^"]+)"/.exec(form.text)?.[1];
    if (!action) throw new Error(`no sign-in form at ${form.url} (${form.status})`);
    return this.follow(new URL(action.replace(/&amp;/g, '&'), form.url).href, { email, password });
  }
}

/** The CSRF token of a portal page (its forms' `_csrf` field). */
export function csrfToken(html: string): string {
  const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!token) throw new Error('no CSRF token on the page');
  return token;
}
