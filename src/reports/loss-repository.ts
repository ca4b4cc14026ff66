/**
 * The read behind a loss bordereau (./loss-bordereau.ts): the claims of one agency, party and mode
 * that were open at some time in a month (filed before its end; not closed before its start), as
 * the month's end saw them: the status then (the claim's last change before it, from its history),
 * its denial and close dates up to then, what was paid in the month and before, and the reserve.
 * Reads the claims tables (written by the claims repository only) and the product and purchase
 * item. Static SQL: nothing here comes from a request.
 */
import type { Db } from '../db/knex';
import type { BordereauKey } from './repository';
import type { LossEntry } from './loss-bordereau';

const OPEN = ['submitted', 'acknowledged', 'under_review', 'reopened'];

const LOSS_SQL = `
  select c.id, c.certificate_number, pl.master_policy_number, pl.customer_name as product_name,
         i.named_insured->>'name' as insured_name, c.incident_day, c.claim_type, c.description,
         c.created_at as opened_at, s.status, c.currency, c.amount_claimed_minor, c.approved_amount_minor,
         c.denial_code, c.paid_at, coalesce(nullif(c.paid_amount_minor, 0), c.approved_amount_minor, 0) as paid_minor,
         (select max(e.created_at) from claim_events e
           where e.claim_id = c.id and e.to_status = 'denied' and e.created_at < :to) as denied_at,
         (select max(e.created_at) from claim_events e
           where e.claim_id = c.id and e.to_status = 'closed' and e.created_at < :to) as closed_at
    from claims c
    join product_lines pl on pl.id = c.product_line_id
    join covered_units cu on cu.id = c.covered_unit_id
    join purchase_items i on i.id = cu.purchase_item_id
    cross join lateral (
      select e.to_status as status from claim_events e
       where e.claim_id = c.id and e.to_status is not null and e.created_at < :to
       order by e.seq desc limit 1) s
   where c.root_account_id = :agency and c.mode = :mode
     and (pl.insurer_root_account_id = :party or pl.mga_root_account_id = :party)
     and c.created_at < :to
   order by c.id`;

/** A row of LOSS_SQL as pg answers it (bigint columns as text). */
interface LossRow {
  id: number;
  certificate_number: string | null;
  master_policy_number: string;
  product_name: string;
  insured_name: string | null;
  incident_day: string;
  claim_type: string;
  description: string;
  opened_at: Date;
  status: string;
  currency: string;
  amount_claimed_minor: string;
  approved_amount_minor: string | null;
  denial_code: string | null;
  paid_at: Date | null;
  paid_minor: string;
  denied_at: Date | null;
  closed_at: Date | null;
}

export function createLossRepository(db: Db) {
  return {
    /** The claims of `key`'s month `range` (a provisional bordereau: to when it was asked for), oldest first. */
    async lossEntries(key: BordereauKey, range: { from: Date; to: Date }): Promise<LossEntry[]> {
      const rows = (await db.raw(LOSS_SQL, { agency: key.rootAccountId, party: key.partyRootAccountId, mode: key.mode, to: range.to }))
        .rows as LossRow[];
      return rows
        .filter((r) => !(r.status === 'closed' && r.closed_at !== null && r.closed_at < range.from))
        .map((r): LossEntry => {
          const paidBy = (d: Date) => (r.paid_at !== null && r.paid_at < d ? Number(r.paid_minor) : 0);
          const totalPaid = paidBy(range.to);
          const reserve =
            r.status === 'approved'
              ? Math.max(0, Number(r.approved_amount_minor ?? 0) - totalPaid)
              : OPEN.includes(r.status)
                ? Number(r.amount_claimed_minor)
                : 0;
          const denied = r.status === 'denied' || (r.status === 'closed' && r.denied_at !== null && r.paid_at === null);
          return {
            claimId: r.id,
            certificateNumber: r.certificate_number,
            masterPolicyNumber: r.master_policy_number,
            productName: r.product_name,
            insuredName: r.insured_name,
            incidentDay: r.incident_day,
            claimType: r.claim_type,
            description: r.description,
            openedAt: r.opened_at,
            status: r.status,
            deniedAt: r.denied_at,
            denialCode: denied ? r.denial_code : null,
            closedAt: r.status === 'closed' ? r.closed_at : null,
            currency: r.currency,
            amountClaimedMinor: Number(r.amount_claimed_minor),
            paidThisMonthMinor: totalPaid - paidBy(range.from),
            previouslyPaidMinor: paidBy(range.from),
            reserveMinor: reserve,
          };
        });
    },
  };
}

export type LossRepository = ReturnType<typeof createLossRepository>;
