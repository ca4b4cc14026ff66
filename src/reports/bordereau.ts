/**
 * The premium bordereau: the monthly list an insurer or MGA receives of every risk the agency
 * wrote, renewed, endorsed (covered units added) or cancelled for it, one row per transaction and purchase item, with its premium
 * movement. Columns are modelled on the Lloyd's premium bordereau (Coverholder Reporting
 * Standards); `BORDEREAU_COLUMNS` is the column reference docs/reports.md and the OpenAPI document
 * show.
 *
 * A transaction belongs to the month in which it was recorded (paid, renewed, or its cancellation
 * refund completed), UTC, whatever its effective date: a late change to a closed month appears in
 * a later month's file with its own effective date, and a month's file, once its month is over,
 * is the same whenever it is generated.
 *
 * Money: integer minor units in, and in the file major units with two decimals as text
 * (`-12.34`), computed with integers only; negative for money going back (cancellations).
 */
import { spreadByWeight } from '../purchases/refund-rule';
import { commissionOf } from '../purchases/commission';

export const TRANSACTION_TYPES = ['new_business', 'renewal', 'endorsement', 'cancellation', 'refund'] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

/** One column of the file: its header and what it holds. */
export interface BordereauColumn {
  name: string;
  description: string;
}

export const BORDEREAU_COLUMNS: readonly BordereauColumn[] = [
  { name: 'reporting_month', description: 'The month reported, YYYY-MM (UTC)' },
  {
    name: 'transaction_reference',
    description:
      'Unique per row: NB-<purchase>-<item> (new business), RN-<purchase>-<item> (renewal), EN-<endorsement>-<item> (endorsement), CN-<cancellation>-<item> (cancellation), RF-<refund>-<item> (refund)',
  },
  {
    name: 'transaction_type',
    description:
      'new_business, renewal, endorsement (covered units added after the sale, or a certificate holder’s additional-insured or waiver-of-subrogation premium collected or, negative, given back), cancellation, or refund (money given back in the processor’s dashboard without a cancellation: the part of a charge refunded, the sale’s or an endorsement’s, that no cancellation or endorsement explains, spread over the items by what that charge paid for each)',
  },
  {
    name: 'transaction_date',
    description:
      'When it was recorded, YYYY-MM-DD (UTC): paid, renewed, the endorsement applied, the cancellation’s refund completed, or the dashboard refund’s event received',
  },
  {
    name: 'effective_date',
    description:
      'When it took effect, YYYY-MM-DD (UTC): the payment for a sale or renewal, the endorsement’s application, the cancellation’s effective time, the dashboard refund’s event',
  },
  { name: 'master_policy_number', description: 'The product’s master policy number under which the certificate was issued' },
  {
    name: 'certificate_reference',
    description: 'COI-<purchase>-<item>: every certificate number of the item starts with it (then -<unit>-<check>)',
  },
  { name: 'product_name', description: 'The product’s customer-facing name' },
  { name: 'insured_name', description: 'The named insured' },
  { name: 'insured_region', description: 'The named insured’s region or state, when an address was given' },
  { name: 'insured_country', description: 'The named insured’s country (ISO 3166-1 alpha-2), when an address was given' },
  {
    name: 'risk_inception',
    description: 'Start of the item’s first covered unit (a sale: as sold; an endorsement: of the units it priced), ISO 8601 UTC',
  },
  { name: 'risk_expiry', description: 'End of the item’s last covered unit (as for risk_inception), ISO 8601 UTC' },
  {
    name: 'covered_units',
    description: 'Covered units (days or trips) the row is about: written, renewed, added, priced or cancelled (0 for a refund)',
  },
  { name: 'currency', description: 'ISO 4217 code, upper case' },
  { name: 'gross_premium', description: 'Premium written (positive) or returned (negative), major units, two decimals' },
  { name: 'platform_fee', description: 'The selling key’s platform fee on it, shared over the purchase’s items by premium, major units' },
  {
    name: 'tax',
    description:
      'Premium tax on it, major units: what the item was charged at the sale (every tax line of its jurisdiction), or the part a cancellation gave back (negative); 0.00 when the product is not taxed',
  },
  {
    name: 'commission',
    description:
      'The agency’s commission on the row’s premium, major units: the rate the item was sold at × the premium, rounded down to a whole minor unit (negative: given back with returned premium); empty when the item has no commission rate',
  },
  { name: 'net_premium', description: 'Gross premium less commission, major units: what is due to (or from) the party' },
];

/** What the ledger knows about one transaction of one purchase item (amounts signed, minor units). */
export interface LedgerEntry {
  type: TransactionType;
  purchaseId: number;
  /** The item's position in the purchase, from 0. */
  itemPosition: number;
  /** The cancellation's or endorsement's ledger id (those only). */
  transactionId: number | null;
  recordedAt: Date;
  effectiveAt: Date;
  masterPolicyNumber: string;
  productName: string;
  namedInsured: { name?: string; address?: { region?: string; country?: string } } | null;
  riskInception: Date | null;
  riskExpiry: Date | null;
  coveredUnits: number;
  currency: string;
  premiumMinor: number;
  platformFeeMinor: number;
  taxMinor: number;
  /** The agency's commission on `premiumMinor` (signed like it); null: the item has no commission rate. */
  commissionMinor: number | null;
}

/**
 * The commission of a movement of `premiumMinor` on an item sold at `rateBps` (null: no rate): the
 * sale's as stored (`storedMinor`), any other movement's by the rule of src/purchases/commission.ts.
 */
export function rowCommission(premiumMinor: number, rateBps: number | null, storedMinor: number | null): number | null {
  if (rateBps === null) return null;
  return storedMinor ?? commissionOf(premiumMinor, rateBps);
}

/** Totals of a file per currency (minor units); `commission` only when a row of that currency has one. */
export type BordereauTotals = Record<
  string,
  { rows: number; gross_premium: number; platform_fee: number; tax: number; commission?: number; net_premium: number }
>;

/** `-1234` → `-12.34`, with integers only (two decimals). */
export function formatMinor(minor: number): string {
  if (!Number.isSafeInteger(minor)) throw new RangeError(`not an integer amount of minor units: ${minor}`);
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** An instant's UTC day as `YYYY-MM-DD` (empty for none). */
export const day = (d: Date | null) => (d ? d.toISOString().slice(0, 10) : '');

/** The file's row for one ledger entry, in `BORDEREAU_COLUMNS` order. */
export function bordereauRow(month: string, e: LedgerEntry): string[] {
  const prefix = { new_business: 'NB', renewal: 'RN', endorsement: 'EN', cancellation: 'CN', refund: 'RF' }[e.type];
  const owner = e.type === 'new_business' || e.type === 'renewal' ? e.purchaseId : e.transactionId;
  return [
    month,
    `${prefix}-${owner}-${e.itemPosition + 1}`,
    e.type,
    day(e.recordedAt),
    day(e.effectiveAt),
    e.masterPolicyNumber,
    `COI-${e.purchaseId}-${e.itemPosition + 1}`,
    e.productName,
    e.namedInsured?.name ?? '',
    e.namedInsured?.address?.region ?? '',
    e.namedInsured?.address?.country ?? '',
    e.riskInception?.toISOString() ?? '',
    e.riskExpiry?.toISOString() ?? '',
    String(e.coveredUnits),
    e.currency.toUpperCase(),
    formatMinor(e.premiumMinor),
    formatMinor(e.platformFeeMinor),
    formatMinor(e.taxMinor),
    e.commissionMinor === null ? '' : formatMinor(e.commissionMinor),
    formatMinor(e.premiumMinor - (e.commissionMinor ?? 0)),
  ];
}

/** A typed spreadsheet cell: text, a number, an instant (UTC) or empty. */
export type Cell = string | number | Date | null;

/** How a column's typed cells are shown in the spreadsheet (Excel number formats). */
export const XLSX_FORMATS: Partial<Record<string, string>> = {
  transaction_date: 'yyyy-mm-dd',
  effective_date: 'yyyy-mm-dd',
  risk_inception: 'yyyy-mm-dd hh:mm',
  risk_expiry: 'yyyy-mm-dd hh:mm',
  gross_premium: '0.00',
  platform_fee: '0.00',
  tax: '0.00',
  commission: '0.00',
  net_premium: '0.00',
};

/** An instant's UTC day as a spreadsheet date cell (null for none). */
export const utcDay = (d: Date | null) => (d ? new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())) : null);
/** Minor units as a spreadsheet number of major units (the one conversion to a float, for a typed cell). */
export const majorNumber = (minor: number) => minor / 100;

/**
 * A spreadsheet row of a sheet of `columns` that fills only the named cells of `values` (the
 * others empty), e.g. a totals row.
 */
export function namedCells(columns: readonly BordereauColumn[], values: Partial<Record<string, Cell>>): Cell[] {
  return columns.map((c) => values[c.name] ?? null);
}

/** The spreadsheet's typed cells for one entry, in `BORDEREAU_COLUMNS` order (the same values as `bordereauRow`). */
export function bordereauCells(month: string, e: LedgerEntry, text: string[] = bordereauRow(month, e)): Cell[] {
  return [
    text[0]!,
    text[1]!,
    text[2]!,
    utcDay(e.recordedAt),
    utcDay(e.effectiveAt),
    text[5]!,
    text[6]!,
    text[7]!,
    text[8]!,
    text[9]!,
    text[10]!,
    e.riskInception,
    e.riskExpiry,
    e.coveredUnits,
    text[14]!,
    majorNumber(e.premiumMinor),
    majorNumber(e.platformFeeMinor),
    majorNumber(e.taxMinor),
    e.commissionMinor === null ? null : majorNumber(e.commissionMinor),
    majorNumber(e.premiumMinor - (e.commissionMinor ?? 0)),
  ];
}

/** The spreadsheet's totals row of one currency: label, row count under covered units, and the sums. */
export function totalsCells(month: string, currency: string, t: BordereauTotals[string]): Cell[] {
  return namedCells(BORDEREAU_COLUMNS, {
    reporting_month: month,
    transaction_reference: `TOTAL ${currency} (${t.rows} rows)`,
    currency,
    gross_premium: majorNumber(t.gross_premium),
    platform_fee: majorNumber(t.platform_fee),
    tax: majorNumber(t.tax),
    commission: t.commission === undefined ? null : majorNumber(t.commission),
    net_premium: majorNumber(t.net_premium),
  });
}

/** Adds one entry to per-currency totals (minor units). */
export function addToTotals(totals: BordereauTotals, e: LedgerEntry): void {
  const key = e.currency.toUpperCase();
  const t = (totals[key] ??= { rows: 0, gross_premium: 0, platform_fee: 0, tax: 0, net_premium: 0 });
  t.rows += 1;
  t.gross_premium += e.premiumMinor;
  t.platform_fee += e.platformFeeMinor;
  t.tax += e.taxMinor;
  if (e.commissionMinor !== null) t.commission = (t.commission ?? 0) + e.commissionMinor;
  t.net_premium += e.premiumMinor - (e.commissionMinor ?? 0);
}

/**
 * The share of `totalMinor` (a purchase's platform fee, or a cancellation's tax or fee) that falls
 * on the item at `index`, spread over the items by `weights` (their premiums) so the shares add up.
 */
export function shareOf(totalMinor: number, weights: number[], index: number): number {
  return spreadByWeight(totalMinor, weights)[index] ?? 0;
}

/** `YYYY-MM` → its first instant and the next month's (UTC), or null when malformed. */
export function monthRange(month: string): { from: Date; to: Date } | null {
  const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(month);
  if (!m) return null;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  return { from: new Date(Date.UTC(y, mo - 1, 1)), to: new Date(Date.UTC(y, mo, 1)) };
}
