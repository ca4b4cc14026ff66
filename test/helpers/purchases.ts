/**
 * The API harness's purchase drive (scripts/harness/purchases.ts, where the benches and scripts
 * read it too), and what only the tests read of a workflow history.
 */
import type { History } from '@temporalio/common/lib/proto-utils';
import type { call } from '../../scripts/harness/fixtures';

export * from '../../scripts/harness/purchases';

/**
 * How many times the history ran the activity `name`: scheduled activities (retries of one
 * schedule count once) and local activities (one marker each, whose SDK record names the type).
 */
export function scheduledActivities(history: History, name: string): number {
  return (history.events ?? []).filter((e) => {
    if (e.activityTaskScheduledEventAttributes?.activityType?.name === name) return true;
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_local_activity') return false;
    const data = marker.details?.data?.payloads?.[0]?.data;
    try {
      return data ? (JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string }).activity_type === name : false;
    } catch {
      return false;
    }
  }).length;
}

/** A suite's call to `/api/v1<path>` with its account's key. */
export type AccountApi = (path: string, init?: { method?: string; body?: unknown }) => ReturnType<typeof call>;

/** The cancellation calls the cancellation suites make through their `api`. */
export function cancellationCalls(api: AccountApi) {
  return {
    /** The data of a new cancellation quote of the purchase (`body` picks units and date); throws unless 201. */
    quote: async (purchaseId: number, body: unknown = {}) => {
      const res = await api(`/purchases/${purchaseId}/cancellation_quote`, { method: 'POST', body });
      if (res.status !== 201) throw new Error(`quote: ${res.status} ${res.text}`);
      return res.body.data;
    },
    cancel: (purchaseId: number, body: unknown) => api(`/purchases/${purchaseId}/cancel`, { method: 'POST', body }),
    /** The purchase as the API reads it. */
    purchase: async (purchaseId: number) => (await api(`/purchases/${purchaseId}`)).body.data,
  };
}

/**
 * Each covered unit of the first item of `purchase` (as GET /api/v1/purchases/{id} reads it): its
 * state and whether its certificate is voided, in the item's order (`[['cancelled', true], …]`).
 */
export function unitStatesAndVoided(purchase: {
  items: Array<{ covered_units: Array<{ state: string; certificate: { voided_at: string | null } }> }>;
}): Array<[string, boolean]> {
  return purchase.items[0]!.covered_units.map((u) => [u.state, u.certificate.voided_at !== null]);
}
