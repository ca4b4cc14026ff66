/**
 * The agency's commission on a movement of premium (issue 49, item 2). Pure: integers only
 * (minor units, basis points).
 *
 * The rule: the commission on a premium movement of `premiumMinor` at `rateBps` is
 * `premiumMinor × rateBps / 10 000` rounded toward zero (a whole minor unit never more than the
 * rate gives), with the movement's sign: the sale earns it, each cancellation or refund gives
 * back the commission on the premium it returns, an endorsement earns it on the premium it adds.
 * Because every part is rounded down, the commission given back by any number of partial
 * cancellations never exceeds what the sale earned (the sum of floors is at most the floor of
 * the sum), and a cancellation of everything gives it all back.
 * Worked example: 3 days at 40.00 (120.00) at 1 250 bp earn 15.00; one day cancelled (40.00
 * back) gives back 5.00; the net premium due to the party is 120.00 − 15.00 = 105.00, then
 * −40.00 + 5.00 = −35.00 for the cancellation.
 */

/** Basis points in a whole (10 000 = 100 %). */
export const BPS = 10_000;

/**
 * The commission on `premiumMinor` (signed minor units) at `rateBps` (0–10 000): see the module
 * docstring. Returns 0, never -0, for nothing.
 * @throws {RangeError} when the premium is not a safe integer or the rate is outside 0–10 000.
 */
export function commissionOf(premiumMinor: number, rateBps: number): number {
  if (!Number.isSafeInteger(premiumMinor)) throw new RangeError(`premium must be whole minor units, not ${premiumMinor}`);
  if (!Number.isInteger(rateBps) || rateBps < 0 || rateBps > BPS) throw new RangeError(`rate must be 0–10000 bp, not ${rateBps}`);
  const magnitude = Math.floor((Math.abs(premiumMinor) * rateBps) / BPS);
  return premiumMinor < 0 ? 0 - magnitude : magnitude;
}

/** An item's commission as stored at sale: the party it is owed by, the rate (bp) and the amount earned (minor units). */
export interface ItemCommission {
  partyRootAccountId: number;
  rateBps: number;
  amountMinor: number;
}
