/**
 * `Address`: the postal address the API takes and answers wherever one appears (a named insured's
 * or certificate holder's in a quote's answers, the agency's own in its producer profile): zod
 * schema and type, registered in the OpenAPI document as `Address`. Lines of at most 200
 * characters, city and region at most 100, postal code at most 20, `country` an ISO 3166-1
 * alpha-2 code (`US`); unknown fields are refused.
 */
import { z } from 'zod';

export const Address = z
  .strictObject({
    line1: z.string().trim().min(1).max(200),
    line2: z.string().trim().max(200).optional(),
    city: z.string().trim().min(1).max(100),
    region: z.string().trim().min(1).max(100),
    postal_code: z.string().trim().min(1).max(20),
    country: z
      .string()
      .regex(/^[A-Z]{2}$/, { message: 'must be an ISO 3166-1 alpha-2 code such as US' })
      .meta({ description: 'ISO 3166-1 alpha-2 code', example: 'US' }),
  })
  .meta({ id: 'Address' });
export type Address = z.infer<typeof Address>;
