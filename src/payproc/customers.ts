/**
 * Buyers as processor customers (issue: payment options — buyers are processor customers).
 * One customer per buyer per mode (live and test are separate processor environments), kept
 * in `buyer_payproc_customers` (through the payments repository) and created with the idempotency key `buyer-<id>-<mode>-customer`,
 * so concurrent or retried calls end with one customer. Errors: the processor's AppErrors.
 */
import type Stripe from 'stripe';
import type { PayprocMode } from './client';
import { withProcessorErrors } from './errors';

export interface CustomerBuyer {
  buyerId: number;
  email: string;
  firstName: string;
  lastName: string;
  idpAccntUuid: string;
}

/** A buyer record (the buyers repository's `Buyer`) as the facts its processor customer is made of. */
export function customerBuyerOf(buyer: {
  id: number;
  email: string;
  firstName: string;
  lastName: string;
  idpAccntUuid: string;
}): CustomerBuyer {
  return { buyerId: buyer.id, email: buyer.email, firstName: buyer.firstName, lastName: buyer.lastName, idpAccntUuid: buyer.idpAccntUuid };
}

/** Where customer ids are kept (the payments repository). */
export interface CustomerStore {
  findCustomer(buyerId: number, mode: PayprocMode): Promise<string | null>;
  /** Stores the id unless one is stored already; returns the stored one. */
  saveCustomer(buyerId: number, mode: PayprocMode, customerId: string): Promise<string>;
}

/** The buyer's processor customer id in `mode`, created on first use. */
export async function ensureBuyerCustomer(store: CustomerStore, stripe: Stripe, buyer: CustomerBuyer, mode: PayprocMode): Promise<string> {
  const stored = await store.findCustomer(buyer.buyerId, mode);
  if (stored) return stored;
  const customer = await withProcessorErrors(() =>
    stripe.customers.create(
      {
        email: buyer.email,
        name: `${buyer.firstName} ${buyer.lastName}`,
        metadata: { buyer_id: String(buyer.buyerId), idp_accnt_uuid: buyer.idpAccntUuid },
      },
      { idempotencyKey: `buyer-${buyer.buyerId}-${mode}-customer` },
    ),
  );
  return store.saveCustomer(buyer.buyerId, mode, customer.id);
}
