/**
 * The certificate read that finds what a verification code names (issue 6; spec §2.4): the
 * certificates a certificate number, or a proof-of-coverage code, names, with only what the public
 * verification page may show. Reads only: it writes no table. (The purchase a getCertificates
 * handle names is read by the purchases domain: `findByHandle` of src/purchases/sale-repository.)
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';

/** What one certificate version printed (kept with its storage; instants ISO 8601 UTC). */
export interface PrintedValues {
  starts_at: string;
  ends_at: string;
  time_zone: string;
  local_label: string;
  named_insured_name: string | null;
  holder_name: string | null;
  /** The signed proof its QR code carries (issue 50 item 3); absent on certificates stored before. */
  proof?: string | null;
}

/** What the verification page may show: no address, email or price (issue 6); a stored version's window, named insured and holder as it printed them. */
export interface VerificationCertificate {
  certificateNumber: string;
  productName: string;
  namedInsuredName: string | null;
  startsAt: Date;
  endsAt: Date;
  timeZone: string;
  testMode: boolean;
  stored: boolean;
  voided: boolean;
  /** When it was voided: its unit's cancellation, or the purchase's full refund; null while in force. */
  voidedAt: Date | null;
  revision: number;
  /** A past version: when, and by which certificate number, it was replaced (null: current). */
  supersededAt: Date | null;
  supersededByNumber: string | null;
  /** Whom it was issued to (the name only: no address on a public page). */
  certificateHolderName: string | null;
}

/** `findForVerification` over `db` (a transaction or the pool). */
export function createCertificateLookups(db: Db | Knex.Transaction) {
  return {
    /**
     * The certificates a verification code names: one certificate (any version) for a certificate
     * number, or the current certificates of one product line of one purchase for a
     * proof-of-coverage code.
     */
    async findForVerification(code: string): Promise<VerificationCertificate[]> {
      const base = () =>
        db('certificates as c')
          .join('purchases as p', 'p.id', 'c.purchase_id')
          .join('purchase_items as i', 'i.id', 'c.purchase_item_id')
          .join('covered_units as cu', 'cu.id', 'c.covered_unit_id')
          .join('product_lines as pl', 'pl.id', 'c.product_line_id')
          .orderBy('cu.starts_at')
          .select(
            'c.certificate_number',
            'pl.customer_name',
            db.raw("i.named_insured ->> 'name' as named_insured_name"),
            'cu.starts_at',
            'cu.ends_at',
            'cu.time_zone',
            'p.mode',
            'c.storage_key',
            'p.refunded_at',
            'c.voided_at',
            'c.revision',
            'c.superseded_at',
            'next.certificate_number as superseded_by_number',
            'h.name as holder_name',
            'c.printed',
          )
          .leftJoin('certificates as next', 'next.id', 'c.superseded_by_id')
          .leftJoin('certificate_holders as h', 'h.id', 'c.certificate_holder_id');
      let rows = await base().where('c.certificate_number', code);
      if (rows.length === 0) {
        const archive = await db('certificate_archives')
          .where({ proof_code: code, kind: 'product' })
          .first('purchase_id', 'product_line_id');
        if (archive)
          rows = await base()
            .where({ 'c.purchase_id': archive.purchase_id, 'c.product_line_id': archive.product_line_id })
            .whereNull('c.superseded_at');
      }
      // A stored version shows what it printed (a later endorsement may have moved its unit or
      // corrected the named insured); one not stored yet, the unit and item as they are.
      return rows.map((r) => {
        const printed = r.printed as PrintedValues | null;
        return {
          certificateNumber: r.certificate_number,
          productName: r.customer_name,
          namedInsuredName: printed ? printed.named_insured_name : r.named_insured_name,
          startsAt: printed ? new Date(printed.starts_at) : r.starts_at,
          endsAt: printed ? new Date(printed.ends_at) : r.ends_at,
          timeZone: printed?.time_zone ?? r.time_zone,
          testMode: r.mode === 'test',
          stored: r.storage_key !== null,
          voided: r.refunded_at !== null || r.voided_at !== null,
          voidedAt: r.voided_at ?? r.refunded_at ?? null,
          revision: r.revision,
          supersededAt: r.superseded_at ?? null,
          supersededByNumber: r.superseded_by_number ?? null,
          certificateHolderName: printed ? printed.holder_name : (r.holder_name ?? null),
        };
      });
    },
  };
}
