/**
 * Webhook endpoints (add with the secret shown once, enable/disable, delete after confirming; one
 * endpoint's page with its newest deliveries and "send a test event" (`webhook_endpoint.test`) to it alone) and
 * events (the newest; one event's deliveries and attempts; send again, to all or to one endpoint), through the API's
 * services for the account in the page's mode. A new endpoint's POST redirects (303) to its
 * `created` page, which shows the signing secret once (kept in the session until shown).
 */
import type Router from '@koa/router';
import type { AppState } from '../../http/context';
import { modeOf, type PortalCtx, type PortalKit } from '../kit';
import type { KeyMode } from '../../api-keys/secrets';
import { AppError } from '../../shared/errors';
import { CreateWebhookEndpointBody } from '../../webhook-endpoints/schemas';
import {
  deleteEndpointPage,
  emptyEndpointForm,
  endpointCreatedPage,
  endpointPage,
  nextRetryAt,
  eventPage,
  eventsPage,
  webhooksPage,
  type EndpointForm,
} from '../views-events';
import { messagePage } from '../views';

export function registerWebhookAndEventPages(pages: Router<AppState>, kit: PortalKit): void {
  const { deps, options, frame, send, redirect, requireAdmin, record, viewOf, idParam, orNotFound, takeReveal } = kit;
  const webhooksView = async (ctx: PortalCtx, mode: KeyMode, form: EndpointForm, status = 200) => {
    const { items } = await deps.webhookEndpoints.list(viewOf(ctx, mode), { pageSize: 100, pageIndex: 0 });
    send(
      ctx,
      status,
      webhooksPage(
        frame(ctx, 'Webhook endpoints', { active: 'webhooks', modes: { current: mode, href: (m) => `/portal/webhooks?mode=${m}` } }),
        {
          endpoints: items,
          mode,
          canChange: ctx.state.teammate!.portalRole === 'admin',
          form,
        },
      ),
    );
  };
  pages.get('/webhooks', async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    await webhooksView(ctx, modeOf(ctx.query.mode), emptyEndpointForm());
  });
  pages.post('/webhooks', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const mode = modeOf(ctx.query.mode);
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : typeof v === 'string' ? [v] : []);
    const form: EndpointForm = {
      values: { url: String(body.url ?? '').trim(), description: String(body.description ?? '').trim(), events: list(body.events) },
      errors: {},
    };
    const events = form.values.events.includes('*') ? ['*'] : form.values.events;
    const parsed = CreateWebhookEndpointBody.safeParse({
      url: form.values.url,
      enabled_events: events,
      description: form.values.description,
    });
    if (!form.values.url) form.errors.url = 'Enter the URL events are sent to.';
    else if (/[\s"'`<>]/.test(form.values.url))
      form.errors.url = 'A URL cannot contain spaces or quotes. Remove them, or write a space as %20, " as %22 and \' as %27.';
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const at = issue.path[0] === 'enabled_events' ? 'events' : issue.path[0];
        if (at === 'url') form.errors.url ??= 'The URL is at most 2048 characters.';
        if (at === 'events')
          form.errors.events = events.length ? 'Choose event types from the list.' : 'Choose at least one event type, or all events.';
        if (at === 'description') form.errors.description = 'The description is at most 500 characters.';
      }
    }
    if (!parsed.success || Object.keys(form.errors).length) return webhooksView(ctx, mode, form, 400);
    try {
      const created = await record(
        ctx,
        'create_webhook_endpoint',
        { kind: 'root_account', id: String(ctx.state.teammate!.rootAccountId) },
        () => deps.webhookEndpoints.create(viewOf(ctx, mode), parsed.data),
        (e) => ({ webhook_endpoint_id: e.id, url: e.url, mode, enabled_events: e.enabled_events }),
      );
      ctx.session!.reveal = { kind: 'endpoint', id: created.id, at: Date.now(), url: created.url, mode, secret: created.secret };
      redirect(ctx, `/portal/webhooks/${created.id}/created?mode=${mode}`);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const urlProblem = err.details?.find((d) => d.path === 'url')?.message;
      if (urlProblem) form.errors.url = `This URL cannot be used: ${urlProblem}.`;
      else form.formError = `The endpoint was not added: ${err.message}.`;
      return webhooksView(ctx, mode, form, 400);
    }
  });
  for (const action of ['enable', 'disable'] as const) {
    pages.post(`/webhooks/:id/${action}`, requireAdmin, async (rawCtx) => {
      const ctx = rawCtx as unknown as PortalCtx;
      const mode = modeOf(ctx.query.mode);
      const id = idParam(ctx);
      const back = `/portal/webhooks?mode=${mode}`;
      const e = await orNotFound(ctx, 'webhook endpoint', back, () =>
        record(
          ctx,
          `${action}_webhook_endpoint`,
          { kind: 'webhook_endpoint', id: String(id) },
          () => deps.webhookEndpoints.update(viewOf(ctx, mode), id, { disabled: action === 'disable' }),
          (r) => ({ status: r.status }),
        ),
      );
      if (!e) return;
      ctx.session!.flash = `Endpoint ${e.url} is now ${e.status}.`;
      redirect(ctx, back);
    });
  }
  const ownEndpoint = (ctx: PortalCtx, mode: KeyMode) =>
    orNotFound(ctx, 'webhook endpoint', `/portal/webhooks?mode=${mode}`, () => deps.webhookEndpoints.get(viewOf(ctx, mode), idParam(ctx)));
  pages.get('/webhooks/:id/created', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const mode = modeOf(ctx.query.mode);
    const endpoint = await ownEndpoint(ctx, mode);
    if (!endpoint) return;
    const kept = takeReveal(ctx, 'endpoint', endpoint.id);
    send(
      ctx,
      200,
      kept
        ? endpointCreatedPage(frame(ctx, 'Endpoint added', { active: 'webhooks' }), { url: endpoint.url, mode, secret: kept.secret })
        : messagePage(
            frame(ctx, 'Signing secret not shown again', { active: 'webhooks' }),
            `The signing secret of endpoint ${endpoint.url} was shown once, when it was added, and is not shown again. If it was not stored, delete the endpoint and add it again.`,
            { href: `/portal/webhooks?mode=${mode}`, label: `Back to the ${mode} endpoints` },
          ),
    );
  });
  // One endpoint's page: its newest deliveries (item 5), and a test event sent to it alone.
  pages.get('/webhooks/:id', async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const mode = modeOf(ctx.query.mode);
    const endpoint = await ownEndpoint(ctx, mode);
    if (!endpoint) return;
    const deliveries = await deps.events.deliveriesToEndpoint(viewOf(ctx, mode), endpoint.id, 20);
    send(
      ctx,
      200,
      endpointPage(frame(ctx, `Endpoint ${endpoint.url}`, { active: 'webhooks', live: mode === 'live' }), {
        endpoint,
        deliveries: deliveries.map((d) => ({
          ...d,
          next_retry_at: nextRetryAt(d, options.deliveryRetry ?? { initialSeconds: 60, windowSeconds: 72 * 3600 }),
        })),
        mode,
        canChange: ctx.state.teammate!.portalRole === 'admin',
      }),
    );
  });
  pages.post('/webhooks/:id/test', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const mode = modeOf(ctx.query.mode);
    const endpoint = await ownEndpoint(ctx, mode);
    if (!endpoint) return;
    const back = `/portal/webhooks/${endpoint.id}?mode=${mode}`;
    try {
      const event = await record(
        ctx,
        'send_test_event',
        { kind: 'webhook_endpoint', id: String(endpoint.id) },
        () => deps.events.sendTest(viewOf(ctx, mode), endpoint.id, 'portal'),
        (e) => ({ event_id: e.id, url: endpoint.url }),
      );
      ctx.session!.flash = `Test event ${event.type} (${event.id}) is being sent to this endpoint alone.`;
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      ctx.session!.flash = `Nothing was sent: ${err.message}.`;
    }
    redirect(ctx, back);
  });
  pages.get('/webhooks/:id/delete', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const endpoint = await ownEndpoint(ctx, modeOf(ctx.query.mode));
    if (endpoint) send(ctx, 200, deleteEndpointPage(frame(ctx, 'Delete the endpoint?', { active: 'webhooks' }), endpoint));
  });
  pages.post('/webhooks/:id/delete', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const mode = modeOf(ctx.query.mode);
    const endpoint = await ownEndpoint(ctx, mode);
    if (!endpoint) return;
    if ((ctx.request.body as Record<string, unknown> | undefined)?.confirm !== 'yes') {
      return send(
        ctx,
        400,
        deleteEndpointPage(
          frame(ctx, 'Delete the endpoint?', { active: 'webhooks' }),
          endpoint,
          'Tick the box to confirm, or keep the endpoint.',
        ),
      );
    }
    await record(
      ctx,
      'delete_webhook_endpoint',
      { kind: 'webhook_endpoint', id: String(endpoint.id) },
      () => deps.webhookEndpoints.delete(viewOf(ctx, mode), endpoint.id),
      () => ({ url: endpoint.url }),
    );
    ctx.session!.flash = `Endpoint ${endpoint.url} is deleted.`;
    redirect(ctx, `/portal/webhooks?mode=${mode}`);
  });

  pages.get('/events', async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const mode = modeOf(ctx.query.mode);
    const { items, total } = await deps.events.list(viewOf(ctx, mode), { pageSize: 50, pageIndex: 0 });
    send(
      ctx,
      200,
      eventsPage(frame(ctx, 'Events', { active: 'events', modes: { current: mode, href: (m) => `/portal/events?mode=${m}` } }), {
        events: items,
        mode,
        total,
      }),
    );
  });
  pages.get('/events/:id', async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const mode = modeOf(ctx.query.mode);
    const event = await orNotFound(ctx, 'event', `/portal/events?mode=${mode}`, () =>
      deps.events.get(viewOf(ctx, mode), String(ctx.params.id)),
    );
    if (!event) return;
    send(
      ctx,
      200,
      eventPage(frame(ctx, `Event ${event.type}`, { active: 'events' }), {
        event,
        mode,
        canChange: ctx.state.teammate!.portalRole === 'admin',
      }),
    );
  });
  pages.post('/events/:id/resend', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const mode = modeOf(ctx.query.mode);
    const id = String(ctx.params.id);
    // endpoint_id: to that endpoint alone (a row's "send again to … only"); else to every endpoint that takes it.
    const endpointId = String((ctx.request.body as Record<string, unknown> | undefined)?.endpoint_id ?? '');
    const only = /^\d{1,9}$/.test(endpointId) ? { endpointId: Number(endpointId) } : undefined;
    const r = await orNotFound(ctx, 'event', `/portal/events?mode=${mode}`, () =>
      record(
        ctx,
        'resend_event',
        { kind: 'event', id },
        () => deps.events.resend(viewOf(ctx, mode), id, only),
        (x) => ({ deliveries: x.deliveries.length, ...(only ? { endpoint_id: only.endpointId } : {}) }),
      ),
    );
    if (!r) return;
    ctx.session!.flash = r.deliveries.length
      ? `The event is being sent again to ${r.deliveries.length} endpoint${r.deliveries.length === 1 ? '' : 's'}.`
      : 'No endpoint takes this event: nothing was sent.';
    redirect(ctx, `/portal/events/${id}?mode=${mode}`);
  });
}
