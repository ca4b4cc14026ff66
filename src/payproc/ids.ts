/**
 * Processor objects reference others either by id (`"pi_…"`) or, when expanded, as the object
 * itself (`{ id: "pi_…", … }`). `idOf` gives the id in both cases, or null when absent.
 */
export function idOf(ref: unknown): string | null {
  if (typeof ref === 'string') return ref;
  if (ref && typeof ref === 'object' && 'id' in ref) return String((ref as { id: unknown }).id);
  return null;
}
