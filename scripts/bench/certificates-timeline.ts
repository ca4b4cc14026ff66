/**
 * Where the time of one webhook-to-available run of the certificates benchmark went, read from
 * the Temporal histories of `purchase-<id>` and its child `certificates-<id>`: when the payment
 * signal arrived, and for each activity type when it was first scheduled, when the last one
 * completed, how long its executions took in total and how long the longest waited in the task
 * queue (schedule → start). Offsets are ms after the webhook was sent (server event times on the
 * same machine, compared with this process's wall clock).
 */
import { WorkflowNotFoundError, isGrpcServiceError, type Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import type { History } from '@temporalio/common/lib/proto-utils';
import { certificatesWorkflowId, purchaseWorkflowId } from '../../workflows/contracts';

/** One activity type within a run; all times in ms. */
export interface ActivitySummary {
  workflow: 'purchase' | 'certificates';
  name: string;
  count: number;
  /** First scheduled, after the webhook was sent. */
  firstScheduledAt: number;
  /** Last completed (or failed), after the webhook was sent. */
  lastClosedAt: number;
  /** Sum of start → close over all executions (attempts that failed included). */
  executionMs: number;
  /** Longest schedule → start. */
  maxQueueMs: number;
  failed: number;
}

export interface RunTimeline {
  /** The payment signal recorded in the purchase workflow. */
  signalAt: number | null;
  /**
   * Issuance began and ended: the certificates child's start and completion, or, for a purchase
   * that issues in its own workflow (no child), its first render step scheduled and its completion.
   */
  issuanceStartedAt: number | null;
  issuanceClosedAt: number | null;
  activities: ActivitySummary[];
}

function summarize(history: History, workflow: ActivitySummary['workflow'], t0: number, out: Map<string, ActivitySummary>) {
  const scheduled = new Map<number, { name: string; at: number }>();
  const started = new Map<number, number>();
  for (const e of history.events ?? []) {
    const at = tsToMs(e.eventTime) - t0;
    const id = Number(e.eventId);
    const sch = e.activityTaskScheduledEventAttributes;
    if (sch) {
      const name = sch.activityType?.name ?? '?';
      scheduled.set(id, { name, at });
      const key = `${workflow}:${name}`;
      const s = out.get(key) ?? {
        workflow,
        name,
        count: 0,
        firstScheduledAt: at,
        lastClosedAt: at,
        executionMs: 0,
        maxQueueMs: 0,
        failed: 0,
      };
      s.count += 1;
      s.firstScheduledAt = Math.min(s.firstScheduledAt, at);
      out.set(key, s);
      continue;
    }
    const st = e.activityTaskStartedEventAttributes;
    if (st) {
      const from = scheduled.get(Number(st.scheduledEventId));
      if (from) {
        started.set(Number(st.scheduledEventId), at);
        const s = out.get(`${workflow}:${from.name}`)!;
        s.maxQueueMs = Math.max(s.maxQueueMs, at - from.at);
      }
      continue;
    }
    const closed = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes;
    if (closed) {
      const from = scheduled.get(Number(closed.scheduledEventId));
      if (!from) continue;
      const s = out.get(`${workflow}:${from.name}`)!;
      s.lastClosedAt = Math.max(s.lastClosedAt, at);
      s.executionMs += at - (started.get(Number(closed.scheduledEventId)) ?? at);
      if (!e.activityTaskCompletedEventAttributes) s.failed += 1;
    }
  }
}

/** gRPC's NOT_FOUND, which fetching a missing workflow's history answers (not a WorkflowNotFoundError). */
const GRPC_NOT_FOUND = 5;

/** The timeline of purchase `purchaseId`, whose webhook was sent at wall-clock ms `t0`. */
export async function runTimeline(client: Client, purchaseId: number, t0: number): Promise<RunTimeline> {
  // Purchases paid since issuance moved into the purchase workflow have no certificates child.
  const [purchase, certificates] = await Promise.all([
    client.workflow.getHandle(purchaseWorkflowId(purchaseId)).fetchHistory(),
    client.workflow
      .getHandle(certificatesWorkflowId(purchaseId))
      .fetchHistory()
      .catch((err: unknown) => {
        if (err instanceof WorkflowNotFoundError || (isGrpcServiceError(err) && err.code === GRPC_NOT_FOUND)) return null;
        throw err;
      }),
  ]);
  const at = (e: { eventTime?: Parameters<typeof tsToMs>[0] } | undefined) => (e ? tsToMs(e.eventTime) - t0 : null);
  const pEvents = purchase.events ?? [];
  const byName = new Map<string, ActivitySummary>();
  summarize(purchase, 'purchase', t0, byName);
  if (certificates) summarize(certificates, 'certificates', t0, byName);
  const cEvents = certificates?.events ?? [];
  return {
    signalAt: at(pEvents.find((e) => e.workflowExecutionSignaledEventAttributes)),
    issuanceStartedAt: certificates ? at(cEvents[0]) : at(pEvents.find((e) => e.activityTaskScheduledEventAttributes)),
    issuanceClosedAt: at((certificates ? cEvents : pEvents).find((e) => e.workflowExecutionCompletedEventAttributes)),
    activities: [...byName.values()].sort((a, b) => a.firstScheduledAt - b.firstScheduledAt),
  };
}

/** The timeline on a few lines, for the report. */
export function describeTimeline(t: RunTimeline): string[] {
  const ms = (v: number | null) => (v === null ? '?' : `+${Math.round(v)}`);
  const lines = [`signal ${ms(t.signalAt)} ms, certificate issuance ${ms(t.issuanceStartedAt)} → ${ms(t.issuanceClosedAt)} ms`];
  for (const a of t.activities) {
    lines.push(
      `${a.name}${a.count > 1 ? ` x${a.count}` : ''}: ${ms(a.firstScheduledAt)} → ${ms(a.lastClosedAt)} ms, ` +
        `executing ${Math.round(a.executionMs)} ms in total, longest queue wait ${Math.round(a.maxQueueMs)} ms${a.failed ? `, ${a.failed} failed attempt(s)` : ''}`,
    );
  }
  return lines;
}
