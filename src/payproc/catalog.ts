/**
 * Product-line objects at the processor: a product and its price (spec §2.2 rules).
 * Amounts are integer minor units. Every call carries an idempotency key built from the
 * product line id and its version, so an internal retry never creates a second object.
 * Errors: AppError per `mapProcessorError`.
 */
import type { Payproc, PayprocMode } from './client';
import { withProcessorErrors } from './errors';

/** Subscriptions bill monthly (decision: the spec leaves the interval open). */
export const RECURRING_INTERVAL = 'month' as const;

export interface PriceSpec {
  unitAmountMinor: number;
  currency: string;
  recurring: boolean;
}

export function createCatalogGateway(payproc: Payproc) {
  return {
    /** Creates the processor product and its price for product line `productLineId`. */
    async createProductWithPrice(input: {
      mode: PayprocMode;
      productLineId: number;
      rootAccountId: number;
      name: string;
      description: string;
      price: PriceSpec;
    }): Promise<{ productId: string; priceId: string }> {
      const stripe = payproc.client(input.mode);
      return withProcessorErrors(async () => {
        const product = await stripe.products.create(
          {
            name: input.name,
            ...(input.description ? { description: input.description } : {}),
            metadata: { product_line_id: String(input.productLineId), root_account_id: String(input.rootAccountId) },
          },
          { idempotencyKey: `product-line-${input.productLineId}-product` },
        );
        const price = await stripe.prices.create(priceParams(product.id, input.productLineId, input.price), {
          idempotencyKey: `product-line-${input.productLineId}-price-v1`,
        });
        return { productId: product.id, priceId: price.id };
      });
    },

    /** Mirrors name, description and active flag to the processor product. */
    async updateProduct(input: {
      mode: PayprocMode;
      productLineId: number;
      version: number;
      productId: string;
      name?: string;
      description?: string;
      active?: boolean;
    }): Promise<void> {
      const stripe = payproc.client(input.mode);
      await withProcessorErrors(() =>
        stripe.products.update(
          input.productId,
          {
            ...(input.name !== undefined ? { name: input.name } : {}),
            ...(input.description !== undefined ? { description: input.description } : {}),
            ...(input.active !== undefined ? { active: input.active } : {}),
          },
          { idempotencyKey: `product-line-${input.productLineId}-v${input.version}-product` },
        ),
      );
    },

    /** Creates the replacement price and deactivates the old one (prices are immutable). */
    async replacePrice(input: {
      mode: PayprocMode;
      productLineId: number;
      version: number;
      productId: string;
      oldPriceId: string | null;
      price: PriceSpec;
    }): Promise<{ priceId: string }> {
      const stripe = payproc.client(input.mode);
      return withProcessorErrors(async () => {
        const price = await stripe.prices.create(priceParams(input.productId, input.productLineId, input.price), {
          idempotencyKey: `product-line-${input.productLineId}-price-v${input.version}`,
        });
        if (input.oldPriceId) {
          await stripe.prices.update(
            input.oldPriceId,
            { active: false },
            { idempotencyKey: `product-line-${input.productLineId}-price-v${input.version}-retire` },
          );
        }
        return { priceId: price.id };
      });
    },
  };
}

function priceParams(productId: string, productLineId: number, p: PriceSpec) {
  return {
    product: productId,
    unit_amount: p.unitAmountMinor,
    currency: p.currency,
    ...(p.recurring ? { recurring: { interval: RECURRING_INTERVAL } } : {}),
    metadata: { product_line_id: String(productLineId) },
  };
}

export type CatalogGateway = ReturnType<typeof createCatalogGateway>;
