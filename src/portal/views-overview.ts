/**
 * The portal's landing page after sign-in (issue 53, item 11): an overview of one mode instead of
 * the key list: the newest purchases, the webhook endpoints whose deliveries fail, and the keys to
 * look at (an old value about to stop working after a rotation, or a key never used). Same
 * rendering and accessibility rules as src/portal/views.ts; times in UTC.
 */
import { html } from 'htm/preact';
import type { KeyMode } from '../api-keys/secrets';
import type { PurchaseSearchResponse } from '../purchase-search/schemas';
import type { WebhookEndpointRead } from '../webhook-endpoints/schemas';
import type { DeliveryView } from '../events/service';
import { page, utc, when, type Frame } from './views';
import { dataTable, type Column } from './table';

/** An endpoint that needs a look: marked `failing` by the API, or its newest delivery's last attempt failed. */
export interface FailingEndpoint {
  endpoint: WebhookEndpointRead;
  /** Its newest delivery (null when it has none: only the API's `failing` mark brought it here). */
  latest: (DeliveryView & { event_type: string }) | null;
}

/** A key to look at: `expiring` when an old value stops working at `at`; `unused` when no value ever authenticated (`at`: its creation). */
export interface KeyToCheck {
  id: number;
  name: string;
  why: 'expiring' | 'unused';
  at: Date;
}

/** What one attempt answered: the HTTP status, or the error (a refused connection, a timeout). */
export function attemptOutcome(a: DeliveryView['attempts'][number] | undefined): string {
  if (!a) return 'not attempted yet';
  return a.response_status !== null ? `HTTP ${a.response_status}` : (a.error ?? 'no answer');
}

/** `n` and `noun`, with an s when `n` is not 1: `1 key`, `3 keys`. */
function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/**
 * One section of the overview: a heading (`id` labels the section), the table of `rows` (label,
 * caption and columns as dataTable takes them), or the sentence `empty` when there are none,
 * and a link onward.
 */
function overviewSection<T>(s: {
  id: string;
  heading: string;
  rows: readonly T[];
  label: string;
  caption: string;
  columns: Column<T>[];
  empty: string;
  link: { href: string; text: string };
}) {
  return html`<section aria-labelledby=${s.id}>
    <h2 id=${s.id}>${s.heading}</h2>
    ${s.rows.length ? dataTable({ label: s.label, caption: s.caption, columns: s.columns, rows: s.rows }) : html`<p>${s.empty}</p>`}
    <p><a href=${s.link.href}>${s.link.text}</a></p>
  </section>`;
}

/** The overview of `mode`: recent purchases, failing endpoints, keys to check; each section says when it has nothing. */
export function overviewPage(
  frame: Frame,
  data: { mode: KeyMode; purchases: PurchaseSearchResponse['purchases']; failing: FailingEndpoint[]; keys: KeyToCheck[] },
): string {
  const { mode, purchases, failing, keys } = data;
  return page(
    frame,
    html`${overviewSection({
      id: 'recent-purchases',
      heading: 'Recent purchases',
      rows: purchases,
      label: `Recent ${mode} purchases`,
      caption: `The newest ${counted(purchases.length, `paid ${mode} purchase`)}.`,
      columns: [
        {
          header: 'Purchase',
          rowHeader: true,
          cell: (p) => html`<a href=${`/portal/purchases/${p.purchase_id}?mode=${mode}`}>#${p.purchase_id}</a>`,
        },
        { header: 'Buyer', cell: (p) => p.buyer.name },
        { header: 'Products', cell: (p) => p.products.map((x) => x.product_name).join(', ') },
        { header: 'Paid', cell: (p) => when(p.paid_at) },
        { header: 'Status', cell: (p) => p.status },
      ],
      empty: `No paid ${mode} purchases yet.`,
      link: { href: `/portal/purchases?mode=${mode}`, text: 'Find a purchase' },
    })}
    ${overviewSection({
      id: 'failing-endpoints',
      heading: 'Webhook endpoints failing',
      rows: failing,
      label: `Failing ${mode} webhook endpoints`,
      caption: `${counted(failing.length, `${mode} endpoint`)} whose last delivery failed or gave up.`,
      columns: [
        { header: 'Endpoint', rowHeader: true, cell: (f) => f.endpoint.url },
        { header: 'Status', cell: (f) => f.endpoint.status },
        { header: 'Last event', cell: (f) => (f.latest ? f.latest.event_type : '—') },
        {
          header: 'Last attempt',
          cell: (f) => {
            const last = f.latest?.attempts.at(-1);
            return last ? `${attemptOutcome(last)}, ${when(last.attempted_at)}` : '—';
          },
        },
      ],
      empty: `No ${mode} endpoint is failing: each one's last delivery succeeded or is still on its first try.`,
      link: { href: `/portal/webhooks?mode=${mode}`, text: 'All webhook endpoints' },
    })}
    ${overviewSection({
      id: 'keys-to-check',
      heading: 'Keys to check',
      rows: keys,
      label: `${mode} keys to check`,
      caption: `${counted(keys.length, `${mode} key`)} with an old value about to stop working (within 7 days) or never used.`,
      columns: [
        { header: 'Key', rowHeader: true, cell: (k) => k.name },
        {
          header: 'Why',
          cell: (k) => (k.why === 'expiring' ? `Its old value stops working at ${utc(k.at)}` : `Never used (created ${utc(k.at)})`),
        },
      ],
      empty: `No ${mode} key has a value about to stop working, and every one has been used.`,
      link: { href: `/portal/keys?mode=${mode}`, text: 'All API keys' },
    })}`,
  );
}
