/**
 * The finance view's read-only repository (`npm run ops -- finance`, issue 55 item 6): the money of
 * a range, per agency (root account), mode and currency, from the same ledger and month rule as
 * the bordereaux (./repository): sales and renewals by `paid_at`, and the completed changes
 * (`policy_transactions`: cancellations, endorsements, dashboard refunds) by `completed_at`. It
 * writes nothing; `purchases` and `policy_transactions` are written by the purchases domain.
 * Integer minor units, signed as they move money: sales and endorsements in, cancellations and
 * refunds out (an endorsement that gave premium back is negative).
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';

/** One agency's, mode's and currency's money in a range (minor units; counts are rows). */
export interface AgencyMoney {
  root_account_id: number;
  mode: 'live' | 'test';
  currency: string;
  /** Purchases paid (sales and renewals). */
  sales: number;
  /** Premium written: the sales' and renewals' premium (subtotal) plus the endorsements' (signed). */
  premium: number;
  /** Platform fees collected: the sales' and the endorsements'. */
  fees: number;
  /** Tax collected by endorsements (no tax is charged at sale). */
  tax: number;
  endorsements: number;
  /** Completed cancellations, and what they refunded (premium, fee and tax returned). */
  cancellations: number;
  cancelled_refunded: number;
  /** The premium the cancellations returned (part of `cancelled_refunded`). */
  cancelled_premium: number;
  /** The platform fees they returned (part of `cancelled_refunded`). */
  cancelled_fees: number;
  /** Refunds made in the processor's dashboard (no cancellation): how many, how much. */
  refunds: number;
  refunded: number;
  /** Money kept: premium + fees + tax − cancelled_refunded − refunded. */
  net: number;
}

/**
 * The money of [`from`, `to`) per agency, mode and currency (ordered so); one root account's only
 * with `rootAccountId`. One aggregate query; agencies with nothing in the range are absent.
 */
export async function agencyMoney(
  db: Db | Knex,
  range: { from: Date; to: Date; rootAccountId?: number | undefined; mode?: 'live' | 'test' | undefined },
): Promise<AgencyMoney[]> {
  const agency = range.rootAccountId === undefined ? '' : 'and p.root_account_id = :agency';
  const mode = range.mode === undefined ? '' : 'and p.mode = :mode';
  const { rows } = await db.raw(
    `select root_account_id, mode, currency, kind, sum(n)::int as n, sum(premium)::bigint as premium, sum(fees)::bigint as fees,
            sum(tax)::bigint as tax, sum(total)::bigint as total
       from (
         select p.root_account_id, p.mode, p.currency, 'sale' as kind, count(*) as n, sum(p.subtotal_minor) as premium,
                sum(p.platform_fee_minor) as fees, 0 as tax, sum(p.total_minor) as total
           from purchases p
          where p.paid_at >= :from and p.paid_at < :to ${agency} ${mode}
          group by 1, 2, 3
         union all
         select p.root_account_id, p.mode, t.currency, t.kind, count(*), sum(t.premium_minor), sum(t.platform_fee_minor),
                sum(t.tax_minor), sum(t.total_minor)
           from policy_transactions t join purchases p on p.id = t.purchase_id
          where t.status = 'completed' and t.completed_at >= :from and t.completed_at < :to ${agency} ${mode}
          group by 1, 2, 3, 4
       ) x
      group by 1, 2, 3, 4
      order by 1, 2, 3, 4`,
    {
      from: range.from,
      to: range.to,
      ...(range.rootAccountId === undefined ? {} : { agency: range.rootAccountId }),
      mode: range.mode ?? null,
    },
  );
  const byKey = new Map<string, AgencyMoney>();
  for (const r of rows as Array<Record<string, unknown>>) {
    const key = `${r.root_account_id}|${r.mode}|${r.currency}`;
    const m =
      byKey.get(key) ??
      byKey
        .set(key, {
          root_account_id: Number(r.root_account_id),
          mode: r.mode as 'live' | 'test',
          currency: String(r.currency),
          ...{ sales: 0, premium: 0, fees: 0, tax: 0, endorsements: 0, cancellations: 0, cancelled_refunded: 0 },
          ...{ cancelled_premium: 0, cancelled_fees: 0, refunds: 0, refunded: 0, net: 0 },
        })
        .get(key)!;
    const [n, premium, fees, tax, total] = [r.n, r.premium, r.fees, r.tax, r.total].map(Number) as [number, number, number, number, number];
    if (r.kind === 'sale' || r.kind === 'endorsement') {
      if (r.kind === 'sale') m.sales += n;
      else m.endorsements += n;
      m.premium += premium;
      m.fees += fees;
      m.tax += tax;
    } else if (r.kind === 'cancellation') {
      m.cancellations += n;
      m.cancelled_refunded += total;
      m.cancelled_premium += premium;
      m.cancelled_fees += fees;
    } else if (r.kind === 'refund') {
      m.refunds += n;
      m.refunded += total;
    }
    m.net = m.premium + m.fees + m.tax - m.cancelled_refunded - m.refunded;
  }
  return [...byKey.values()];
}
