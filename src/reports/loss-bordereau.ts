/**
 * The loss bordereau (issue 51, item 5): beside a month's premium bordereau, the claims of the same
 * agency, party and mode: every claim that was open at some time in the month (filed before its
 * end and not closed before its start), one row each, with what the month did to it (opened,
 * denied, paid, closed) and where it stood at the month's end (status, paid to date, reserve).
 * Columns are the claims fields of the Lloyd's Coverholder Reporting Standards that apply to this
 * service's claims (claim and certificate reference, date of loss, cause and description, status,
 * dates opened, denied and closed, denial reason, paid this month, previously paid, total paid,
 * reserve, total incurred); `LOSS_BORDEREAU_COLUMNS` is the column reference the docs show.
 *
 * The reserve at the month's end is what the claim may still cost: an approved claim not paid yet,
 * its approved amount; an open claim not yet decided (submitted, acknowledged, under review,
 * reopened), the amount claimed; a paid, denied or closed one, 0. Total incurred = total paid +
 * reserve. Money: integer minor units in; in the CSV major units with two decimals as text
 * (`formatMinor`), in the XLSX typed numbers, as the premium bordereau writes them.
 */
import { day, formatMinor, majorNumber, namedCells, utcDay, type BordereauColumn, type Cell } from './bordereau';

export const LOSS_BORDEREAU_COLUMNS: readonly BordereauColumn[] = [
  { name: 'reporting_month', description: 'The month reported, YYYY-MM (UTC)' },
  { name: 'claim_reference', description: 'CL-<claim id>: the claim’s id in the API' },
  { name: 'certificate_reference', description: 'The certificate of the covered unit the claim is against' },
  { name: 'master_policy_number', description: 'The product’s master policy number' },
  { name: 'product_name', description: 'The product’s customer-facing name' },
  { name: 'insured_name', description: 'The named insured of the claim’s purchase item' },
  { name: 'date_of_loss', description: 'The incident’s day, YYYY-MM-DD, in the covered unit’s time zone' },
  { name: 'loss_cause', description: 'The claim type (one of the product’s claim types)' },
  { name: 'loss_description', description: 'What happened, as the claimant described it' },
  { name: 'date_claim_opened', description: 'When the claim was filed, YYYY-MM-DD (UTC)' },
  {
    name: 'claim_status',
    description: 'Its status at the end of the month: submitted, acknowledged, under_review, approved, denied, paid, closed or reopened',
  },
  { name: 'date_claim_denied', description: 'When it was last denied by the month’s end, YYYY-MM-DD (UTC); empty if never' },
  {
    name: 'denial_reason',
    description: 'The denial’s reason code, when its status at the month’s end is denied (or closed after a denial)',
  },
  { name: 'date_claim_closed', description: 'When it was closed, YYYY-MM-DD (UTC), when closed at the month’s end; empty otherwise' },
  { name: 'currency', description: 'ISO 4217 code, upper case' },
  { name: 'amount_claimed', description: 'The amount claimed, major units, two decimals' },
  { name: 'paid_this_month', description: 'Paid to the claimant in the month, major units' },
  { name: 'previously_paid', description: 'Paid before the month, major units' },
  { name: 'total_paid', description: 'Paid by the month’s end, major units' },
  {
    name: 'reserve',
    description:
      'Outstanding at the month’s end, major units: the approved amount of an approved claim not paid yet, the amount claimed of one not decided yet, else 0.00',
  },
  { name: 'total_incurred', description: 'Total paid plus reserve, major units' },
];

/** One claim as the month's end saw it (amounts minor units; instants UTC). */
export interface LossEntry {
  claimId: number;
  certificateNumber: string | null;
  masterPolicyNumber: string;
  productName: string;
  insuredName: string | null;
  incidentDay: string;
  claimType: string;
  description: string;
  openedAt: Date;
  /** The status at the month's end. */
  status: string;
  deniedAt: Date | null;
  denialCode: string | null;
  closedAt: Date | null;
  currency: string;
  amountClaimedMinor: number;
  paidThisMonthMinor: number;
  previouslyPaidMinor: number;
  reserveMinor: number;
}

/** Per currency (upper case): claims listed, opened / denied / paid in the month, and the sums (minor units). */
export type LossTotals = Record<
  string,
  { claims: number; opened: number; denied: number; paid: number; paid_this_month: number; reserve: number; total_incurred: number }
>;

const totalPaid = (e: LossEntry) => e.paidThisMonthMinor + e.previouslyPaidMinor;

/** The CSV row of one claim, in `LOSS_BORDEREAU_COLUMNS` order. */
export function lossRow(month: string, e: LossEntry): string[] {
  return [
    month,
    `CL-${e.claimId}`,
    e.certificateNumber ?? '',
    e.masterPolicyNumber,
    e.productName,
    e.insuredName ?? '',
    e.incidentDay,
    e.claimType,
    e.description,
    day(e.openedAt),
    e.status,
    day(e.deniedAt),
    e.denialCode ?? '',
    day(e.closedAt),
    e.currency.toUpperCase(),
    formatMinor(e.amountClaimedMinor),
    formatMinor(e.paidThisMonthMinor),
    formatMinor(e.previouslyPaidMinor),
    formatMinor(totalPaid(e)),
    formatMinor(e.reserveMinor),
    formatMinor(totalPaid(e) + e.reserveMinor),
  ];
}

/** The XLSX's typed cells of one claim (the same values as `lossRow`: days as dates, amounts as numbers of major units). */
export function lossCells(month: string, e: LossEntry): Cell[] {
  const text = lossRow(month, e);
  return [
    ...text.slice(0, 9),
    utcDay(e.openedAt),
    text[10]!,
    utcDay(e.deniedAt),
    text[12]!,
    utcDay(e.closedAt),
    text[14]!,
    majorNumber(e.amountClaimedMinor),
    majorNumber(e.paidThisMonthMinor),
    majorNumber(e.previouslyPaidMinor),
    majorNumber(totalPaid(e)),
    majorNumber(e.reserveMinor),
    majorNumber(totalPaid(e) + e.reserveMinor),
  ];
}

/** How the XLSX shows its typed columns. */
export const LOSS_XLSX_FORMATS: Partial<Record<string, string>> = {
  date_claim_opened: 'yyyy-mm-dd',
  date_claim_denied: 'yyyy-mm-dd',
  date_claim_closed: 'yyyy-mm-dd',
  amount_claimed: '0.00',
  paid_this_month: '0.00',
  previously_paid: '0.00',
  total_paid: '0.00',
  reserve: '0.00',
  total_incurred: '0.00',
};

/** Adds one claim to the totals; `range` is the month (opened and denied are counted when they fall in it). */
export function addToLossTotals(totals: LossTotals, e: LossEntry, range: { from: Date; to: Date }): void {
  const t = (totals[e.currency.toUpperCase()] ??= {
    claims: 0,
    opened: 0,
    denied: 0,
    paid: 0,
    paid_this_month: 0,
    reserve: 0,
    total_incurred: 0,
  });
  const inMonth = (d: Date | null) => d !== null && d >= range.from && d < range.to;
  t.claims += 1;
  if (inMonth(e.openedAt)) t.opened += 1;
  if (inMonth(e.deniedAt)) t.denied += 1;
  if (e.paidThisMonthMinor > 0) t.paid += 1;
  t.paid_this_month += e.paidThisMonthMinor;
  t.reserve += e.reserveMinor;
  t.total_incurred += totalPaid(e) + e.reserveMinor;
}

/** The XLSX's totals row of one currency: the label, the claim count, and the sums. */
export function lossTotalsCells(month: string, currency: string, t: LossTotals[string]): Cell[] {
  return namedCells(LOSS_BORDEREAU_COLUMNS, {
    reporting_month: month,
    claim_reference: `TOTAL ${currency} (${t.claims} claims: ${t.opened} opened, ${t.denied} denied, ${t.paid} paid)`,
    currency,
    paid_this_month: majorNumber(t.paid_this_month),
    reserve: majorNumber(t.reserve),
    total_incurred: majorNumber(t.total_incurred),
  });
}
