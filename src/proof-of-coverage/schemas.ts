/**
 * Wire contracts of teamEmailProofofCoverage on `/platform-agency-certs` and
 * `/platform-agency-root-certs` (spec §4.5, §7.2): snake_case, strict, no envelope.
 */
import { z } from 'zod';
import { rootScopeFields, teammateScopeFields } from '../accounts/scope';
import { purchaseRequest } from '../certificates/schemas';

/** At most this many addresses per call (issue 7). */
export const MAX_PROOF_EMAIL_RECIPIENTS = 20;

const recipientFields = {
  email_addresses: z
    .array(z.email({ message: 'must be an email address' }).max(320))
    .min(1)
    .max(MAX_PROOF_EMAIL_RECIPIENTS)
    .meta({ description: `1 to ${MAX_PROOF_EMAIL_RECIPIENTS} recipients; repeats (case-insensitive) are sent once` }),
  note: z.string().trim().max(2000).optional().meta({ description: 'Plain text placed at the top of the email' }),
  certificate_holder_id: z.number().int().min(1).max(2_147_483_647).optional().meta({
    description:
      'Send only the certificates issued to this certificate holder (`id` in listCertificateHolders), e.g. to the venue itself; omitted: every certificate in force',
  }),
};

export const EmailProofRequest = purchaseRequest(
  teammateScopeFields,
  {
    id: 'EmailProofOfCoverageRequest',
    example: {
      idp_teammate_uuid: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f',
      purchase_id: 42,
      email_addresses: ['venue@grandhall.example', 'jordan@example.com'],
      note: 'Proof of coverage for the 5 December event.',
    },
  },
  recipientFields,
);
export type EmailProofRequest = z.infer<typeof EmailProofRequest>;

export const RootEmailProofRequest = purchaseRequest(
  rootScopeFields,
  {
    id: 'RootEmailProofOfCoverageRequest',
    example: {
      idp_root_account_uuid: '0b7e2a4c-8f4d-4a57-9a55-1c3d2e4f5a6b',
      payment_intent: 'pi_3Q2w3E4r5T6y7U8i',
      email_addresses: ['venue@grandhall.example'],
    },
  },
  recipientFields,
);
export type RootEmailProofRequest = z.infer<typeof RootEmailProofRequest>;

export const EmailProofResponse = z
  .object({
    purchase_id: z.number().int().meta({ description: 'The purchase whose certificates are sent' }),
    checkout_session_id: z.string().nullable().meta({ description: 'Its checkout session; null when none was created' }),
    payment_intent: z.string().nullable().meta({ description: 'Its payment intent; null when the processor reported none' }),
    emails: z.array(
      z.object({
        email_id: z.number().int().meta({ description: 'Record of this send (its status moves from queued to sent or failed)' }),
        to: z.string(),
        status: z.literal('queued'),
      }),
    ),
  })
  .meta({
    id: 'EmailProofOfCoverageResponse',
    example: {
      purchase_id: 42,
      checkout_session_id: 'cs_test_a1B2c3D4e5F6g7H8',
      payment_intent: 'pi_3Q2w3E4r5T6y7U8i',
      emails: [{ email_id: 7, to: 'venue@grandhall.example', status: 'queued' }],
    },
  });
export type EmailProofResponse = z.infer<typeof EmailProofResponse>;

/** `GET /api/v1/proof_of_coverage_emails/{id}`: one recipient's email and how far it got. */
export const ProofOfCoverageEmail = z
  .object({
    object: z.literal('proof_of_coverage_email'),
    id: z.number().int().meta({ description: 'The `email_id` teamEmailProofofCoverage answered' }),
    purchase_id: z.number().int(),
    to: z.string().meta({ description: 'The recipient' }),
    status: z
      .enum(['queued', 'sent', 'failed'])
      .meta({ description: '`queued` until sent (retried with backoff), then `sent`, or `failed` once every attempt failed' }),
    delivery: z
      .enum(['attachments', 'links'])
      .nullable()
      .meta({ description: 'Once sent: the PDFs attached, or download links (they were too large to attach)' }),
    attempts: z.number().int().meta({ description: 'Sending attempts so far' }),
    certificate_holder_id: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Set when only that certificate holder’s certificates were sent' }),
    failure_reason: z
      .string()
      .nullable()
      .meta({ description: 'Why the last attempt failed (the mail relay’s answer) while queued for a retry or failed; null once sent' }),
    created_at: z.string().meta({ description: 'When it was queued, ISO 8601 UTC' }),
    sent_at: z.string().nullable().meta({ description: 'When the mail relay accepted it, ISO 8601 UTC; null before' }),
  })
  .meta({
    id: 'ProofOfCoverageEmail',
    example: {
      object: 'proof_of_coverage_email',
      id: 7,
      purchase_id: 42,
      to: 'venue@grandhall.example',
      status: 'sent',
      delivery: 'attachments',
      attempts: 1,
      certificate_holder_id: null,
      failure_reason: null,
      created_at: '2026-11-22T12:01:00.000Z',
      sent_at: '2026-11-22T12:01:02.000Z',
    },
  });
export type ProofOfCoverageEmail = z.infer<typeof ProofOfCoverageEmail>;
