/**
 * Subscriptions for the agency's server: list, one in full, and cancel (at the period's end, or
 * now with this period's unstarted units refunded). A subscription is its first purchase plus one
 * renewal purchase per later period (src/purchases/subscription-object.ts); the purchases
 * repository holds them.
 *
 * Tenancy like purchases: the key's root account and mode, its teammate's only for a teammate's
 * key; anything else (and a purchase that is not a subscription's first) is 404 NOT_FOUND.
 *
 * `cancel` goes to the policy workflow of the current period (./purchases/workflow-client.ts
 * `cancelSubscription`): the processor subscription is set to cancel at period end or cancelled
 * now (idempotency keys of its own), the end recorded, `subscription.cancelled` published, and with
 * `now` the period's unstarted units cancelled like any cancellation (refund first, then
 * certificates voided). Errors (AppError): NOT_FOUND; SUBSCRIPTION_NOT_ACTIVE (409, its first
 * period was never paid); SUBSCRIPTION_ALREADY_CANCELLED (409, it ended); the workflow's
 * CONNECTION_ERROR (503) when the processor is slow (it goes on; ask again).
 */
import type { Principal } from '../api-keys/service';
import { AppError, notFound } from '../shared/errors';
import type { PurchaseRecord } from '../purchases/purchase-record';
import type { SaleRepository } from '../purchases/sale-repository';
import type { SubscriptionRepository } from '../purchases/subscription-repository';
import type { LedgerRepository } from '../purchases/ledger-repository';
import { purchaseScopeOf, toCancellation } from '../purchases/service';
import { currentPeriodOf, subscriptionObject } from '../purchases/subscription-object';
import { subscriptionPeriodWindow } from '../purchases/renewal-period';
import type { PurchaseWorkflows } from '../purchases/workflow-client';
import type { CancelSubscriptionRequest, ListSubscriptionsQuery, Subscription, SubscriptionCancellation } from './schemas';

export function createSubscriptionService(deps: {
  sales: SaleRepository;
  subscriptions: SubscriptionRepository;
  ledger: LedgerRepository;
  workflows: Pick<PurchaseWorkflows, 'cancelSubscription'>;
}) {
  async function owned(principal: Principal, id: number): Promise<PurchaseRecord> {
    const first = await deps.sales.findInScope(id, purchaseScopeOf(principal));
    if (!first || first.billing !== 'subscription' || first.renewalOfPurchaseId !== null) throw notFound('subscription', id);
    return first;
  }
  /** The last local date of the period in force (`current`, one of `periods`): when an `at_period_end` cancellation ends it. */
  async function currentPeriodLastDay(first: PurchaseRecord, periods: PurchaseRecord[], current: PurchaseRecord): Promise<string> {
    const window = subscriptionPeriodWindow(await deps.subscriptions.firstPeriodUnits(first.id), Math.max(0, periods.indexOf(current)));
    return window ? window.lastDay : 'its last day';
  }
  const view = async (first: PurchaseRecord): Promise<Subscription> =>
    subscriptionObject(first, await deps.subscriptions.subscriptionPeriods(first.id));

  return {
    /** One page of the key's subscriptions, newest first, and how many match. */
    async list(principal: Principal, q: ListSubscriptionsQuery): Promise<{ items: Subscription[]; total: number }> {
      const page = await deps.subscriptions.listSubscriptions(purchaseScopeOf(principal), {
        status: q.status,
        limit: q.pageSize,
        offset: q.pageIndex * q.pageSize,
      });
      return { items: await Promise.all(page.items.map(view)), total: page.total };
    },

    async get(principal: Principal, id: number): Promise<Subscription> {
      return view(await owned(principal, id));
    },

    /**
     * Cancels subscription `id` `when` asked; a repeat of `at_period_end` answers the same.
     * Returns the subscription as it now stands and the answer's message: `at_period_end` says
     * when it will end ("Subscription will end at the end of the current period on <last day>",
     * the period's last local date; its status stays `active` until then), `now` that it is
     * cancelled.
     */
    async cancel(
      principal: Principal,
      id: number,
      body: CancelSubscriptionRequest,
    ): Promise<{ subscription: SubscriptionCancellation; message: string }> {
      const first = await owned(principal, id);
      if (first.subscriptionEndedAt)
        throw new AppError('SUBSCRIPTION_ALREADY_CANCELLED', `Subscription ${id} ended at ${first.subscriptionEndedAt.toISOString()}`);
      if (!first.paidAt)
        throw new AppError('SUBSCRIPTION_NOT_ACTIVE', `Subscription ${id} was never paid: its checkout is ${first.status}`);
      const periods = await deps.subscriptions.subscriptionPeriods(first.id);
      const current = currentPeriodOf(first, periods);
      const message =
        body.when === 'now'
          ? 'Subscription cancelled'
          : `Subscription will end at the end of the current period on ${await currentPeriodLastDay(first, periods, current)}`;
      if (body.when === 'at_period_end' && first.subscriptionCancelAtPeriodEnd)
        return { subscription: { ...(await view(first)), cancellation: null }, message };
      const done = await deps.workflows.cancelSubscription(current, {
        subscriptionPurchaseId: first.id,
        at: body.when,
        reason: body.reason ?? null,
        apiKeyId: principal.apiKeyId,
      });
      const cancellation = done.cancellation ? await deps.ledger.findCancellation(done.cancellation.cancellationId) : undefined;
      return {
        subscription: {
          ...(await view((await deps.sales.findById(first.id))!)),
          cancellation: cancellation ? toCancellation(cancellation) : null,
        },
        message,
      };
    },
  };
}

export type SubscriptionService = ReturnType<typeof createSubscriptionService>;
