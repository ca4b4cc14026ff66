/**
 * Wire contracts of `/api/v1/subscriptions`: a subscription (named by its first purchase's id,
 * each later period a renewal purchase of its own) and its cancellation. snake_case; amounts are
 * integer minor units of `currency`; instants ISO 8601 UTC.
 */
import { z } from 'zod';
import { pageQueryFields } from '../http/query';
import { Cancellation, PURCHASE_STATUSES } from '../purchases/schemas';

const minor = (what: string) =>
  z
    .number()
    .int()
    .meta({ description: `${what}, integer minor units of \`currency\` (e.g. cents)` });
const instant = (what: string) => z.string().meta({ description: `${what}, ISO 8601 UTC` });

export const SUBSCRIPTION_STATUSES = ['incomplete', 'active', 'cancelled'] as const;

/** Query of `GET /api/v1/subscriptions`; unknown parameters are refused. */
export const ListSubscriptionsQuery = z.strictObject({
  status: z.enum(SUBSCRIPTION_STATUSES).optional().meta({ description: 'Only subscriptions in this status' }),
  ...pageQueryFields(20),
});
export type ListSubscriptionsQuery = z.infer<typeof ListSubscriptionsQuery>;

export const Subscription = z
  .object({
    object: z.literal('subscription'),
    id: z.number().int().meta({ description: 'The subscription’s id: the id of its first purchase (the one whose checkout started it)' }),
    status: z.enum(SUBSCRIPTION_STATUSES).meta({
      description:
        '`incomplete` until the first period is paid, `active` while it renews (see cancel_at_period_end), `cancelled` once it ended',
    }),
    livemode: z.boolean(),
    processor_subscription_id: z
      .string()
      .nullable()
      .meta({ description: 'The payment processor’s subscription (null for one paid through the test helper)' }),
    currency: z.string(),
    amount_per_period: minor('What each period costs'),
    cancel_at_period_end: z.boolean().meta({ description: 'Renewals stop when the paid period ends; its certificates stay valid' }),
    ended_at: instant('When it ended').nullable(),
    cancelled_by: z.enum(['agency', 'processor']).nullable().meta({
      description: 'Who ended it or set it to end: the agency through this API, or the processor (its dashboard, an unpaid invoice)',
    }),
    current_period_purchase_id: z
      .number()
      .int()
      .meta({ description: 'The purchase of the newest paid period (the first purchase until one is paid)' }),
    periods: z.array(
      z.object({
        period: z.number().int().meta({ description: '1 for the first purchase, then each renewal' }),
        purchase_id: z.number().int(),
        status: z.enum(PURCHASE_STATUSES),
        paid_at: instant('When that period was paid').nullable(),
      }),
    ),
    agent_id: z.number().int().nullable(),
    created_at: instant('When it was quoted'),
  })
  .meta({ id: 'Subscription' });
export type Subscription = z.infer<typeof Subscription>;

/** Body of `POST /api/v1/subscriptions/{id}/cancel`. */
export const CancelSubscriptionRequest = z
  .strictObject({
    when: z.enum(['at_period_end', 'now']).default('at_period_end').meta({
      description:
        '`at_period_end` (default): renewals stop and the paid period keeps its certificates. `now`: it ends at once, and the current period’s covered units not started yet are cancelled and refunded by the product’s cancellation terms (pro rata by default), their certificates voided',
    }),
    reason: z.string().trim().min(1).max(500).optional().meta({ description: 'Why, in a few words (kept with the period’s cancellation)' }),
  })
  .meta({ id: 'CancelSubscriptionRequest', example: { when: 'now', reason: 'Venue closed for the season' } });
export type CancelSubscriptionRequest = z.infer<typeof CancelSubscriptionRequest>;

export const SubscriptionCancellation = Subscription.extend({
  cancellation: Cancellation.nullable().meta({
    description:
      'With `now`: the cancellation of the current period’s unstarted units (its refund follows as for any cancellation); null otherwise or when nothing was left to cancel',
  }),
}).meta({ id: 'SubscriptionCancellation' });
export type SubscriptionCancellation = z.infer<typeof SubscriptionCancellation>;
