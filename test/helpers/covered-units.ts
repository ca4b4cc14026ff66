/**
 * Stored covered units for unit tests of pure functions (planning, pricing): no database.
 */

/**
 * A stored covered day `d` (YYYY-MM-DD) in America/Chicago as the purchases repository reads it:
 * from local midnight in May (CDT, UTC-5) for 24 hours, unit `id` at position `index`, held by
 * cancellation `cancellationId` (null: active).
 */
export const chicagoDay = (d: string, id: number, index: number, cancellationId: number | null = null) => ({
  id,
  index,
  kind: 'day' as const,
  startsAt: new Date(`${d}T05:00:00Z`),
  endsAt: new Date(new Date(`${d}T05:00:00Z`).getTime() + 86_400_000),
  timeZone: 'America/Chicago',
  localLabel: d,
  cancellationId,
  cancelledAt: null,
});
