/**
 * The portal's pages about what the account's integration receives: webhook endpoints (the
 * create form, enable/disable, delete after confirming, and the secret shown once) and events
 * (the newest, one event's deliveries with every attempt, and a resend). Times in UTC. Same
 * rendering and accessibility rules as src/portal/views.ts.
 */
import { html } from 'htm/preact';
import type { KeyMode } from '../api-keys/secrets';
import type { WebhookEndpointRead } from '../webhook-endpoints/schemas';
import type { DeliveryView } from '../events/service';
import type { AgencyEvent } from '../events/types';
import { AGENCY_EVENT_TYPES, ENDPOINT_TEST_EVENT_TYPE as TEST_EVENT } from '../events/types';
import { confirmDeletePage, csrfField, field, page, utc, when, type Frame } from './views';
import { descriptionList } from './description-list';
import { dataTable } from './table';
import { errorSummary, mistakesOf } from '../http/error-summary';

/** The create-endpoint form's values and what was wrong with them. */
export interface EndpointForm {
  values: { url: string; description: string; events: string[] };
  errors: Partial<Record<'url' | 'description' | 'events', string>>;
  formError?: string;
}

export const emptyEndpointForm = (): EndpointForm => ({ values: { url: '', description: '', events: ['*'] }, errors: {} });

/** The account's webhook endpoints of one mode, actions for an admin, the create form. */
export function webhooksPage(
  frame: Frame,
  data: { endpoints: WebhookEndpointRead[]; mode: KeyMode; canChange: boolean; form: EndpointForm },
): string {
  const { endpoints, mode, canChange, form } = data;
  const eventsError = form.errors.events;
  return page(
    frame,
    html`${dataTable({
      label: `${mode} webhook endpoints`,
      caption: `${endpoints.length} ${mode} endpoint${endpoints.length === 1 ? '' : 's'}. Each event is signed with the endpoint's secret, shown once when it is created.`,
      columns: [
        {
          header: 'URL',
          rowHeader: true,
          cell: (e) =>
            html`<a href=${`/portal/webhooks/${e.id}?mode=${mode}`} aria-label=${`Deliveries to ${e.url}`}>${e.url}</a>
              <div class="hint">${e.description}</div>`,
        },
        { header: 'Events', cell: (e) => e.enabled_events.join(', ') },
        { header: 'Status', cell: (e) => e.status },
        { header: 'Created', cell: (e) => when(e.created_at) },
        canChange && {
          header: 'Actions',
          cell: (
            e,
          ) => html`<form method="post" action=${`/portal/webhooks/${e.id}/${e.status === 'enabled' ? 'disable' : 'enable'}?mode=${mode}`}>
                ${csrfField(frame.csrf)}
                <button type="submit" class="secondary" aria-label=${`${e.status === 'enabled' ? 'Disable' : 'Enable'} ${e.url}`}>
                  ${e.status === 'enabled' ? 'Disable' : 'Enable'}
                </button>
              </form>
              <a href=${`/portal/webhooks/${e.id}/delete?mode=${mode}`} aria-label=${`Delete ${e.url}`}>Delete…</a>`,
        },
      ],
      rows: endpoints,
    })}
      ${
        canChange
          ? html`<form method="post" action=${`/portal/webhooks?mode=${mode}`} novalidate>
            ${csrfField(frame.csrf)}
            ${errorSummary(
              mistakesOf(form.errors, { url: 'endpoint-url', description: 'endpoint-description', events: 'event-all' }, form.formError),
            )}
            <fieldset>
              <legend>Add a ${mode} endpoint</legend>
              ${field({
                id: 'endpoint-url',
                name: 'url',
                label: 'URL',
                hint: mode === 'live' ? 'An https URL on a public host.' : 'http or https; a local address is fine in test mode.',
                value: form.values.url,
                error: form.errors.url,
                required: true,
                type: 'url',
                maxlength: 2048,
              })}
              ${field({
                id: 'endpoint-description',
                name: 'description',
                label: 'Description',
                value: form.values.description,
                error: form.errors.description,
                maxlength: 500,
              })}
              <fieldset aria-describedby=${eventsError ? 'endpoint-events-error' : undefined}>
                <legend>Events to send</legend>
                ${['*', ...AGENCY_EVENT_TYPES].map(
                  (t) => html`<div>
                    <input
                      type="checkbox"
                      id=${`event-${t === '*' ? 'all' : t}`}
                      name="events"
                      value=${t}
                      checked=${form.values.events.includes(t)}
                    />
                    <label for=${`event-${t === '*' ? 'all' : t}`} class="inline">${t === '*' ? 'All events' : t}</label>
                  </div>`,
                )}
                ${eventsError ? html`<p class="field-error" id="endpoint-events-error">${eventsError}</p>` : null}
              </fieldset>
              <button type="submit">Add endpoint</button>
            </fieldset>
          </form>`
          : html`<p>Your role (viewer) can read endpoints; an admin adds and changes them.</p>`
      }`,
  );
}

/** A delivery to one endpoint as its page lists it: the delivery, its event's id and type, and when it is tried next (null: not again). */
export type EndpointDelivery = DeliveryView & { event_id: string; event_type: string; next_retry_at: string | null };

/**
 * When a delivery is tried next, by the delivery workflow's schedule (workflows/event-delivery.ts:
 * the n-th failed attempt waits `initialSeconds`·2^(n−1) s, at most an hour, within `windowSeconds`
 * of the delivery's start): null unless it is pending after a failed attempt, or when that retry
 * would fall after the window (it gives up then). Attempts before a resend count too, so after a
 * resend this is an estimate.
 */
export function nextRetryAt(d: DeliveryView, retry: { initialSeconds: number; windowSeconds: number }): string | null {
  const last = d.attempts.at(-1);
  if (d.status !== 'pending' || !last) return null;
  const wait = Math.min(retry.initialSeconds * 2 ** (d.attempts.length - 1), 3600);
  const at = Date.parse(last.attempted_at) + wait * 1000;
  return at > Date.parse(d.created_at) + retry.windowSeconds * 1000 ? null : new Date(at).toISOString();
}

/**
 * One endpoint's page (issue 53, item 5): what it takes, its newest deliveries (event, status,
 * attempts, last response, next retry), refreshed in place every 5 s by the portal's script (for
 * ten minutes; a status line says when they changed) and by a plain link, and for an admin "send
 * a test event": a new `webhook_endpoint.test` event naming the endpoint, to it alone.
 */
export function endpointPage(
  frame: Frame,
  data: { endpoint: WebhookEndpointRead; deliveries: EndpointDelivery[]; mode: KeyMode; canChange: boolean },
): string {
  const { endpoint, deliveries, mode } = data;
  const self = `/portal/webhooks/${endpoint.id}?mode=${mode}`;
  return page(
    frame,
    html`${descriptionList([
      ['URL', endpoint.url],
      ['Events', endpoint.enabled_events.join(', ')],
      ['Status', endpoint.status],
      ['Created', when(endpoint.created_at)],
    ])}
      <h2>Recent deliveries</h2>
      <div id="endpoint-deliveries" data-refresh-seconds="5">
      ${
        deliveries.length
          ? dataTable({
              label: `Deliveries to ${endpoint.url}`,
              caption: `The newest ${deliveries.length} ${deliveries.length === 1 ? 'delivery' : 'deliveries'} to this endpoint, newest first.`,
              columns: [
                {
                  header: 'Event',
                  rowHeader: true,
                  cell: (d) => html`<a href=${`/portal/events/${d.event_id}?mode=${mode}`}>${d.event_type}</a>`,
                },
                { header: 'Status', cell: (d) => d.status },
                { header: 'Attempts', cell: (d) => String(d.attempts.length) },
                {
                  header: 'Last response',
                  cell: (d) => {
                    const last = d.attempts.at(-1);
                    return last ? (last.response_status !== null ? `HTTP ${last.response_status}` : (last.error ?? 'no answer')) : '—';
                  },
                },
                { header: 'Last attempt', cell: (d) => when(d.attempts.at(-1)?.attempted_at) },
                { header: 'Next retry', cell: (d) => when(d.next_retry_at) },
              ],
              rows: deliveries,
            })
          : html`<p>Nothing was sent to this endpoint yet.</p>`
      }
      </div>
      <p class="hint" id="endpoint-deliveries-status" role="status"></p>
      <p><a href=${self}>Refresh the deliveries</a> (they also refresh by themselves every few seconds while the page is open)</p>
      ${
        data.canChange
          ? html`<form method="post" action=${`/portal/webhooks/${endpoint.id}/test?mode=${mode}`}>
              ${csrfField(frame.csrf)}
              <p class="hint" id="test-event-hint">
                Sends a ${TEST_EVENT} event naming this endpoint, signed with its secret, to this endpoint only, whatever events it
                takes. It is not one of your events: the events list leaves it out; it shows among the deliveries above.
              </p>
              <button type="submit" aria-describedby="test-event-hint">Send a test event</button>
            </form>`
          : null
      }
      <p><a href=${`/portal/webhooks?mode=${mode}`}>Back to the ${mode} endpoints</a></p>`,
  );
}

/** A new endpoint's signing secret: shown once, with a copy button. */
export function endpointCreatedPage(frame: Frame, endpoint: { url: string; mode: KeyMode; secret: string }): string {
  const { mode } = endpoint;
  return page(
    frame,
    html`<p class="notice" role="status">Endpoint ${endpoint.url} added. Store its signing secret now: it is not shown again.</p>
      <p><strong>Signing secret</strong></p>
      <code class="secret" id="endpoint-secret">${endpoint.secret}</code>
      <button type="button" class="copy secondary" data-copy="endpoint-secret">Copy the secret</button>
      <p id="endpoint-secret-status" role="status"></p>
      <p><a href=${`/portal/webhooks?mode=${mode}`}>Back to the ${mode} endpoints</a></p>`,
  );
}

/** Asks before deleting an endpoint. */
export function deleteEndpointPage(frame: Frame, endpoint: WebhookEndpointRead, error?: string): string {
  const mode = endpoint.livemode ? 'live' : 'test';
  return confirmDeletePage(frame, {
    what: 'endpoint',
    name: endpoint.url,
    lead: 'stops every delivery to it, for good.',
    action: `/portal/webhooks/${endpoint.id}/delete?mode=${mode}`,
    back: `/portal/webhooks?mode=${mode}`,
    error,
  });
}

/** The newest events of one mode. */
export function eventsPage(frame: Frame, data: { events: AgencyEvent[]; mode: KeyMode; total: number }): string {
  return page(
    frame,
    dataTable({
      label: `${data.mode} events`,
      caption: `The newest ${data.events.length} of ${data.total} ${data.mode} events, newest first.`,
      columns: [
        { header: 'Event', rowHeader: true, cell: (e) => html`<a href=${`/portal/events/${e.id}?mode=${data.mode}`}>${e.id}</a>` },
        { header: 'Type', cell: (e) => e.type },
        { header: 'Created', cell: (e) => utc(new Date(e.created * 1000)) },
      ],
      rows: data.events,
    }),
  );
}

/** One event: its deliveries to the endpoints, every attempt's response, and a resend for an admin. */
export function eventPage(
  frame: Frame,
  data: { event: AgencyEvent & { deliveries: DeliveryView[] }; mode: KeyMode; canChange: boolean },
): string {
  const { event, mode } = data;
  return page(
    frame,
    html`${descriptionList([
      ['Type', event.type],
      ['Created', utc(new Date(event.created * 1000))],
    ])}
      ${event.deliveries.length === 0 ? html`<p>No endpoint took this event.</p>` : null}
      ${event.deliveries.map((d) =>
        dataTable({
          label: `Delivery to ${d.url}`,
          caption: `To ${d.url}: ${d.status}, ${d.attempts.length} attempt${d.attempts.length === 1 ? '' : 's'}${d.resends ? `, resent ${d.resends} time${d.resends === 1 ? '' : 's'}` : ''}`,
          columns: [
            { header: 'Attempted', cell: (a) => when(a.attempted_at) },
            { header: 'Response code', cell: (a) => a.response_status ?? '—' },
            { header: 'Error', cell: (a) => a.error ?? '—' },
            { header: 'Took', cell: (a) => `${a.duration_ms} ms` },
          ],
          rows: d.attempts,
        }),
      )}
      ${
        data.canChange
          ? html`<form method="post" action=${`/portal/events/${event.id}/resend?mode=${mode}`}>
                ${csrfField(frame.csrf)}
                <button type="submit">Send the event again</button>
              </form>
              ${
                event.deliveries.length > 1
                  ? html`<h2>Send it again to one endpoint</h2>
                      <ul>
                        ${event.deliveries.map(
                          (d) =>
                            html`<li>
                              <form method="post" action=${`/portal/events/${event.id}/resend?mode=${mode}`}>
                                ${csrfField(frame.csrf)}
                                <input type="hidden" name="endpoint_id" value=${String(d.endpoint_id)} />
                                <button type="submit" class="secondary" aria-label=${`Send again to ${d.url} only`}>
                                  Send again to ${d.url} only
                                </button>
                              </form>
                            </li>`,
                        )}
                      </ul>`
                  : null
              }`
          : null
      }
      <p><a href=${`/portal/events?mode=${mode}`}>Back to the ${mode} events</a></p>`,
  );
}
