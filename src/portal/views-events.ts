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
import { AGENCY_EVENT_TYPES } from '../events/types';
import { confirmDeletePage, csrfField, field, page, utc, when, type Frame } from './views';
import { descriptionList } from './description-list';
import { dataTable } from './table';
import { errorSummary, mistakesOf } from './error-summary';

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
        { header: 'URL', rowHeader: true, cell: (e) => html`${e.url}<div class="hint">${e.description}</div>` },
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
          </form>`
          : null
      }
      <p><a href=${`/portal/events?mode=${mode}`}>Back to the ${mode} events</a></p>`,
  );
}
