/**
 * Premium tax in the suites (issue 49): a quoting account's product taxed as general liability
 * where its named insured is, quoted for a new buyer whose named insured is in Texas (surplus-lines
 * tax 4.85 % and stamping fee 0.04 % in src/taxes/premium-tax-rates.json).
 */
import type { ApiHandle } from '../../scripts/harness/api';
import type { QuotingAccount } from '../../scripts/harness/purchases';
import { call } from './fixtures';

/** A named insured in San Antonio, Texas. */
export const TEXAN = {
  name: 'Alamo Weddings LLC',
  address: { line1: '300 Alamo Plaza', city: 'San Antonio', region: 'TX', postal_code: '78205', country: 'US' },
};

/**
 * Taxes `account`'s product as general liability where the named insured is, then quotes it for a
 * new buyer with the Texas named insured (`adminValidateBuyerResponses`: the purchase and its
 * checkout session). Answers the quote as it came, whatever its status. @throws {Error} when the
 * tax setting is refused.
 */
export async function quoteInTexas(app: Pick<ApiHandle, 'baseUrl'>, account: QuotingAccount) {
  const setting = await call(app.baseUrl, `/api/v1/products/${account.productId}/tax_settings`, {
    method: 'PATCH',
    key: account.key,
    body: { line_of_business: 'general_liability' },
  });
  if (setting.status !== 200) throw new Error(`tax_settings: ${setting.status} ${setting.text}`);
  const body = await account.quoteBody();
  const [selection] = body.selected_product_lines_to_purchase as Array<Record<string, unknown>>;
  return call(app.baseUrl, '/public-quote/adminValidateBuyerResponses', {
    method: 'POST',
    key: account.key,
    body: { ...body, selected_product_lines_to_purchase: [{ ...selection, named_insured: TEXAN }] },
  });
}
