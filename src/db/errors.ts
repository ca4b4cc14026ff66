/**
 * Database errors mapped once (STYLE practice 5). PostgreSQL SQLSTATE codes:
 * 23505 unique_violation, 23503 foreign_key_violation, 23514 check_violation.
 */
export type DbErrorKind = 'unique' | 'foreign_key' | 'check' | 'other';

/** Classifies an error thrown by `pg`; anything without a SQLSTATE is `other`. */
export function dbErrorKind(err: unknown): DbErrorKind {
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case '23505':
      return 'unique';
    case '23503':
      return 'foreign_key';
    case '23514':
      return 'check';
    default:
      return 'other';
  }
}

/** Name of the violated constraint, when PostgreSQL reports one. */
export function dbConstraint(err: unknown): string | undefined {
  const c = (err as { constraint?: unknown } | null)?.constraint;
  return typeof c === 'string' ? c : undefined;
}
