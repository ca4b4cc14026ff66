/**
 * The custom search attributes of the purchase workflows, as typed keys (ARCHITECTURE §3; the
 * operator's view of issue 15). Names and Temporal types live once, in `search-attributes.json`
 * beside this file, which the dev stack, the test stacks and `npm run ops -- setup-namespace`
 * read to register them.
 *
 * | attribute        | type     | set by                          | value                                   |
 * |------------------|----------|---------------------------------|-----------------------------------------|
 * | PurchaseId       | Keyword  | start (API)                     | the purchase id                         |
 * | AgencyId         | Keyword  | start (API)                     | the agency's root account id            |
 * | Mode             | Keyword  | start (API)                     | `test` or `live` (the API key's mode)   |
 * | AmountTotal      | Int      | start (API)                     | total charged, minor currency units     |
 * | BuyerEmailHash   | Keyword  | start (API)                     | keyed hash of the buyer's email (never the email) |
 * | PurchaseStatus   | Keyword  | start, then the workflow        | the purchase status                     |
 * | StatusChangedAt  | Datetime | start, then the workflow        | when PurchaseStatus last changed        |
 * | CheckoutDeadline | Datetime | the workflow                    | when the checkout session stops accepting payment |
 * | PaymentIntentId  | Keyword  | the workflow                    | the processor's payment intent          |
 * | PaidAt           | Datetime | the workflow                    | when the payment was recorded           |
 *
 * PurchaseStatus is the sale workflow's (`purchase-<id>`) up to `issued`; after that the owner
 * (`policy-<id>`, started with the purchase's status as stored) upserts `partly_cancelled` or
 * `cancelled` with StatusChangedAt when a completed cancellation changes it (`refunded` after a
 * processor's full refund), so Temporal's search agrees with the API on the owner's run.
 *
 * Importable from workflow code (no I/O).
 */
import { defineSearchAttributeKey } from '@temporalio/common';
import registered from './search-attributes.json';

/** Temporal's names of the types, as `temporal operator search-attribute create --type` takes them. */
export type RegisteredType = 'Keyword' | 'Int' | 'Datetime';

/** Every custom search attribute to register in a namespace, with its type. */
export const SEARCH_ATTRIBUTE_TYPES: Readonly<Record<string, RegisteredType>> = Object.freeze(registered as Record<string, RegisteredType>);

export const PURCHASE_ID = defineSearchAttributeKey('PurchaseId', 'KEYWORD');
export const AGENCY_ID = defineSearchAttributeKey('AgencyId', 'KEYWORD');
export const MODE = defineSearchAttributeKey('Mode', 'KEYWORD');
export const AMOUNT_TOTAL = defineSearchAttributeKey('AmountTotal', 'INT');
export const BUYER_EMAIL_HASH = defineSearchAttributeKey('BuyerEmailHash', 'KEYWORD');
export const PURCHASE_STATUS = defineSearchAttributeKey('PurchaseStatus', 'KEYWORD');
export const STATUS_CHANGED_AT = defineSearchAttributeKey('StatusChangedAt', 'DATETIME');
export const CHECKOUT_DEADLINE = defineSearchAttributeKey('CheckoutDeadline', 'DATETIME');
export const PAYMENT_INTENT_ID = defineSearchAttributeKey('PaymentIntentId', 'KEYWORD');
export const PAID_AT = defineSearchAttributeKey('PaidAt', 'DATETIME');
