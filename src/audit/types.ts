/**
 * The audit domain's plain types: who did what by hand, through which door (`ActorKind`), to
 * what, and how it ended. The repository writes and reads them; the service and its callers
 * (the portal, the operator and key CLIs) import them from here.
 */

/** Which door an action came through. */
export type ActorKind = 'operator_cli' | 'portal' | 'key_cli';

/** How an action ended: done, refused by the state of its target (with why), or failed (with the error). */
export type AuditOutcome = 'succeeded' | 'refused' | 'failed';

/** What `begin` records. `targetKind`/`targetId` e.g. `purchase`/`42`; `rootAccountId` when the target is one agency's. */
export interface AuditStart {
  actorKind: ActorKind;
  actor: string;
  action: string;
  targetKind: string | null;
  targetId: string | null;
  rootAccountId: number | null;
  reason: string | null;
  /** The client's IP address (portal only; null for the command lines). */
  clientAddress?: string | null;
}

/** One row of the log as read back; times are Dates (database time), `outcome` null while running or when its process died. */
export interface AuditEntry extends AuditStart {
  id: number;
  startedAt: Date;
  finishedAt: Date | null;
  outcome: AuditOutcome | null;
  outcomeDetail: string | null;
  details: Record<string, unknown>;
}
