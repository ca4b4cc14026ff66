/**
 * Wire contracts of claims (issue 51): `POST/GET /api/v1/purchases/{id}/claims`,
 * `GET /api/v1/claims/{id}`, its comments, a product's claim settings and the test-mode helper
 * that moves a claim through its states. snake_case; amounts are integer minor units of the
 * purchase's currency; instants ISO 8601 UTC. One schema per shape: validation, type and OpenAPI.
 */
import { z } from 'zod';
import { CLAIM_ACTION_NAMES, CLAIM_LIMITS } from '../../workflows/claim-contracts';
import { ATTACHMENT_LIMITS } from './rules';

const STATUSES = ['submitted', 'acknowledged', 'under_review', 'approved', 'denied', 'paid', 'closed', 'reopened'] as const;
const text = (max: number) => z.string().trim().min(1).max(max);
const MAX_AMOUNT = 10_000_000_000;

const AttachmentRequest = z
  .strictObject({
    file_name: text(255)
      .refine((s) => !/[/\\\r\n]/.test(s), { message: 'must be a file name without slashes or line breaks' })
      .meta({ description: 'The file’s name as the claimant knows it', example: 'water-damage-1.jpg' }),
    content_type: z.enum(ATTACHMENT_LIMITS.contentTypes).meta({ description: 'Its MIME type; the upload must send the same' }),
    size_bytes: z
      .number()
      .int()
      .min(1)
      .max(ATTACHMENT_LIMITS.maxBytes)
      .meta({ description: `Its size in bytes, at most ${ATTACHMENT_LIMITS.maxBytes} (10 MiB); storage refuses a larger upload` }),
  })
  .meta({ id: 'ClaimAttachmentRequest' });

/** Body of `POST /api/v1/purchases/{id}/claims`: a first notice of loss. */
export const CreateClaimRequest = z
  .strictObject({
    incident_at: z.iso.datetime({ offset: true }).meta({
      description:
        'When the loss happened (ISO 8601 with offset): inside a covered unit of the purchase that was in force then, and not in the future',
      example: '2027-05-01T19:30:00-05:00',
    }),
    covered_unit_id: z.number().int().min(1).optional().meta({
      description:
        'The covered unit the claim is against; needed only when the incident falls in units of more than one product of the purchase',
    }),
    claim_type: z
      .string()
      .min(1)
      .max(64)
      .meta({ description: 'One of the product’s claim types (GET /api/v1/products/{id}/claim_settings)', example: 'property_damage' }),
    description: text(4000).meta({
      description: 'What happened, in the claimant’s words',
      example: 'A storm flooded the marquee; the sound system was ruined.',
    }),
    claimant: z
      .strictObject({
        name: text(200),
        email: z.email().max(254),
        phone: z.string().trim().min(3).max(40).optional(),
        payout_account: z
          .string()
          .regex(/^acct_[A-Za-z0-9]{1,60}$/, { message: 'must be a connected account id (acct_…)' })
          .optional()
          .meta({
            description:
              'The claimant’s connected account at the payment processor: an approved claim is paid there by a transfer of the approved amount, once. Left out: the payment is recorded by hand',
          }),
      })
      .meta({ id: 'ClaimClaimant', description: 'Who the insurer contacts about the claim' }),
    amount_claimed: z
      .number()
      .int()
      .min(1)
      .max(MAX_AMOUNT)
      .meta({ description: 'The amount claimed, in minor units of the purchase’s currency (cents for usd)', example: 125000 }),
    currency: z
      .string()
      .regex(/^[a-z]{3}$/, { message: 'must be a lower-case ISO 4217 code such as usd' })
      .optional()
      .meta({ description: 'The purchase’s currency (the only one a claim may be in); may be left out' }),
    attachments: z
      .array(AttachmentRequest)
      .max(ATTACHMENT_LIMITS.perClaim)
      .default([])
      .meta({
        description: `Photos and receipts to upload, at most ${ATTACHMENT_LIMITS.perClaim}; each answered with a signed upload URL`,
      }),
  })
  .meta({
    id: 'CreateClaimRequest',
    example: {
      incident_at: '2027-05-01T19:30:00-05:00',
      claim_type: 'property_damage',
      description: 'A storm flooded the marquee; the sound system was ruined.',
      claimant: { name: 'Kim Park', email: 'kim@example.com', phone: '+1 608 555 0100' },
      amount_claimed: 125000,
      attachments: [{ file_name: 'marquee.jpg', content_type: 'image/jpeg', size_bytes: 482113 }],
    },
  });
export type CreateClaimRequest = z.infer<typeof CreateClaimRequest>;

/** Body of `POST /api/v1/claims/{id}/comments`. */
export const ClaimCommentRequest = z
  .strictObject({ text: text(CLAIM_LIMITS.comment).meta({ example: 'The claimant sent the venue’s invoice by post.' }) })
  .meta({ id: 'ClaimCommentRequest' });

/** Body of `POST /api/v1/test_helpers/claims/{id}/actions` (test-mode keys). */
export const ClaimActionRequest = z
  .strictObject({
    action: z.enum(CLAIM_ACTION_NAMES as [string, ...string[]]).meta({
      description:
        '`acknowledge` (submitted → acknowledged), `start_review` (acknowledged or reopened → under_review), `approve` / `deny` (under_review →), `record_payment` (approved → paid), `close` (paid or denied → closed), `reopen` (closed → reopened)',
    }),
    amount: z
      .number()
      .int()
      .min(1)
      .max(MAX_AMOUNT)
      .optional()
      .meta({ description: '`approve`: the amount approved, minor units, at most the amount claimed' }),
    reason: text(CLAIM_LIMITS.reason).optional().meta({ description: 'Why: required to approve, deny (its text) and reopen' }),
    reason_code: z
      .string()
      .regex(/^[a-z][a-z0-9_]*$/, { message: 'must be lower snake case' })
      .max(CLAIM_LIMITS.reasonCode)
      .optional()
      .meta({ description: '`deny`: the reason code', example: 'not_covered_peril' }),
    reference: text(CLAIM_LIMITS.reference)
      .optional()
      .meta({ description: '`record_payment`: the payment’s reference (default: one the helper makes up)' }),
  })
  .meta({ id: 'ClaimActionRequest' });
export type ClaimActionRequest = z.infer<typeof ClaimActionRequest>;

const ClaimAttachment = z
  .object({
    id: z.number().int(),
    file_name: z.string(),
    content_type: z.string(),
    size_bytes: z.number().int().meta({ description: 'Declared size; once received, the stored size' }),
    status: z.enum(['awaiting_upload', 'received', 'rejected']).meta({
      description:
        '`awaiting_upload` until the file is in storage; `received`; `rejected` when the stored file is not the declared type or is larger than declared',
    }),
    rejection_reason: z.string().nullable(),
    upload: z
      .object({
        method: z.literal('PUT'),
        url: z.string().meta({ description: 'Signed URL: PUT the file’s bytes here, straight to storage' }),
        headers: z.record(z.string(), z.string()).meta({ description: 'Headers the upload must send exactly (they are signed)' }),
        expires_at: z.string(),
      })
      .nullable()
      .meta({ description: 'Where to upload, while the file is awaited and the claim is open; null otherwise' }),
  })
  .meta({ id: 'ClaimAttachment' });

const ClaimHistoryEvent = z
  .object({
    seq: z.number().int().meta({ description: 'The change’s number in the claim’s history, from 0 (the filing)' }),
    kind: z.string().meta({
      description:
        'The status reached (`submitted`, `acknowledged`, …, `reopened`), `comment`, or `acknowledgement_overdue` (the deadline passed unacknowledged)',
    }),
    from_status: z.enum(STATUSES).nullable(),
    to_status: z.enum(STATUSES).nullable(),
    actor: z
      .object({
        type: z.enum(['api_key', 'adjuster', 'test_helper', 'buyer', 'system']),
        id: z.string().nullable().meta({
          description:
            'The API key’s id (an agency’s, or an adjuster’s: a key of the insurer or MGA); null for the buyer (a claim filed on their own claim page) and the service',
        }),
      })
      .meta({ description: 'Who did it' }),
    note: z.string().nullable().meta({ description: 'The reason or comment text' }),
    data: z.record(z.string(), z.unknown()).meta({ description: 'What the change carried: `amount`, `reason_code`, `reference`, …' }),
    created_at: z.string(),
  })
  .meta({ id: 'ClaimHistoryEvent' });

export const Claim = z
  .object({
    object: z.literal('claim'),
    id: z.number().int(),
    purchase_id: z.number().int(),
    covered_unit_id: z.number().int(),
    covered_unit_label: z.string().meta({ description: 'The unit’s local day, or a trip’s local start and end', example: '2027-05-01' }),
    product_line_id: z.number().int(),
    certificate_number: z
      .string()
      .nullable()
      .meta({ description: 'The unit’s certificate in force when the claim was filed (null while still being issued)' }),
    status: z.enum(STATUSES),
    incident_at: z.string(),
    incident_day: z.string().meta({ description: 'The incident’s local day in the unit’s time zone (YYYY-MM-DD)' }),
    claim_type: z.string(),
    description: z.string(),
    claimant: z.object({ name: z.string(), email: z.string(), phone: z.string().nullable() }),
    amount_claimed: z.number().int().meta({ description: 'Minor units' }),
    approved_amount: z.number().int().nullable().meta({ description: 'Minor units, once approved (at most amount_claimed)' }),
    currency: z.string(),
    decision_reason: z.string().nullable(),
    denial_code: z.string().nullable(),
    payment_reference: z
      .string()
      .nullable()
      .meta({ description: 'The payout’s transfer at the processor (`tr_…`), or the reference recorded by hand' }),
    paid_amount: z.number().int().meta({ description: 'Paid on the claim so far, minor units' }),
    payout_account: z.string().nullable(),
    payout_failure: z
      .string()
      .nullable()
      .meta({ description: 'Why the processor refused the last payout (the claim stays approved), or null' }),
    acknowledgement_due_at: z
      .string()
      .meta({ description: 'The insurer’s deadline to acknowledge (the product’s business days from the filing)' }),
    acknowledgement_overdue: z.boolean().meta({ description: 'The deadline passed before the claim was acknowledged' }),
    acknowledged_at: z.string().nullable(),
    decided_at: z.string().nullable(),
    paid_at: z.string().nullable(),
    closed_at: z.string().nullable(),
    attachments: z.array(ClaimAttachment),
    history: z
      .array(ClaimHistoryEvent)
      .optional()
      .meta({ description: 'Who did what and when, oldest first (`GET /api/v1/claims/{id}` and the filing’s answer)' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Claim' });
export type Claim = z.infer<typeof Claim>;

export const ClaimSettingsView = z
  .object({
    product_id: z.number().int(),
    claim_types: z.array(z.string()),
    acknowledgement_business_days: z.number().int(),
  })
  .meta({ id: 'ClaimSettings' });
export type ClaimSettingsView = z.infer<typeof ClaimSettingsView>;

/** Body of `PATCH /api/v1/products/{id}/claim_settings`: what is sent changes, the rest stays. */
export const UpdateClaimSettingsRequest = z
  .strictObject({
    claim_types: z
      .array(
        z
          .string()
          .regex(/^[a-z][a-z0-9_]*$/, { message: 'must be lower snake case' })
          .max(64),
      )
      .min(1)
      .max(30)
      .refine((a) => new Set(a).size === a.length, { message: 'must not repeat a type' })
      .optional(),
    acknowledgement_business_days: z.number().int().min(1).max(30).optional(),
  })
  .refine((b) => b.claim_types !== undefined || b.acknowledgement_business_days !== undefined, {
    message: 'must change claim_types, acknowledgement_business_days or both',
  })
  .meta({
    id: 'UpdateClaimSettingsRequest',
    example: { claim_types: ['property_damage', 'cancellation'], acknowledgement_business_days: 3 },
  });
export type UpdateClaimSettingsRequest = z.infer<typeof UpdateClaimSettingsRequest>;
