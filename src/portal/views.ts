/**
 * The portal's pages, rendered on the server with Preact (htm tagged templates, no build step):
 * every value is escaped by the renderer, so a key's name or an audit entry's text is shown as
 * text, never as markup.
 *
 * Each page has one h1, a skip link, labelled navigation, a test/live switch where the data has
 * a mode, forms whose fields carry their labels, hints and errors (`aria-describedby`,
 * `aria-invalid`), and the CSRF token. Times are shown in UTC (ISO 8601, to the minute).
 */
import { html } from 'htm/preact';
import { render } from 'preact-render-to-string';
import type { VNode } from 'preact';
import type { KeyListing } from '../api-keys/service';
import type { KeyMode } from '../api-keys/secrets';
import type { PortalRole, Teammate } from '../accounts/types';
import type { AuditEntry } from '../audit/types';
import { descriptionList } from './description-list';
import { dataTable } from './table';
import { errorSummary, mistakesOf } from '../http/error-summary';

type Node = VNode | VNode[] | string | null;

/** Who is signed in, as the header shows it. */
export interface Viewer {
  name: string;
  email: string;
  role: PortalRole;
  accountName: string;
  accountSlug: string;
}

export interface Frame {
  title: string;
  csrf: string;
  viewer?: Viewer;
  active?: 'overview' | 'keys' | 'webhooks' | 'events' | 'purchases' | 'claims' | 'audit' | 'account';
  /** The test/live switch: the current mode and the page's link for a mode. */
  modes?: { current: KeyMode; href: (mode: KeyMode) => string };
  flash?: string | null;
  /** The page is about live data (without a test/live switch: a live key's confirmation). */
  live?: boolean;
}

export const utc = (d: Date | null | undefined) => (d ? `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC` : '');

/** An ISO 8601 time from the API as `utc` shows it; `—` for none. */
export const when = (iso: string | null | undefined) => (iso ? utc(new Date(iso)) : '—');

/**
 * `text` with a line-break opportunity (<wbr>) after each `.`, `_`, `/` and `-`, so a long name
 * such as `certificates.issued` or `agency_website_checkout` wraps at its parts on a narrow screen
 * instead of overflowing it or breaking inside a word (issue 53, item 9).
 */
export function breakable(text: string): (string | VNode)[] {
  return text.split(/(?<=[._/-])/).flatMap((part, i) => (i === 0 ? [part] : [html`<wbr />` as VNode, part]));
}

/** A full HTML document for `body` in the portal's frame. */
export function page(frame: Frame, body: Node): string {
  const live = frame.live ?? frame.modes?.current === 'live';
  const nav = (href: string, label: string, key: Frame['active']) =>
    html`<li><a href=${href} aria-current=${frame.active === key ? 'page' : undefined}>${label}</a></li>`;
  const doc = html`<html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>${frame.title} · Agency portal</title>
      <link rel="stylesheet" href="/portal/assets/portal.css" />
      <script src="/portal/assets/portal.js" defer></script>
    </head>
    <body>
      <a class="skip" href="#main">Skip to content</a>
      <header>
        <span class="brand">Agency portal${frame.viewer ? ` · ${frame.viewer.accountName}` : ''}</span>
        ${
          frame.viewer
            ? html`<nav aria-label="Portal">
                <ul>
                  ${nav('/portal', 'Overview', 'overview')} ${nav('/portal/keys', 'API keys', 'keys')} ${nav('/portal/webhooks', 'Webhooks', 'webhooks')}
                  ${nav('/portal/events', 'Events', 'events')} ${nav('/portal/purchases', 'Purchases', 'purchases')} ${nav('/portal/claims', 'Claims', 'claims')}
                  ${nav('/portal/audit', 'Audit log', 'audit')} ${nav('/portal/account', 'Account', 'account')}
                </ul>
              </nav>
              <span>${frame.viewer.name} (${frame.viewer.role})</span>
              <form method="post" action="/portal/sign-out">
                <input type="hidden" name="_csrf" value=${frame.csrf} />
                <button type="submit">Sign out</button>
              </form>`
            : null
        }
      </header>
      <main id="main" tabindex="-1">
        <h1>${breakable(frame.title)}</h1>
        ${
          frame.modes
            ? html`<nav class="modes" aria-label="Data mode">
              ${(['test', 'live'] as const).map(
                (m) =>
                  html`<a href=${frame.modes!.href(m)} aria-current=${frame.modes!.current === m ? 'true' : undefined}
                    >${m === 'test' ? 'Test data' : 'Live data'}</a
                  >`,
              )}
            </nav>`
            : null
        }
        ${
          live
            ? html`<p class="live-banner" id="live-banner">
                <strong>Live data.</strong> Keys, endpoints and purchases here are real: changes affect real buyers, payments and
                certificates.
              </p>`
            : null
        }
        ${frame.flash ? html`<p class="notice" role="status">${frame.flash}</p>` : null} ${body}
      </main>
    </body>
  </html>`;
  return `<!doctype html>${render(doc as VNode)}`;
}

/** A message page: signed out, an error, a refusal. */
export function messagePage(frame: Frame, message: string, link?: { href: string; label: string }): string {
  return page(frame, html`<p>${message}</p>${link ? html`<p><a href=${link.href}>${link.label}</a></p>` : null}`);
}

export const csrfField = (csrf: string) => html`<input type="hidden" name="_csrf" value=${csrf} />`;

/** One labelled field with its hint and error (the error is read with the field). */
export function field(props: {
  id: string;
  label: string;
  name: string;
  value?: string;
  hint?: string;
  error?: string;
  type?: string;
  required?: boolean;
  inputmode?: string;
  maxlength?: number;
}): VNode {
  const describedBy = [props.hint ? `${props.id}-hint` : '', props.error ? `${props.id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return html`<div>
    <label for=${props.id}>${props.label}${props.required ? '' : ' (optional)'}</label>
    ${props.hint ? html`<p class="hint" id=${`${props.id}-hint`}>${props.hint}</p>` : null}
    <input
      id=${props.id}
      name=${props.name}
      type=${props.type ?? 'text'}
      value=${props.value ?? ''}
      required=${props.required || undefined}
      inputmode=${props.inputmode}
      maxlength=${props.maxlength}
      aria-describedby=${describedBy}
      aria-invalid=${props.error ? 'true' : undefined}
    />
    ${props.error ? html`<p class="field-error" id=${`${props.id}-error`}>${props.error}</p>` : null}
  </div>` as VNode;
}

/** The create-key form's values and what was wrong with them. */
export interface CreateKeyForm {
  values: { name: string; description: string; agentId: string; platformFeeBps: string };
  errors: Partial<Record<'name' | 'description' | 'agentId' | 'platformFeeBps', string>>;
  formError?: string;
}

export const emptyCreateKeyForm = (): CreateKeyForm => ({
  values: { name: '', description: '', agentId: '', platformFeeBps: '' },
  errors: {},
});

const GRACE_CHOICES = [0, 1, 24, 72, 168];
const ROLES: readonly PortalRole[] = ['admin', 'viewer', 'adjuster'];

/** The choice of how long an old value keeps working after a rotation (`grace_hours`), `preset` chosen. */
function graceSelect(id: string, preset: number): VNode {
  return html`<select id=${id} name="grace_hours">
    ${[...new Set([...GRACE_CHOICES, preset])]
      .sort((a, b) => a - b)
      .map(
        (h) =>
          html`<option value=${String(h)} selected=${h === preset}>${h === 0 ? 'no time (stops now)' : `${h} hour${h === 1 ? '' : 's'}`}</option>`,
      )}
  </select>` as VNode;
}

/** When any value of the key last authenticated a request, or null when none ever did. */
export const lastUsed = (k: KeyListing): Date | null =>
  k.values.reduce<Date | null>((a, v) => (v.lastUsedAt && (!a || v.lastUsedAt > a) ? v.lastUsedAt : a), null);

/**
 * Asks before rotating or freezing a live key (issue 53, item 6), naming the key and its mode:
 * the form posts the change with `confirm=yes` (and, to rotate, the grace chosen); `Keep it`
 * goes back to the live keys.
 */
export function confirmLiveKeyPage(
  frame: Frame,
  data: { key: { id: number; name: string }; change: 'rotate' | 'freeze'; defaultGraceHours: number },
): string {
  const { key, change } = data;
  return page(
    frame,
    html`<p>
        ${
          change === 'rotate'
            ? html`Rotating the <strong>live</strong> key <strong>${breakable(key.name)}</strong> issues a new value for your
                server. The old value keeps working for the time chosen below; after that, live requests made with it are refused.`
            : html`Freezing the <strong>live</strong> key <strong>${breakable(key.name)}</strong> refuses every live request made
                with it at once (sales through it stop) until it is unfrozen.`
        }
      </p>
      <form method="post" action=${`/portal/keys/${key.id}/${change}`}>
        ${csrfField(frame.csrf)}
        <input type="hidden" name="confirm" value="yes" />
        ${
          change === 'rotate'
            ? html`<label for="confirm-grace">Old value works for</label> ${graceSelect('confirm-grace', data.defaultGraceHours)}`
            : null
        }
        <button type="submit" class="danger">${change === 'rotate' ? 'Rotate' : 'Freeze'} the live key ${key.name}</button>
        <a href="/portal/keys?mode=live">Keep it as it is</a>
      </form>`,
  );
}

/** API keys of one mode: their values' prefixes and expiry, actions for an admin, the create form. */
export function keysPage(
  frame: Frame,
  data: { keys: KeyListing[]; mode: KeyMode; canChange: boolean; teammates: Teammate[]; form: CreateKeyForm; defaultGraceHours: number },
): string {
  const { keys, mode, canChange, form } = data;
  const agentName = (id: number | null) => (id === null ? '—' : (data.teammates.find((t) => t.id === id)?.name ?? `#${id}`));
  const actions = (k: KeyListing) => html`
    ${
      k.status === 'active' && k.mode === 'live'
        ? html`<a href=${`/portal/keys/${k.id}/rotate`} aria-label=${`Rotate ${k.name}`}>Rotate…</a>
            <a href=${`/portal/keys/${k.id}/freeze`} aria-label=${`Freeze ${k.name}`}>Freeze…</a>`
        : null
    }
    ${
      k.status === 'active' && k.mode === 'test'
        ? html`<form method="post" action=${`/portal/keys/${k.id}/rotate`}>
            ${csrfField(frame.csrf)}
            <label for=${`grace-${k.id}`}>Old value works for</label>
            ${graceSelect(`grace-${k.id}`, data.defaultGraceHours)}
            <button type="submit" class="secondary" aria-label=${`Rotate ${k.name}`}>Rotate</button>
          </form>
          <form method="post" action=${`/portal/keys/${k.id}/freeze`}>
            ${csrfField(frame.csrf)}<button type="submit" class="secondary" aria-label=${`Freeze ${k.name}`}>Freeze</button>
          </form>`
        : null
    }
    ${
      k.status === 'frozen'
        ? html`<form method="post" action=${`/portal/keys/${k.id}/unfreeze`}>
          ${csrfField(frame.csrf)}<button type="submit" class="secondary" aria-label=${`Unfreeze ${k.name}`}>Unfreeze</button>
        </form>`
        : null
    }
    ${k.status !== 'deleted' ? html`<a href=${`/portal/keys/${k.id}/delete?mode=${mode}`} aria-label=${`Delete ${k.name}`}>Delete…</a>` : null}
  `;
  const createForm = canChange
    ? html`<form method="post" action="/portal/keys" novalidate>
        ${csrfField(frame.csrf)}
        <input type="hidden" name="mode" value=${mode} />
        ${errorSummary(
          mistakesOf(
            form.errors,
            { name: 'key-name', description: 'key-description', agentId: 'key-agent', platformFeeBps: 'key-fee' },
            form.formError,
          ),
        )}
        <fieldset>
          <legend>Create a ${mode} key</legend>
          ${field({ id: 'key-name', name: 'name', label: 'Name', value: form.values.name, error: form.errors.name, required: true, maxlength: 200 })}
          ${field({
            id: 'key-description',
            name: 'description',
            label: 'Description',
            value: form.values.description,
            error: form.errors.description,
            maxlength: 1000,
          })}
          <div>
            <label for="key-agent">Agent (optional)</label>
            <p class="hint" id="key-agent-hint">Sales made with the key are the agent's.</p>
            <select
              id="key-agent"
              name="agent_id"
              aria-describedby=${form.errors.agentId ? 'key-agent-hint key-agent-error' : 'key-agent-hint'}
              aria-invalid=${form.errors.agentId ? 'true' : undefined}
            >
              <option value="">No agent</option>
              ${data.teammates.map(
                (t) => html`<option value=${String(t.id)} selected=${form.values.agentId === String(t.id)}>${t.name} (${t.email})</option>`,
              )}
            </select>
            ${form.errors.agentId ? html`<p class="field-error" id="key-agent-error">${form.errors.agentId}</p>` : null}
          </div>
          ${field({
            id: 'key-fee',
            name: 'platform_fee_bps',
            label: 'Platform fee in basis points',
            hint: 'Added at checkout to sales made with the key: 100 basis points are 1 %. A whole number from 0 to 10000.',
            value: form.values.platformFeeBps,
            error: form.errors.platformFeeBps,
            inputmode: 'numeric',
          })}
          <button type="submit">Create key</button>
        </fieldset>
      </form>`
    : html`<p>Your role (viewer) can read keys; an admin creates and changes them.</p>`;
  return page(
    frame,
    html`${dataTable({
      label: `${mode} API keys`,
      caption: `${keys.length} ${mode} key${keys.length === 1 ? '' : 's'}. A key's value is shown once, when it is created or rotated.`,
      columns: [
        { header: 'Name', rowHeader: true, cell: (k) => html`${k.name}<div class="hint">${k.description}</div>` },
        { header: 'Status', cell: (k) => k.status },
        {
          header: 'Values',
          cell: (k) =>
            k.values
              .filter((v) => v.state !== 'expired')
              .map(
                (v) =>
                  html`<div>
                    <code>${v.displayPrefix}…</code> ${v.state === 'current' ? 'current' : `works until ${utc(v.expiresAt)}`}${
                      v.state === 'grace' ? `, ${v.lastUsedAt ? `last used ${utc(v.lastUsedAt)}` : 'not used since'}` : ''
                    }
                  </div>`,
              ),
        },
        { header: 'Agent', cell: (k) => agentName(k.agentId) },
        { header: 'Platform fee', cell: (k) => (k.platformFeeBps === null ? '—' : `${k.platformFeeBps} bps`) },
        { header: 'Created', cell: (k) => utc(k.createdAt) },
        { header: 'Last used', cell: (k) => utc(lastUsed(k)) || 'never' },
        canChange && { header: 'Actions', cell: actions },
      ],
      rows: keys,
    })}
      ${createForm}`,
  );
}

/** The value of a key just created or rotated (`change`): shown once, with a copy button. */
export function issuedKeyPage(
  frame: Frame,
  key: { name: string; mode: KeyMode; value: string; change: 'created' | 'rotated'; previousValueExpiresAt?: string },
): string {
  return page(
    frame,
    html`<p class="notice" role="status">
        ${key.change === 'created' ? `Key "${key.name}" created (${key.mode}).` : `Key "${key.name}" rotated.`} Store the value now: it is not shown again.
      </p>
      <p><strong>Key value</strong></p>
      <code class="secret" id="key-value">${key.value}</code>
      <button type="button" class="copy secondary" data-copy="key-value">Copy the value</button>
      <p id="key-value-status" role="status"></p>
      ${
        key.previousValueExpiresAt
          ? html`<p>The old value works until <strong>${utc(new Date(key.previousValueExpiresAt))}</strong>.</p>`
          : null
      }
      <p><a href=${`/portal/keys?mode=${key.mode}`}>Back to the ${key.mode} keys</a></p>`,
  );
}

/**
 * Asks before deleting something for good: `lead` says what it stops; the form posts to
 * `action` only with the confirmation box ticked (else `error` beside the box); `back` keeps it.
 */
export function confirmDeletePage(
  frame: Frame,
  data: { what: string; name: string; lead: string; action: string; back: string; error?: string },
): string {
  const { error } = data;
  return page(
    frame,
    html`<p>Deleting ${data.what} <strong>${breakable(data.name)}</strong> ${data.lead}</p>
      <form method="post" action=${data.action}>
        ${csrfField(frame.csrf)} ${errorSummary(error ? [{ message: error, fieldId: 'confirm-delete' }] : [])}
        <div>
          <input
            type="checkbox"
            id="confirm-delete"
            name="confirm"
            value="yes"
            aria-describedby=${error ? 'confirm-delete-error' : undefined}
            aria-invalid=${error ? 'true' : undefined}
          />
          <label for="confirm-delete" class="inline">I understand that deleting the ${data.what} is permanent</label>
          ${error ? html`<p class="field-error" id="confirm-delete-error">${error}</p>` : null}
        </div>
        <button type="submit" class="danger">Delete the ${data.what}</button>
        <a href=${data.back}>Keep it</a>
      </form>`,
  );
}

/** Asks before deleting a key (permanent), naming its mode. */
export function deleteKeyPage(frame: Frame, key: { id: number; name: string; mode: KeyMode }, error?: string): string {
  return confirmDeletePage(frame, {
    what: `${key.mode} key`,
    name: key.name,
    lead: 'stops every value of it at once, for good. Requests with it are refused.',
    action: `/portal/keys/${key.id}/delete`,
    back: `/portal/keys?mode=${key.mode}`,
    error,
  });
}

/**
 * What a change was made to: a created key by its new id, else the recorded target; with its
 * name when `names` knows it (keyed `<kind>:<id>`, e.g. `api_key:12` → the key's name).
 */
export function targetText(e: AuditEntry, names: ReadonlyMap<string, string> = new Map()): string {
  const [kind, id] = e.details?.api_key_id != null ? ['api_key', String(e.details.api_key_id)] : [e.targetKind, e.targetId];
  if (!kind) return '—';
  const name = id ? names.get(`${kind}:${id}`) : undefined;
  return `${`${kind.replace(/_/g, ' ')} ${id ?? ''}`.trim()}${name ? ` “${name}”` : ''}`;
}

/** The audit log's filters as typed (who, what: a part of it; from, to: UTC days YYYY-MM-DD, both included) and what was wrong with them. */
export interface AuditFilters {
  values: { who: string; what: string; from: string; to: string };
  errors: Partial<Record<'from' | 'to', string>>;
}

/** The query string of `filters` (empty ones left out) with `extra`, for a link that keeps them. */
export function auditQuery(filters: AuditFilters['values'], extra: Record<string, string> = {}): string {
  const q = new URLSearchParams(Object.entries({ ...filters, ...extra }).filter(([, v]) => v !== ''));
  return q.size ? `?${q.toString()}` : '';
}

/**
 * The account's audit log (issue 53, item 8): every change made through the portal and the
 * command lines, 50 a page newest first, filtered by who, what and when (a GET form, its mistakes
 * in an error summary), with links to the newer and older pages and to the CSV of every entry the
 * filters match (up to 10 000).
 */
export function auditPage(
  frame: Frame,
  data: {
    entries: AuditEntry[];
    filters: AuditFilters;
    page: number;
    hasMore: boolean;
    pageSize: number;
    /** Targets' names by `<kind>:<id>` (keys, endpoints), shown beside their ids. */
    names?: ReadonlyMap<string, string>;
  },
): string {
  const { entries, filters, page: at } = data;
  const v = filters.values;
  const filtered = Boolean(v.who || v.what || v.from || v.to);
  const first = at * data.pageSize + 1;
  return page(
    frame,
    html`<form method="get" action="/portal/audit" role="search" aria-label="Filter the audit log" novalidate>
        ${errorSummary(mistakesOf(filters.errors, { from: 'audit-from', to: 'audit-to' }))}
        ${field({ id: 'audit-who', name: 'who', label: 'Who', hint: 'A part of an email or name.', value: v.who, maxlength: 200 })}
        ${field({ id: 'audit-what', name: 'what', label: 'What', hint: 'A part of the action, e.g. rotate or webhook.', value: v.what, maxlength: 100 })}
        ${field({ id: 'audit-from', name: 'from', label: 'From (UTC day)', hint: 'YYYY-MM-DD, included.', value: v.from, error: filters.errors.from, maxlength: 10 })}
        ${field({ id: 'audit-to', name: 'to', label: 'To (UTC day)', hint: 'YYYY-MM-DD, included.', value: v.to, error: filters.errors.to, maxlength: 10 })}
        <button type="submit">Filter</button>
        ${filtered ? html` <a href="/portal/audit">Clear the filters</a>` : null}
      </form>
      ${
        entries.length
          ? dataTable({
              label: 'Audit log',
              caption: `Changes ${first} to ${first + entries.length - 1} to this account${filtered ? ' matching the filters' : ''}, newest first.`,
              columns: [
                { header: 'When', cell: (e) => utc(e.startedAt) },
                { header: 'Who', cell: (e) => e.actor },
                {
                  header: 'Through',
                  cell: (e) =>
                    e.actorKind === 'portal' ? 'portal' : e.actorKind === 'key_cli' ? 'key command line' : 'operator command line',
                },
                {
                  header: 'What',
                  cell: (e) => html`${e.action.replace(/_/g, ' ')}${e.reason ? html`<div class="hint">${e.reason}</div>` : null}`,
                },
                { header: 'Target', cell: (e) => targetText(e, data.names) },
                {
                  header: 'Outcome',
                  cell: (e) =>
                    html`${e.outcome ?? 'no outcome recorded'}${e.outcomeDetail ? html`<div class="hint">${e.outcomeDetail}</div>` : null}`,
                },
                { header: 'From', cell: (e) => e.clientAddress ?? '—' },
              ],
              rows: entries,
            })
          : html`<p>${filtered ? 'No change to this account matches the filters.' : 'No change to this account yet.'}</p>`
      }
      <nav aria-label="Audit log pages">
        <ul class="pager">
          ${at > 0 ? html`<li><a href=${`/portal/audit${auditQuery(v, at > 1 ? { page: String(at) } : {})}`}>Newer changes</a></li>` : null}
          ${data.hasMore ? html`<li><a href=${`/portal/audit${auditQuery(v, { page: String(at + 2) })}`}>Older changes</a></li>` : null}
          <li><a href=${`/portal/audit.csv${auditQuery(v)}`} download>Export ${filtered ? 'these changes' : 'every change'} as CSV</a></li>
        </ul>
      </nav>`,
  );
}

/** The account page's return-URL form: values as typed and what was wrong with them. */
export interface ReturnUrlsForm {
  values: { successUrl: string; cancelUrl: string };
  errors: Partial<Record<'successUrl' | 'cancelUrl', string>>;
}

/**
 * The account: its public ids, checkout return URLs (an admin changes them) and teammates with
 * their portal roles (an admin changes them; the last admin stays one).
 */
export function accountPage(
  frame: Frame,
  data: {
    account: {
      slug: string;
      name: string;
      idpRootAccountUuid: string;
      checkoutSuccessUrl: string | null;
      checkoutCancelUrl: string | null;
    };
    teammates: Teammate[];
    canChange: boolean;
    form?: ReturnUrlsForm;
  },
): string {
  const a = data.account;
  const form = data.form ?? { values: { successUrl: a.checkoutSuccessUrl ?? '', cancelUrl: a.checkoutCancelUrl ?? '' }, errors: {} };
  return page(
    frame,
    html`${descriptionList([
      ['Name', a.name],
      ['Slug', html`<code>${a.slug}</code>`],
      ['Root account id', html`<code>${a.idpRootAccountUuid}</code>`],
      ['Checkout success URL', a.checkoutSuccessUrl ?? "the service's own page"],
      ['Checkout cancel URL', a.checkoutCancelUrl ?? "the service's own page"],
    ])}
      ${
        data.canChange
          ? html`<form method="post" action="/portal/account/return-urls" novalidate>
            ${csrfField(frame.csrf)} ${errorSummary(mistakesOf(form.errors, { successUrl: 'success-url', cancelUrl: 'cancel-url' }))}
            <fieldset>
              <legend>Checkout return URLs</legend>
              <p class="hint">Where the payment processor sends a buyer after paying or cancelling, unless the key sets its own. Empty: the service's own page.</p>
              ${field({
                id: 'success-url',
                name: 'success_url',
                label: 'Success URL',
                type: 'url',
                value: form.values.successUrl,
                error: form.errors.successUrl,
                maxlength: 2048,
              })}
              ${field({
                id: 'cancel-url',
                name: 'cancel_url',
                label: 'Cancel URL',
                type: 'url',
                value: form.values.cancelUrl,
                error: form.errors.cancelUrl,
                maxlength: 2048,
              })}
              <button type="submit">Save the return URLs</button>
            </fieldset>
          </form>`
          : null
      }
      ${dataTable({
        label: 'Teammates',
        caption: 'Teammates and their portal roles (admin: changes; viewer: reads; adjuster: decides an insurer’s or MGA’s claims)',
        columns: [
          { header: 'Name', cell: (t) => t.name },
          { header: 'Email', cell: (t) => t.email },
          { header: 'Teammate id', cell: (t) => html`<code>${t.idpTeammateUuid}</code>` },
          {
            header: 'Role',
            cell: (t) =>
              data.canChange
                ? html`<form method="post" action=${`/portal/teammates/${t.id}/role`}>
                    ${csrfField(frame.csrf)}
                    <label for=${`role-${t.id}`} class="inline">Role of ${t.name}</label>
                    <select id=${`role-${t.id}`} name="role">
                      ${ROLES.map((r) => html`<option value=${r} selected=${t.portalRole === r}>${r}</option>`)}
                    </select>
                    <button type="submit" class="secondary" aria-label=${`Save the role of ${t.name}`}>Save</button>
                  </form>`
                : t.portalRole,
          },
        ],
        rows: data.teammates,
      })}`,
  );
}
