/**
 * Wire contract of `GET /api/v1/account`: who the calling API key is, with every id the other
 * surfaces ask for, and the account's settings (`PATCH /api/v1/account` changes them;
 * snake_case, in the `/api/v1` envelope).
 */
import { z } from 'zod';
import { Address } from '../shared/address';

export const AccountTeammate = z
  .object({
    idp_teammate_uuid: z.string().meta({ description: 'Send as idp_teammate_uuid on /platform-agency-certs' }),
    name: z.string(),
    email: z.string(),
  })
  .meta({ id: 'AccountTeammate' });

const SEND_BUYER_EMAIL_DESCRIPTION =
  'When on (the default), the buyer of each purchase is emailed the proof of coverage once its certificates are issued: the certificates (attached, or download links when large), the verification links and, when the product offers it, the buyer’s online withdrawal link. Off: nothing goes to the buyer unless you ask (teamEmailProofofCoverage). Applies to purchases issued from then on.';

const RETENTION_DESCRIPTION =
  'Years the names on an erased buyer’s policies are kept (out of every answer and page) after the policy’s last coverage ends, then dropped for good (POST /api/v1/buyers/{id}/erasure); 1 to 30, default 7. Applies to erasures made from then on.';

const CLAIMS_EMAIL_DESCRIPTION =
  'Insurers and MGAs: the address its adjusters are emailed at when a claim is filed on a product naming the account (null: nobody is emailed). Agencies may leave it null.';

/** The account's settings, as read (every one present). */
export const AccountSettings = z
  .object({
    send_buyer_email_after_payment: z.boolean().meta({ description: SEND_BUYER_EMAIL_DESCRIPTION }),
    claims_notification_email: z.string().nullable().meta({ description: CLAIMS_EMAIL_DESCRIPTION }),
    personal_data_retention_years: z.number().int().meta({ description: RETENTION_DESCRIPTION }),
  })
  .meta({ id: 'AccountSettings', description: 'Account-wide settings (every key of the account reads and changes the same ones)' });

const producerFields = {
  address: Address.nullable().meta({ description: 'The agency’s postal address' }),
  phone: z.string().trim().min(1).max(40).nullable().meta({ example: '+1 617 555 0142' }),
  email: z.email().max(254).nullable().meta({ example: 'certificates@harborpine.example' }),
  licence_number: z.string().trim().min(1).max(60).nullable().meta({ description: 'The producer’s licence number', example: 'MA-1987654' }),
};

/** The producer block every certificate of the account prints (issue 50, item 1; null: not set). */
export const ProducerProfileSchema = z.object(producerFields).meta({
  id: 'ProducerProfile',
  description:
    'The agency as the producer box of its certificates shows it, beside its name: address, phone, email, licence number (each null until set)',
});

/** `PATCH /api/v1/account`: the settings and producer fields to change (the others stay as they are). */
export const AccountUpdate = z
  .strictObject({
    settings: z
      .strictObject({
        send_buyer_email_after_payment: z.boolean().optional().meta({ description: SEND_BUYER_EMAIL_DESCRIPTION }),
        claims_notification_email: z.email().max(254).nullable().optional().meta({ description: CLAIMS_EMAIL_DESCRIPTION }),
        personal_data_retention_years: z.number().int().min(1).max(30).optional().meta({ description: RETENTION_DESCRIPTION }),
      })
      .optional()
      .meta({ description: 'The settings to change; a setting left out keeps its value' }),
    producer: z
      .strictObject({
        address: producerFields.address.optional(),
        phone: producerFields.phone.optional(),
        email: producerFields.email.optional(),
        licence_number: producerFields.licence_number.optional(),
      })
      .optional()
      .meta({
        description:
          'The producer fields to change (certificates issued from then on print them); one left out keeps its value, null clears it',
      }),
  })
  .refine((b) => b.settings !== undefined || b.producer !== undefined, { message: 'must change settings, producer or both' })
  .meta({
    id: 'AccountUpdate',
    example: { settings: { send_buyer_email_after_payment: false }, producer: { phone: '+1 617 555 0142', licence_number: 'MA-1987654' } },
  });
export type AccountUpdate = z.infer<typeof AccountUpdate>;

export const AccountRead = z
  .object({
    root_account: z.object({
      id: z.number().int().meta({ description: 'The root account id (agencyRootAccountID of products, root_seller_db_id of bundles)' }),
      name: z.string(),
      slug: z.string().meta({ description: 'Send as seller_slug on /platform-seller-invites' }),
      kind: z.enum(['agency', 'mga', 'insurer']),
      idp_root_account_uuid: z
        .string()
        .meta({ description: 'Send as idp_root_account_uuid on /public-quote and /platform-agency-root-certs' }),
    }),
    teammates: z.array(AccountTeammate).meta({ description: "The account's teammates (agents), oldest first" }),
    api_key: z.object({
      id: z.number().int(),
      name: z.string(),
      mode: z.enum(['live', 'test']).meta({ description: 'test: only test products and the processor’s test mode; live: real money' }),
      teammate: AccountTeammate.nullable().meta({
        description: 'The teammate the key sells as (its sales are attributed to them; it quotes only what they may), or null',
      }),
      platform_fee_bps: z
        .number()
        .int()
        .nullable()
        .meta({ description: 'Surcharge added at checkout for sales through this key, in basis points (100 = 1 %), or null' }),
    }),
    processor: z.object({
      mode: z.enum(['live', 'test']).meta({
        description:
          'Whether this key’s payments go to the processor’s live or test mode (a live key on a test processor account says test: nothing is charged)',
      }),
    }),
    settings: AccountSettings,
    producer: ProducerProfileSchema,
  })
  .meta({
    id: 'Account',
    example: {
      root_account: {
        id: 1,
        name: 'Harbor & Pine Insurance Agency',
        slug: 'harbor-pine',
        kind: 'agency',
        idp_root_account_uuid: '0b7e2a4c-8f4d-4a57-9a55-1c3d2e4f5a6b',
      },
      teammates: [{ idp_teammate_uuid: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f', name: 'Dana Agent', email: 'dana@harbor-pine.example' }],
      api_key: {
        id: 3,
        name: 'Website checkout',
        mode: 'test',
        teammate: { idp_teammate_uuid: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f', name: 'Dana Agent', email: 'dana@harbor-pine.example' },
        platform_fee_bps: 250,
      },
      processor: { mode: 'test' },
      settings: { send_buyer_email_after_payment: true, claims_notification_email: null, personal_data_retention_years: 7 },
      producer: {
        address: { line1: '12 Harbor St', city: 'Boston', region: 'MA', postal_code: '02110', country: 'US' },
        phone: '+1 617 555 0142',
        email: 'certificates@harborpine.example',
        licence_number: 'MA-1987654',
      },
    },
  });
export type AccountRead = z.infer<typeof AccountRead>;
