/**
 * Endorsements (mid-term changes of a paid purchase) checked and previewed against the purchase as
 * it is stored now: shared by the quote (API) and by carrying a quote out (the policy workflow's
 * activity), so both decide the same way.
 *
 * Changes:
 * - `named_insured`: corrects the named insured's name (and address) printed on every certificate
 *   of the purchase; no premium change; every current certificate in force is reissued.
 * - `description_of_operations`: a certificate holder's description box; that holder's
 *   certificates in force are reissued.
 * - `move_covered_unit`: moves a covered unit that has not started (and is not cancelled or
 *   held by a cancellation) to another day (`start_date`, in the unit's own time zone) or trip
 *   window (`trip: { start, end }`, local date-times), validated like a quote (not in the past,
 *   no overlap with the item's other active units, a trip no longer than the product allows); the
 *   unit keeps its price (a product prices every covered day or trip of an item alike, with the
 *   unit price and factors it was bought with), so no premium changes; its certificates (every
 *   holder's) are reissued.
 * - `add_covered_units`: adds days (`start_date`..`end_date`, in the item's time zone) or trips to
 *   an item, validated like a quote (not in the past, no overlap with the item's active units or
 *   with each other, the item's units at most `maxCoveredUnits`, a trip no longer than the product
 *   allows) and priced like one: the item's unit price × units added × its price factor, rounded
 *   half-up once per item and spread evenly over the new units, plus the purchase's platform fee
 *   rate on that premium (rounded once). A positive difference is collected before the change takes
 *   effect; a subscription's purchase cannot gain units (each period is billed as sold). Nothing is
 *   reissued: the new units get their own certificates, one per certificate holder. A holder named
 *   additional insured or with subrogation waived pays that endorsement's premium on each unit
 *   added to an item its certificates cover (the product's terms as they are now).
 * - `certificate_holder_endorsements`: names a holder additional insured or waives subrogation
 *   against it, or stops either. Turning one on needs every product the holder's certificates
 *   cover to allow it (ENDORSEMENT_NOT_ALLOWED) and costs the product's premium for it on each
 *   unit still active for the holder (not ended, not cancelled); turning one off gives back what
 *   was collected for it on the units not started (started ones are earned, as in a
 *   cancellation). The holder's certificates in force are reissued with the marks.
 * Priced changes (units added, holder endorsements) go in an endorsement of their own. A positive
 * difference adds the purchase's platform fee rate on its premium and, on a taxed item, the premium
 * tax on the premium added to it at the rates its sale was taxed with (a fixed amount per policy is
 * not charged again); a cancellation later gives that tax back by the refund rule, with the sale's.
 * A negative one gives back premium only (the platform fee and the tax come back only when a
 * cancellation returns the premium of the policy's units).
 * Amounts in integer minor units. Refusals are `EndorsementError`s carrying the API's code.
 */
import { createHash } from 'node:crypto';
import { expandDays, expandTrips } from '../quotes/coverage';
import { MAX_CHARGE_MINOR, priceQuote } from '../quotes/pricing';
import { splitEvenly } from '../purchases/refund-rule';
import { taxOnAddedPremium } from '../taxes/premium-tax';
import { hasStarted, isCancellableUnit, standingOf } from '../purchases/rules';
import type { PurchaseItemDetail, PurchaseRecord } from '../purchases/purchase-record';
import type { HolderEndorsementKind, HolderPremiumOnNewUnit, LedgerUnitPremium } from '../purchases/ledger-record';
import type { StoredEndorsementTerms } from '../products/repository';
import type { CertificateHolderRecord } from '../certificate-holders/repository';
import type { StoredCertificate } from '../certificates/repository';
import type { EndorsementChange } from './schemas';
import type { CoveredUnit } from '../quotes/coverage';

/**
 * Covered units an endorsement adds to one item, each with its premium (minor units) and the
 * endorsement premiums its certificate holders pay on it (additional insured, waiver).
 */
export interface UnitAddition {
  itemId: number;
  units: Array<Omit<CoveredUnit, 'index'> & { premiumMinor: number; holderPremiums?: HolderPremiumOnNewUnit[] }>;
}

export class EndorsementError extends Error {
  override name = 'EndorsementError';
  constructor(
    readonly code:
      | 'VALIDATION_ERROR'
      | 'UNKNOWN_COVERED_UNIT'
      | 'COVERED_UNIT_STARTED'
      | 'COVERED_UNIT_ALREADY_CANCELLED'
      | 'NOT_FOUND'
      | 'NOTHING_TO_ENDORSE'
      | 'ENDORSEMENT_NOT_ALLOWED'
      | 'PURCHASE_NOT_CHANGEABLE',
    message: string,
  ) {
    super(message);
  }
}

/** Everything an endorsement is decided on, as stored now. */
export interface EndorsementState {
  purchase: PurchaseRecord;
  items: PurchaseItemDetail[];
  holders: CertificateHolderRecord[];
  /** Current certificates (not superseded). */
  certificates: StoredCertificate[];
  /** Longest trip (days) each product line allows (its template's trips question). */
  maxTripDaysByProduct: Map<number, number>;
  /** Most covered units one item may hold (config MAX_COVERED_UNITS, as for a quote). */
  maxCoveredUnits: number;
  /** Each product line's endorsement terms (whether it allows each holder endorsement, and its premium per unit). */
  endorsementTerms: Map<number, StoredEndorsementTerms>;
  /** The holder endorsement premiums the ledger holds (collected positive, given back negative), per unit. */
  holderPremiums: LedgerUnitPremium[];
}

/** A holder endorsement premium on an existing unit, with the unit's label (what the preview shows). */
export type HolderUnitPremium = Required<LedgerUnitPremium> & { localLabel: string };

/** A unit's new window, as a move sets it. */
export interface UnitMove {
  coveredUnitId: number;
  startsAt: Date;
  endsAt: Date;
  localLabel: string;
}

/** A covered unit's window as an endorsement preview shows it (instants ISO 8601 UTC; zone and label local). */
export interface ReissueWindow {
  startsAt: string;
  endsAt: string;
  timeZone: string;
  localLabel: string;
}

/** A certificate in force a change reissues: the window its current version prints, and the one its new version will. */
export interface PlannedReissue {
  certificateNumber: string;
  coveredUnitId: number;
  certificateHolderId: number | null;
  currentWindow: ReissueWindow;
  newWindow: ReissueWindow;
}

export interface EndorsementPlan {
  /** Premium, platform fee, premium tax and total differences (minor units; fee and tax only when premium is added). */
  premiumDifferenceMinor: number;
  platformFeeDifferenceMinor: number;
  taxDifferenceMinor: number;
  totalDifferenceMinor: number;
  /** The certificates in force the change reissues as a new version, each with its old and new window. */
  reissues: PlannedReissue[];
  /** What to change, resolved. */
  namedInsured: { name: string; address?: Record<string, unknown> } | null;
  descriptions: Array<{ certificateHolderId: number; description: string }>;
  moves: UnitMove[];
  /** Units to add, per item (add_covered_units), each with its holders' endorsement premiums. */
  additions: UnitAddition[];
  /** Holders whose endorsement marks change (certificate_holder_endorsements). */
  holderMarks: Array<{ certificateHolderId: number; additionalInsured: boolean; waiverOfSubrogation: boolean }>;
  /** Holder endorsement premiums on existing units: collected (positive) or given back (negative). */
  holderPremiums: HolderUnitPremium[];
  /** Which certificates to supersede: all of the purchase, or these holders' and units'. */
  supersede: { all: boolean; holderIds: number[]; coveredUnitIds: number[] };
}

/**
 * A digest of what an endorsement depends on (units and their windows and cancellations, named
 * insureds, holders and their descriptions, current certificates): a quote whose digest no longer
 * matches is stale.
 */
export function stateFingerprint(s: Pick<EndorsementState, 'items' | 'holders' | 'certificates'>): string {
  const shape = {
    items: s.items.map((i) => ({
      id: i.id,
      ni: i.namedInsured,
      units: i.units.map((u) => [u.id, u.startsAt.getTime(), u.endsAt.getTime(), u.cancellationId]),
    })),
    holders: s.holders.map((h) => [h.id, h.removedAt?.getTime() ?? null, h.descriptionOfOperations]),
    certificates: s.certificates.map((c) => [c.certificateId, c.voidedAt?.getTime() ?? null]),
  };
  return createHash('sha256').update(JSON.stringify(shape)).digest('hex');
}

/**
 * Checks `changes` against `state` at the purchase's now `clock` and plans them.
 * @throws {EndorsementError} for a change that cannot be made (see the module doc).
 */
export function planEndorsement(state: EndorsementState, changes: EndorsementChange[], clock: Date): EndorsementPlan {
  const plan: EndorsementPlan = {
    premiumDifferenceMinor: 0,
    platformFeeDifferenceMinor: 0,
    taxDifferenceMinor: 0,
    totalDifferenceMinor: 0,
    reissues: [],
    namedInsured: null,
    descriptions: [],
    moves: [],
    additions: [],
    holderMarks: [],
    holderPremiums: [],
    supersede: { all: false, holderIds: [], coveredUnitIds: [] },
  };
  const units = state.items.flatMap((i) => i.units.map((u) => ({ ...u, item: i })));
  for (const change of changes) {
    switch (change.type) {
      case 'named_insured':
        plan.namedInsured = { name: change.name, ...(change.address ? { address: change.address } : {}) };
        plan.supersede.all = true;
        break;
      case 'description_of_operations': {
        const holder = activeHolder(state, change.certificate_holder_id);
        plan.descriptions.push({ certificateHolderId: holder.id, description: change.description });
        plan.supersede.holderIds.push(holder.id);
        break;
      }
      case 'move_covered_unit': {
        const unit = units.find((u) => u.id === change.covered_unit_id);
        if (!unit)
          throw new EndorsementError(
            'UNKNOWN_COVERED_UNIT',
            `covered unit ${change.covered_unit_id} is not a unit of purchase ${state.purchase.id}`,
          );
        if (unit.cancellationId !== null)
          throw new EndorsementError('COVERED_UNIT_ALREADY_CANCELLED', `covered unit ${unit.id} is cancelled or held by a cancellation`);
        if (hasStarted(unit.startsAt, clock))
          throw new EndorsementError(
            'COVERED_UNIT_STARTED',
            `covered unit ${unit.id} started at ${unit.startsAt.toISOString()}: only a unit that has not started can move`,
          );
        const limits = { now: clock, maxUnits: 1 };
        let expansion;
        if (unit.kind === 'day') {
          if (!change.start_date)
            throw new EndorsementError('VALIDATION_ERROR', `covered unit ${unit.id} is a day: send start_date (YYYY-MM-DD)`);
          expansion = expandDays({ time_zone: unit.timeZone, start_date: change.start_date, end_date: change.start_date }, limits);
        } else {
          if (!change.trip) throw new EndorsementError('VALIDATION_ERROR', `covered unit ${unit.id} is a trip: send trip { start, end }`);
          expansion = expandTrips(
            { time_zone: unit.timeZone, trips: [change.trip] },
            { ...limits, maxTripDays: state.maxTripDaysByProduct.get(unit.item.productLineId) ?? 90 },
          );
        }
        if (!expansion.ok) throw new EndorsementError('VALIDATION_ERROR', `covered unit ${unit.id}: ${expansion.reason}`);
        const to = expansion.units[0]!;
        const others = unit.item.units.filter(
          (u) => u.id !== unit.id && u.cancellationId === null && !plan.moves.some((m) => m.coveredUnitId === u.id),
        );
        const windows = [
          ...others.map((u) => ({ s: u.startsAt.getTime(), e: u.endsAt.getTime() })),
          ...plan.moves
            .filter((m) => unit.item.units.some((u) => u.id === m.coveredUnitId))
            .map((m) => ({ s: m.startsAt.getTime(), e: m.endsAt.getTime() })),
        ];
        if (windows.some((w) => to.startsAt.getTime() < w.e && w.s < to.endsAt.getTime()))
          throw new EndorsementError(
            'VALIDATION_ERROR',
            `covered unit ${unit.id}: ${to.localLabel} overlaps another covered unit of the same product`,
          );
        if (to.startsAt.getTime() === unit.startsAt.getTime() && to.endsAt.getTime() === unit.endsAt.getTime())
          throw new EndorsementError('NOTHING_TO_ENDORSE', `covered unit ${unit.id} already covers ${to.localLabel}`);
        plan.moves.push({ coveredUnitId: unit.id, startsAt: to.startsAt, endsAt: to.endsAt, localLabel: to.localLabel });
        plan.supersede.coveredUnitIds.push(unit.id);
        break;
      }
      case 'add_covered_units': {
        if (state.purchase.billing === 'subscription')
          throw new EndorsementError(
            'PURCHASE_NOT_CHANGEABLE',
            `purchase ${state.purchase.id} is a subscription period: covered units cannot be added (each period is billed as sold)`,
          );
        const item = state.items.find((i) => i.id === change.purchase_item_id);
        if (!item)
          throw new EndorsementError(
            'NOT_FOUND',
            `purchase item ${change.purchase_item_id} is not an item of purchase ${state.purchase.id}`,
          );
        const first = item.units[0];
        if (!first) throw new EndorsementError('VALIDATION_ERROR', `purchase item ${item.id} has no covered unit to follow`);
        const already = plan.additions.filter((a) => a.itemId === item.id).reduce((n, a) => n + a.units.length, 0);
        const room = state.maxCoveredUnits - item.units.length - already;
        const limits = { now: clock, maxUnits: Math.max(room, 0) };
        let expansion;
        if (first.kind === 'day') {
          if (!change.start_date || !change.end_date)
            throw new EndorsementError(
              'VALIDATION_ERROR',
              `purchase item ${item.id} covers days: send start_date and end_date (YYYY-MM-DD)`,
            );
          expansion = expandDays({ time_zone: first.timeZone, start_date: change.start_date, end_date: change.end_date }, limits);
        } else {
          if (!change.trips)
            throw new EndorsementError('VALIDATION_ERROR', `purchase item ${item.id} covers trips: send trips [{ start, end }]`);
          expansion = expandTrips(
            { time_zone: first.timeZone, trips: change.trips },
            { ...limits, maxTripDays: state.maxTripDaysByProduct.get(item.productLineId) ?? 90 },
          );
        }
        if (!expansion.ok)
          throw new EndorsementError(
            'VALIDATION_ERROR',
            `purchase item ${item.id}: ${expansion.reason}${room <= 0 ? ` (the item holds ${item.units.length} of ${state.maxCoveredUnits} covered units)` : ''}`,
          );
        const taken = [
          ...item.units.filter((u) => u.cancellationId === null && !plan.moves.some((m) => m.coveredUnitId === u.id)),
          ...plan.moves.filter((m) => item.units.some((u) => u.id === m.coveredUnitId)),
          ...plan.additions.filter((a) => a.itemId === item.id).flatMap((a) => a.units),
        ];
        const clash = expansion.units.find((n) =>
          taken.some((t) => n.startsAt.getTime() < t.endsAt.getTime() && t.startsAt.getTime() < n.endsAt.getTime()),
        );
        if (clash)
          throw new EndorsementError(
            'VALIDATION_ERROR',
            `purchase item ${item.id}: ${clash.localLabel} overlaps a covered unit it already has`,
          );
        const [line] = priceQuote(
          [{ unitPriceMinor: item.unitPriceMinor, units: expansion.units.length, priceFactor: item.priceFactor }],
          null,
        ).lines;
        const shares = splitEvenly(line!.amountMinor, expansion.units.length);
        // Holders already named additional insured (or with subrogation waived) on this item pay for it on the new units too.
        const terms = state.endorsementTerms.get(item.productLineId);
        const onNewUnit = state.holders
          .filter((h) => h.removedAt === null && (h.purchaseItemId === null || h.purchaseItemId === item.id))
          .flatMap((h) =>
            HOLDER_ENDORSEMENTS.filter((kind) => markOf(h, kind) && premiumOf(terms, kind) > 0).map((kind) => ({
              certificateHolderId: h.id,
              endorsement: kind,
              premiumMinor: premiumOf(terms, kind),
            })),
          );
        plan.additions.push({
          itemId: item.id,
          units: expansion.units.map(({ index: _index, ...u }, k) => ({
            ...u,
            premiumMinor: shares[k]!,
            ...(onNewUnit.length ? { holderPremiums: onNewUnit } : {}),
          })),
        });
        break;
      }
      case 'certificate_holder_endorsements': {
        const holder = activeHolder(state, change.certificate_holder_id);
        const want = {
          additional_insured: change.additional_insured ?? holder.additionalInsured,
          waiver_of_subrogation: change.waiver_of_subrogation ?? holder.waiverOfSubrogation,
        };
        if (HOLDER_ENDORSEMENTS.every((kind) => want[kind] === markOf(holder, kind)))
          throw new EndorsementError('NOTHING_TO_ENDORSE', `certificate holder ${holder.id} already has these endorsements`);
        const covered = state.items.filter((i) => holder.purchaseItemId === null || i.id === holder.purchaseItemId);
        for (const kind of HOLDER_ENDORSEMENTS) {
          if (want[kind] === markOf(holder, kind)) continue;
          for (const item of covered) {
            if (want[kind]) {
              const terms = state.endorsementTerms.get(item.productLineId);
              if (terms && !(kind === 'additional_insured' ? terms.allowsAdditionalInsured : terms.allowsWaiverOfSubrogation))
                throw new EndorsementError(
                  'ENDORSEMENT_NOT_ALLOWED',
                  kind === 'additional_insured'
                    ? `Product ${item.productLineId} does not allow naming a certificate holder additional insured`
                    : `Product ${item.productLineId} does not allow a waiver of subrogation`,
                );
              const premium = premiumOf(terms, kind);
              if (premium === 0) continue;
              for (const u of item.units)
                if (u.cancellationId === null && u.endsAt.getTime() > clock.getTime())
                  plan.holderPremiums.push({
                    unitId: u.id,
                    itemId: item.id,
                    certificateHolderId: holder.id,
                    endorsement: kind,
                    premiumMinor: premium,
                    localLabel: u.localLabel,
                  });
            } else {
              // What was collected for it, net of what went back, on each unit not started and not cancelled.
              const net = new Map<number, number>();
              for (const c of state.holderPremiums)
                if (c.certificateHolderId === holder.id && c.endorsement === kind && c.itemId === item.id)
                  net.set(c.unitId, (net.get(c.unitId) ?? 0) + c.premiumMinor);
              for (const u of item.units)
                if ((net.get(u.id) ?? 0) > 0 && isCancellableUnit(standingOf(u, clock)))
                  plan.holderPremiums.push({
                    unitId: u.id,
                    itemId: item.id,
                    certificateHolderId: holder.id,
                    endorsement: kind,
                    premiumMinor: 0 - net.get(u.id)!,
                    localLabel: u.localLabel,
                  });
            }
          }
        }
        plan.holderMarks.push({
          certificateHolderId: holder.id,
          additionalInsured: want.additional_insured,
          waiverOfSubrogation: want.waiver_of_subrogation,
        });
        plan.supersede.holderIds.push(holder.id);
        break;
      }
    }
  }
  const premium =
    plan.additions.reduce(
      (s, a) => s + a.units.reduce((t, u) => t + u.premiumMinor + (u.holderPremiums ?? []).reduce((h, x) => h + x.premiumMinor, 0), 0),
      0,
    ) + plan.holderPremiums.reduce((s, h) => s + h.premiumMinor, 0);
  if (premium > 0) {
    plan.premiumDifferenceMinor = premium;
    plan.platformFeeDifferenceMinor = priceQuote(
      [{ unitPriceMinor: premium, units: 1, priceFactor: 1 }],
      state.purchase.platformFeeBps,
    ).platformFeeMinor;
    plan.taxDifferenceMinor = taxOnAdditions(state.items, plan);
    plan.totalDifferenceMinor = plan.premiumDifferenceMinor + plan.platformFeeDifferenceMinor + plan.taxDifferenceMinor;
    if (plan.totalDifferenceMinor > MAX_CHARGE_MINOR)
      throw new EndorsementError('VALIDATION_ERROR', `the difference exceeds the largest single charge (${MAX_CHARGE_MINOR} minor units)`);
  } else if (premium < 0) {
    // Given back: premium only (the platform fee comes back only when a cancellation ends the policy).
    plan.premiumDifferenceMinor = premium;
    plan.totalDifferenceMinor = premium;
  }
  const inForce = state.certificates.filter((c) => c.voidedAt === null);
  const touched = plan.supersede.all
    ? inForce
    : inForce.filter(
        (c) =>
          (c.certificateHolderId !== null && plan.supersede.holderIds.includes(c.certificateHolderId)) ||
          plan.supersede.coveredUnitIds.includes(c.coveredUnitId),
      );
  const unitById = new Map(state.items.flatMap((i) => i.units.map((u) => [u.id, u] as const)));
  plan.reissues = touched.map((c) => {
    const move = plan.moves.find((m) => m.coveredUnitId === c.coveredUnitId);
    const unit = unitById.get(c.coveredUnitId);
    const timeZone = unit?.timeZone ?? c.timeZone;
    return {
      certificateNumber: c.certificateNumber,
      coveredUnitId: c.coveredUnitId,
      certificateHolderId: c.certificateHolderId,
      currentWindow: { startsAt: c.startsAt.toISOString(), endsAt: c.endsAt.toISOString(), timeZone: c.timeZone, localLabel: c.localLabel },
      newWindow: move
        ? { startsAt: move.startsAt.toISOString(), endsAt: move.endsAt.toISOString(), timeZone, localLabel: move.localLabel }
        : unit
          ? { startsAt: unit.startsAt.toISOString(), endsAt: unit.endsAt.toISOString(), timeZone, localLabel: unit.localLabel }
          : { startsAt: c.startsAt.toISOString(), endsAt: c.endsAt.toISOString(), timeZone, localLabel: c.localLabel },
    };
  });
  return plan;
}

/**
 * The purchase's certificate holder `id` while it is active (not removed).
 * @throws {EndorsementError} NOT_FOUND when the purchase has no such holder, or it was removed.
 */
function activeHolder(state: EndorsementState, id: number): CertificateHolderRecord {
  const holder = state.holders.find((h) => h.id === id && h.removedAt === null);
  if (!holder) throw new EndorsementError('NOT_FOUND', `certificate holder ${id} is not an active holder of purchase ${state.purchase.id}`);
  return holder;
}

/**
 * The premium tax on what `plan` adds, per item: the premium it adds to the item (units and their
 * holders' endorsement premiums, holder endorsement premiums on its units) taxed with the rates the
 * item's sale was taxed with (src/taxes/premium-tax.ts `taxOnAddedPremium`); summed (minor units).
 */
function taxOnAdditions(items: PurchaseItemDetail[], plan: Pick<EndorsementPlan, 'additions' | 'holderPremiums'>): number {
  const added = new Map<number, number>();
  const add = (itemId: number, minor: number) => added.set(itemId, (added.get(itemId) ?? 0) + minor);
  for (const a of plan.additions)
    for (const u of a.units) add(a.itemId, u.premiumMinor + (u.holderPremiums ?? []).reduce((h, x) => h + x.premiumMinor, 0));
  for (const h of plan.holderPremiums) add(h.itemId, h.premiumMinor);
  return items.reduce((s, i) => s + taxOnAddedPremium(added.get(i.id) ?? 0, i.taxLines), 0);
}

/** The holder endorsements, in the order they are priced and printed. */
export const HOLDER_ENDORSEMENTS: readonly HolderEndorsementKind[] = ['additional_insured', 'waiver_of_subrogation'];

const markOf = (h: CertificateHolderRecord, kind: HolderEndorsementKind): boolean =>
  kind === 'additional_insured' ? h.additionalInsured : h.waiverOfSubrogation;

/** The premium per covered unit a product's terms set for `kind` (0 without terms: free). */
const premiumOf = (t: StoredEndorsementTerms | undefined, kind: HolderEndorsementKind): number =>
  !t ? 0 : kind === 'additional_insured' ? t.additionalInsuredPremiumMinor : t.waiverOfSubrogationPremiumMinor;

/** Reads what an endorsement is decided on for purchase `p` (through the given repositories, e.g. inside one transaction). */
export async function loadEndorsementState(
  repos: {
    sales: Pick<import('../purchases/sale-repository').SaleRepository, 'itemDetails'>;
    ledger: Pick<import('../purchases/ledger-repository').LedgerRepository, 'endorsementCharges'>;
    holders: Pick<import('../certificate-holders/repository').CertificateHoldersRepository, 'list'>;
    certificates: Pick<import('../certificates/repository').CertificatesRepository, 'listForPurchase'>;
    /** The endorsements repository's `maxTripDays`, by its shape (the repository builds on this module). */
    endorsements: { maxTripDays(productLineIds: number[]): Promise<Map<number, number>> };
    products: Pick<import('../products/repository').ProductsRepository, 'endorsementTerms'>;
  },
  p: PurchaseRecord,
  limits: { maxCoveredUnits: number },
): Promise<EndorsementState> {
  const [items, holders, certificates, charges] = await Promise.all([
    repos.sales.itemDetails(p.id),
    repos.holders.list(p.id),
    repos.certificates.listForPurchase(p.id),
    repos.ledger.endorsementCharges(p.id),
  ]);
  const productLineIds = [...new Set(items.map((i) => i.productLineId))];
  const [maxTripDaysByProduct, endorsementTerms] = await Promise.all([
    repos.endorsements.maxTripDays(productLineIds),
    repos.products.endorsementTerms(productLineIds),
  ]);
  return {
    purchase: p,
    items,
    holders,
    certificates,
    maxTripDaysByProduct,
    maxCoveredUnits: limits.maxCoveredUnits,
    endorsementTerms,
    holderPremiums: charges.flatMap((c) => c.breakdown.filter((b) => b.certificateHolderId !== undefined)),
  };
}

/** How long an endorsement quote holds (15 minutes), in ms. */
export const ENDORSEMENT_QUOTE_TTL_MS = 15 * 60_000;
