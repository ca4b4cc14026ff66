/**
 * An agency's webhook endpoints, per API key account and mode: create (the secret is returned
 * once), list, get, update, delete. URLs are checked for the key's mode (https and public hosts
 * in live mode; test mode also takes http and loopback, for local development).
 * Errors (AppError): VALIDATION_ERROR (400) for a URL the mode refuses; NOT_FOUND (404) for an
 * endpoint that is not the key's account's and mode's, or was deleted.
 */
import { AppError, notFound } from '../shared/errors';
import type { AccountView } from '../api-keys/service';
import { endpointUrlProblem } from '../events/destination';
import { newEndpointSecret } from '../events/signing';
import type { EndpointScope, WebhookEndpoint, WebhookEndpointsRepository } from './repository';
import type { CreateWebhookEndpointBody, UpdateWebhookEndpointBody, WebhookEndpointRead } from './schemas';

const scopeOf = (p: AccountView): EndpointScope => ({ rootAccountId: p.rootAccountId, mode: p.mode });

export function toWebhookEndpointRead(e: WebhookEndpoint): WebhookEndpointRead {
  return {
    id: e.id,
    object: 'webhook_endpoint',
    url: e.url,
    enabled_events: e.enabledEvents,
    description: e.description,
    status: e.status,
    livemode: e.mode === 'live',
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}

function checkUrl(url: string, mode: AccountView['mode']): void {
  const problem = endpointUrlProblem(url, mode);
  if (problem)
    throw new AppError('VALIDATION_ERROR', `Invalid request body: url: ${problem}`, { details: [{ path: 'url', message: problem }] });
}

export function createWebhookEndpointService(deps: { repo: WebhookEndpointsRepository }) {
  return {
    async create(principal: AccountView, body: CreateWebhookEndpointBody): Promise<WebhookEndpointRead & { secret: string }> {
      checkUrl(body.url, principal.mode);
      const created = await deps.repo.create(scopeOf(principal), {
        url: body.url,
        enabledEvents: body.enabled_events,
        description: body.description ?? '',
        secret: newEndpointSecret(),
      });
      return { ...toWebhookEndpointRead(created), secret: created.secret };
    },
    async list(principal: AccountView, page: { pageSize: number; pageIndex: number }) {
      const result = await deps.repo.list(scopeOf(principal), { limit: page.pageSize, offset: page.pageSize * page.pageIndex });
      return { items: result.items.map(toWebhookEndpointRead), total: result.total };
    },
    async get(principal: AccountView, id: number): Promise<WebhookEndpointRead> {
      const e = await deps.repo.find(scopeOf(principal), id);
      if (!e) throw notFound('Webhook endpoint', id);
      return toWebhookEndpointRead(e);
    },
    async update(principal: AccountView, id: number, body: UpdateWebhookEndpointBody): Promise<WebhookEndpointRead> {
      if (body.url !== undefined) checkUrl(body.url, principal.mode);
      const updated = await deps.repo.update(scopeOf(principal), id, {
        url: body.url,
        enabledEvents: body.enabled_events,
        description: body.description,
        status: body.disabled === undefined ? undefined : body.disabled ? 'disabled' : 'enabled',
      });
      if (!updated) throw notFound('Webhook endpoint', id);
      return toWebhookEndpointRead(updated);
    },
    async delete(principal: AccountView, id: number): Promise<{ id: number; object: 'webhook_endpoint'; deleted: true }> {
      if (!(await deps.repo.delete(scopeOf(principal), id))) throw notFound('Webhook endpoint', id);
      return { id, object: 'webhook_endpoint', deleted: true };
    },
  };
}

export type WebhookEndpointService = ReturnType<typeof createWebhookEndpointService>;
