/**
 * What a buyer's erasure does to each piece of personal data (issue 52, item 3): the decision
 * field by field, shared by the erasure service (which applies it through each table's own
 * repository), the API's answer (which lists it) and docs/buyer-data.md (which explains it).
 *
 * Rule, in words: contact data the insurance record does not need is erased at once; the names
 * on the policy (the named insured) are part of the insurance record, so they are taken out of
 * every answer and page at once but kept, apart, until the account's retention period after the
 * policy's last coverage ends (default 7 years), then dropped for good (pseudonymised: only the
 * marker below remains). The named insured's address is the policy's risk location (premium tax
 * is charged on it) and stays with the policy.
 */

/** What the erased names read as in the live records, and so in every answer, page and new document. */
export const ERASED_NAME = '(name erased)';

/** The domain of the placeholder email a buyer's row gets (`erased-<idp_accnt_uuid>@…`): unique, never deliverable. */
export const ERASED_EMAIL_DOMAIN = 'erased.invalid';

/** A retention period nobody set: years after the policy's last coverage ends. */
export const DEFAULT_RETENTION_YEARS = 7;

/** The placeholder email of an erased buyer (its row keeps a unique, non-null email). */
export const erasedEmail = (idpAccntUuid: string): string => `erased-${idpAccntUuid}@${ERASED_EMAIL_DOMAIN}`;

/**
 * Erased at once: contact data the insurance record does not need (wire names of the answer's
 * `erased`). `agency_event.data` and `endorsement.changes`: the email and names wherever they
 * appear in the purchase's stored events and endorsements.
 */
export const ERASED_NOW = [
  'buyer.email',
  'buyer.first_name',
  'buyer.last_name',
  'buyer.access_tokens',
  'purchase.buyer_email',
  'agency_event.data',
  'endorsement.changes',
  'proof_of_coverage_email.recipient',
  'checkout_link_email.recipient',
] as const;

/** Kept, out of sight, until the retention period ends, then pseudonymised (wire names of the answer's `retained`). */
export const RETAINED_UNTIL_RETENTION_ENDS = ['purchase_item.named_insured.name', 'certificate.printed.named_insured_name'] as const;

/**
 * Kept with the policy for as long as the policy record is kept: not contact data (wire names of
 * the answer's `kept`). `certificate.document`: the PDFs already issued, which print the named
 * insured and stay valid documents (stored unchanged, reachable through their download links).
 */
export const KEPT_WITH_POLICY = ['purchase_item.named_insured.address', 'certificate_holder', 'certificate.document', 'ledger'] as const;
