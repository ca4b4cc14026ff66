/**
 * The audit domain's plain types: who did what by hand, through which door (`ActorKind`), to
 * what, and how it ended. The repository writes and reads them; the service and its callers
 * (the portal, the operator and key CLIs) import them from here.
 */

/** Which door an action came through (`codec`: a decode at the Temporal codec endpoint; `api_key`: an agency's API call). */
export type ActorKind = 'operator_cli' | 'portal' | 'key_cli' | 'codec' | 'api_key';

/**
 * How the actor was named: by their operator token or their OS user (the ops CLI, the codec
 * endpoint's per-person bearer), or, at the codec endpoint, only by the shared codec token or the
 * UI mount's key (nobody in particular). Null for doors that name their actor their own way.
 */
export type ActorVia = 'operator_token' | 'os_user' | 'codec_token' | 'temporal_ui';

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
  /** The client's IP address (portal and codec endpoint; null for the command lines). */
  clientAddress?: string | null;
  /** How `actor` was named (see ActorVia); null or absent when the door names it its own way. */
  actorVia?: ActorVia | null;
}

/**
 * Which entries `list` reads: the newest `limit` (1 to 1000, or 10 000 with `upTo10000`) after
 * skipping `offset`, newest first; each filter narrows them: `target` one target's, `rootAccountId`
 * one account's, `actor` and `action` a case-insensitive part of who and what, `from` (inclusive)
 * and `to` (exclusive) when it started.
 */
export interface AuditListOptions {
  limit: number;
  offset?: number;
  target?: { kind: string; id: string };
  rootAccountId?: number;
  actor?: string;
  action?: string;
  from?: Date;
  to?: Date;
  /** Allow up to 10 000 entries (an export) instead of 1 000. */
  upTo10000?: boolean;
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
