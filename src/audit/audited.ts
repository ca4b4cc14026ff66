/**
 * Runs one change on the record (the operator CLI, the key CLI and the agency portal share it).
 *
 * The audit row is written first (a failure to write it throws AuditUnavailable and nothing is
 * done), then finished as `succeeded` (with `details(result)`), `refused` (an error `isRefusal`
 * accepts: the target's state or the input did not allow it) or `failed` (any other error, its
 * message kept). The change's own error is rethrown carrying `auditId`.
 */
import type { AuditRepository } from './repository';
import type { AuditStart } from './types';

/** The audit log could not be written, so the change was not made. */
export class AuditUnavailable extends Error {}

export async function audited<T>(
  audit: Pick<AuditRepository, 'begin' | 'finish'>,
  start: AuditStart,
  act: () => Promise<T>,
  options: {
    details: (result: T) => Record<string, unknown>;
    isRefusal: (err: unknown) => boolean;
    onFinishError?: (err: unknown, auditId: number) => void;
  },
): Promise<{ result: T; auditId: number }> {
  let auditId: number;
  try {
    auditId = await audit.begin(start);
  } catch (err) {
    throw new AuditUnavailable(`cannot write the audit log, so nothing was done: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    const result = await act();
    await audit.finish(auditId, { outcome: 'succeeded', details: options.details(result) });
    return { result, auditId };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    await audit.finish(auditId, { outcome: options.isRefusal(err) ? 'refused' : 'failed', detail: message }).catch((e: unknown) => {
      options.onFinishError?.(e, auditId);
    });
    if (err instanceof Error) Object.assign(err, { auditId });
    throw err;
  }
}
