/**
 * The claim rules decided once (issue 51, item 1): the product's claim settings and their
 * defaults, the acknowledgement deadline in business days, which covered unit an incident falls
 * in, and what an attachment may be. Pure: no I/O, no clock (instants are inputs).
 */
import { DateTime } from 'luxon';

/** Claim types a product offers until its own list is set. */
export const DEFAULT_CLAIM_TYPES = ['property_damage', 'bodily_injury', 'cancellation', 'equipment_damage', 'liability', 'other'] as const;

/** Business days (Monday to Friday) the insurer has to acknowledge a claim until the product says otherwise. */
export const DEFAULT_ACKNOWLEDGEMENT_BUSINESS_DAYS = 2;

/** What an attachment may be: its content types, its size (bytes) and how many a claim may have. */
export const ATTACHMENT_LIMITS = {
  contentTypes: ['image/jpeg', 'image/png', 'image/heic', 'image/webp', 'application/pdf'] as const,
  maxBytes: 10 * 1024 * 1024,
  perClaim: 10,
  /** How long a signed upload URL stays valid, in seconds. */
  uploadUrlSeconds: 3600,
} as const;

/** A product line's claim settings, stored or the defaults. */
export interface ClaimSettings {
  claimTypes: string[];
  acknowledgementBusinessDays: number;
}

/** The settings of a product with `stored` settings (undefined: none stored, the defaults). */
export function claimSettingsOf(stored: ClaimSettings | undefined): ClaimSettings {
  return stored ?? { claimTypes: [...DEFAULT_CLAIM_TYPES], acknowledgementBusinessDays: DEFAULT_ACKNOWLEDGEMENT_BUSINESS_DAYS };
}

/**
 * `from` plus `days` business days (Monday to Friday, UTC; public holidays are not counted
 * out): a claim filed on a Friday afternoon with 2 days is due Tuesday afternoon. `days` ≥ 1.
 */
export function addBusinessDays(from: Date, days: number): Date {
  let at = DateTime.fromJSDate(from, { zone: 'utc' });
  let left = days;
  while (left > 0) {
    at = at.plus({ days: 1 });
    if (at.weekday <= 5) left -= 1;
  }
  return at.toJSDate();
}

/** A covered unit as the incident check reads it. */
export interface UnitWindow {
  id: number;
  productLineId: number;
  startsAt: Date;
  endsAt: Date;
  timeZone: string;
  localLabel: string;
  cancelled: boolean;
}

/** The units whose cover includes instant `at` (start inclusive, end exclusive). */
export function unitsCovering(units: readonly UnitWindow[], at: Date): UnitWindow[] {
  const t = at.getTime();
  return units.filter((u) => u.startsAt.getTime() <= t && t < u.endsAt.getTime());
}

/** The incident's local calendar day in the unit's time zone (YYYY-MM-DD): one open claim per unit and day. */
export function incidentDayOf(at: Date, timeZone: string): string {
  return DateTime.fromJSDate(at, { zone: timeZone }).toISODate()!;
}

/** Whether `contentType` is an attachment type a claim accepts. */
export function attachmentTypeAllowed(contentType: string): boolean {
  return (ATTACHMENT_LIMITS.contentTypes as readonly string[]).includes(contentType);
}

/**
 * What storage holds for an attachment decides it: missing → still awaiting upload (null); else
 * received when its type is the declared one and its size is within the declared size and the
 * limit, rejected (with why) otherwise.
 */
export function attachmentVerdict(
  declared: { contentType: string; declaredSizeBytes: number },
  stored: { size: number; contentType: string | null } | null,
): { status: 'received'; sizeBytes: number } | { status: 'rejected'; sizeBytes: number; reason: string } | null {
  if (!stored) return null;
  if (stored.contentType !== declared.contentType)
    return {
      status: 'rejected',
      sizeBytes: stored.size,
      reason: `stored as ${stored.contentType ?? 'no type'}, declared ${declared.contentType}`,
    };
  if (stored.size > declared.declaredSizeBytes || stored.size > ATTACHMENT_LIMITS.maxBytes)
    return {
      status: 'rejected',
      sizeBytes: stored.size,
      reason: `${stored.size} bytes, more than the ${declared.declaredSizeBytes} declared`,
    };
  if (stored.size === 0) return { status: 'rejected', sizeBytes: 0, reason: 'empty file' };
  return { status: 'received', sizeBytes: stored.size };
}
