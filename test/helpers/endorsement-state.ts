/**
 * The state planEndorsement (src/endorsements/planning.ts) plans over, for unit tests of that pure
 * function: no database. One purchase (id 42) with one item (id 7, product line 3, "Event
 * Liability", named insured Kim Park, the default cancellation terms), and the EndorsementError
 * code a call throws.
 */
import { EndorsementError, type EndorsementState } from '../../src/endorsements/planning';
import type { PurchaseItemDetail, PurchaseRecord } from '../../src/purchases/purchase-record';
import { DEFAULT_CANCELLATION_TERMS } from '../../src/products/cancellation-terms';

/**
 * Item 7 of purchase 42 (product line 3, "Event Liability", one-time, not in a bundle) holding
 * `units` (see chicagoDay), priced from `item.unitPriceMinor` (minor units a unit) × `priceFactor`
 * (2000 and 1 unless given), its stored amount `amountMinor` in minor units.
 */
export function eventItem(
  units: PurchaseItemDetail['units'],
  item: Partial<Pick<PurchaseItemDetail, 'unitPriceMinor' | 'priceFactor'>> & Pick<PurchaseItemDetail, 'amountMinor'>,
): PurchaseItemDetail {
  return {
    id: 7,
    position: 0,
    productLineId: 3,
    productName: 'Event Liability',
    inBundle: false,
    isTripExcess: false,
    unitPriceMinor: item.unitPriceMinor ?? 2000,
    priceFactor: item.priceFactor ?? 1,
    amountMinor: item.amountMinor,
    namedInsured: { name: 'Kim Park' },
    certificateHolder: null,
    cancellationTerms: DEFAULT_CANCELLATION_TERMS,
    units,
  };
}

/**
 * The state of purchase 42 (`purchase`: its billing and platform fee rate in basis points, null for
 * none) with `items`, and whatever else `over` gives; by default no holders, certificates, trip
 * limits, endorsement terms or holder premiums, and at most 366 covered units an item.
 */
export function endorsementState(
  purchase: { billing: PurchaseRecord['billing']; platformFeeBps: number | null },
  items: PurchaseItemDetail[],
  over: Partial<Omit<EndorsementState, 'purchase' | 'items'>> = {},
): EndorsementState {
  return {
    purchase: { id: 42, ...purchase } as PurchaseRecord,
    items,
    holders: [],
    certificates: [],
    maxTripDaysByProduct: new Map(),
    maxCoveredUnits: 366,
    endorsementTerms: new Map(),
    holderPremiums: [],
    ...over,
  };
}

/** The code of the EndorsementError `f` throws; another error's text, or 'no error' when it returns. */
export function endorsementErrorCode(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    return err instanceof EndorsementError ? err.code : String(err);
  }
  return 'no error';
}
