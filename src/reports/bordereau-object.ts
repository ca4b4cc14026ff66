/**
 * What a bordereau is, as getBordereau answers it and the report.ready event carries it (the
 * event is that answer without its expiring download links).
 */
import type { BordereauRecord } from './repository';

/**
 * The bordereau's identity in wire names: its id, the insurer or MGA root account it reports to
 * (`party_id`), the month (YYYY-MM), the mode, and whether it is a test-mode provisional one of
 * the month to date.
 */
export function bordereauFacts(b: BordereauRecord) {
  return {
    object: 'bordereau' as const,
    id: b.id,
    party_id: b.partyRootAccountId,
    month: b.month,
    mode: b.mode,
    provisional: b.provisional,
  };
}
