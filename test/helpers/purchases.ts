/**
 * The API harness's purchase drive (scripts/harness/purchases.ts, where the benches and scripts
 * read it too), and what only the tests read of a workflow history.
 */
import type { History } from '@temporalio/common/lib/proto-utils';

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
