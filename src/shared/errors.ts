/**
 * One error class for every operational failure the API reports (STYLE practice 5).
 *
 * `AppError` carries the spec's stable `code` (§7.1) and its HTTP status; `expose` messages are
 * sent to the client as-is. Anything thrown that is not an `AppError` is treated as a bug:
 * logged with its stack and answered as 500 INTERNAL_ERROR with a generic message, so no stack,
 * SQL or secret ever reaches a response body.
 */

/**
 * Error codes of spec §7.1, plus PAYLOAD_TOO_LARGE (ARCHITECTURE §4) and the codes this service
 * gives the quote and buyer surfaces, whose codes the spec leaves open (§7.2).
 */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  QUERY_VALIDATION_ERROR: 400,
  INVALID_BUNDLE_ID: 400,
  INVALID_ACCOUNT_ID: 400,
  UNSUPPORTED_API_VERSION: 400,
  CARD_ERROR: 400,
  INVALID_REQUEST: 400,
  WEBHOOK_SIGNATURE_INVALID: 400,
  AUTHENTICATION_ERROR: 401,
  ACCESS_TOKEN_INVALID: 401,
  ACCESS_TOKEN_EXPIRED: 401,
  NOT_FOUND: 404,
  SELLER_NOT_FOUND: 404,
  TEAMMATE_NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  IDEMPOTENCY_KEY_REUSED: 409,
  IDEMPOTENCY_KEY_IN_PROGRESS: 409,
  AMBIGUOUS_PAYMENT_INTENT: 409,
  UNKNOWN_COVERED_UNIT: 400,
  DUPLICATE_COVERED_UNIT: 400,
  PURCHASE_NOT_CANCELLABLE: 409,
  PURCHASE_ALREADY_CANCELLED: 409,
  COVERED_UNIT_STARTED: 409,
  COVERED_UNIT_ALREADY_CANCELLED: 409,
  NOTHING_TO_CANCEL: 409,
  CANCELLATION_QUOTE_NOT_FOUND: 404,
  CANCELLATION_QUOTE_EXPIRED: 409,
  CANCELLATION_QUOTE_STALE: 409,
  CANCELLATION_NOT_FOUND: 404,
  CANCELLATION_NOT_RESCINDABLE: 409,
  SUBSCRIPTION_NOT_ACTIVE: 409,
  SUBSCRIPTION_ALREADY_CANCELLED: 409,
  SUBSCRIPTION_ENDING: 409,
  PURCHASE_NOT_CHANGEABLE: 409,
  NO_ACTIVE_COVERED_UNITS: 409,
  LAST_CERTIFICATE_HOLDER: 409,
  ENDORSEMENT_NOT_ALLOWED: 409,
  ENDORSEMENT_QUOTE_NOT_FOUND: 404,
  ENDORSEMENT_QUOTE_EXPIRED: 409,
  ENDORSEMENT_QUOTE_STALE: 409,
  /** An endorsement that adds covered units was sent without `payment` (or a paid-for quote's difference is not collected yet). */
  PAYMENT_REQUIRED: 402,
  /** The quote's difference is already being collected by the other payment method. */
  ENDORSEMENT_PAYMENT_IN_PROGRESS: 409,
  NOTHING_TO_ENDORSE: 409,
  /** A certificate holder whose additional-insured or waiver premium was paid on units not started: that endorsement is removed (its premium given back) first. */
  HOLDER_ENDORSEMENT_PAID: 409,
  ARCHIVE_NOT_ALLOWED: 409,
  /** A claim's incident is not inside any covered unit of the purchase (before, after or between them). */
  INCIDENT_NOT_COVERED: 400,
  /** A claim's incident falls in a covered unit that was cancelled (or the purchase was refunded in full). */
  COVERED_UNIT_CANCELLED: 409,
  /** An open claim already exists on the same covered unit and incident day (the message names it). */
  DUPLICATE_CLAIM: 409,
  /** The claim's status does not allow that change (the message says which statuses do). */
  CLAIM_TRANSITION_NOT_ALLOWED: 409,
  /** A claim's decision (acknowledge, review, approve, deny, pay, close, reopen) asked by a key that is not of the insurer or MGA its product names: an agency follows and comments. */
  CLAIM_DECISION_NOT_ALLOWED: 403,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMIT_ERROR: 429,
  INTERNAL_ERROR: 500,
  API_ERROR: 500,
  CONNECTION_ERROR: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** One problem with one field, reported inside VALIDATION_ERROR / QUERY_VALIDATION_ERROR. */
export interface FieldIssue {
  path: string;
  message: string;
}

export class AppError extends Error {
  override name = 'AppError';
  readonly status: number;
  /** Extra response headers, e.g. `Retry-After` for RATE_LIMIT_ERROR. */
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: {
      details?: FieldIssue[];
      headers?: Record<string, string>;
      cause?: unknown;
      /** Extra fields of the bare error body on the quote/certificate surfaces (spec §7.2). */
      extra?: Record<string, unknown>;
      /** Overrides the code's default HTTP status (e.g. 401 for an expired buyer token). */
      status?: number;
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.status = options.status ?? ERROR_STATUS[code];
    this.details = options.details;
    this.headers = options.headers ?? {};
    this.extra = options.extra;
  }

  readonly details: FieldIssue[] | undefined;
  readonly extra: Record<string, unknown> | undefined;
}

/** 404 NOT_FOUND for a resource that does not exist or lies outside the caller's account. */
export function notFound(resource: string, id: number | string): AppError {
  return new AppError('NOT_FOUND', `${resource} ${id} not found`);
}
