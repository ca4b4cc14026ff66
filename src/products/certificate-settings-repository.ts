/**
 * The one writer of `product_certificate_settings` (issue 50, item 1): how a product's
 * certificates describe its coverage. Also reads which of a set of root accounts are insurers
 * that appointed an agency (from `root_accounts` and `appointments`, writing neither).
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import type { AggregateBasis, CertificateSettings, CoverageTrigger } from './certificate-settings';

export function createCertificateSettingsRepository(db: Db) {
  return {
    /** The product's setting and when it was set, or null (the defaults apply). */
    async find(productLineId: number, trx?: Knex.Transaction): Promise<{ settings: CertificateSettings; updatedAt: Date } | null> {
      const r = await (trx ?? db)('product_certificate_settings').where('product_line_id', productLineId).first();
      if (!r) return null;
      return {
        settings: {
          coverageType: r.coverage_type,
          coverageTrigger: r.coverage_trigger as CoverageTrigger,
          aggregateBasis: r.aggregate_basis as AggregateBasis,
          additionalInsuredForm: r.additional_insured_form ?? null,
          waiverForm: r.waiver_form ?? null,
          primaryNonContributory: r.primary_non_contributory,
          otherInsurerIds: (r.other_insurer_ids as number[]) ?? [],
        },
        updatedAt: r.updated_at as Date,
      };
    },

    /** Sets the product's setting (the whole of it). */
    async save(trx: Knex.Transaction, productLineId: number, s: CertificateSettings): Promise<void> {
      const values = {
        coverage_type: s.coverageType,
        coverage_trigger: s.coverageTrigger,
        aggregate_basis: s.aggregateBasis,
        additional_insured_form: s.additionalInsuredForm,
        waiver_form: s.waiverForm,
        primary_non_contributory: s.primaryNonContributory,
        other_insurer_ids: s.otherInsurerIds,
      };
      await trx('product_certificate_settings')
        .insert({ product_line_id: productLineId, ...values })
        .onConflict('product_line_id')
        .merge({ ...values, updated_at: trx.fn.now() });
    },

    /** Of `ids`, those that are insurers which appointed `agencyRootAccountId`. */
    async appointedInsurers(agencyRootAccountId: number, ids: readonly number[], trx?: Knex.Transaction): Promise<number[]> {
      if (ids.length === 0) return [];
      const rows = await (trx ?? db)('root_accounts as r')
        .join('appointments as a', 'a.party_root_account_id', 'r.id')
        .where('a.agency_root_account_id', agencyRootAccountId)
        .where('r.kind', 'insurer')
        .whereIn('r.id', [...ids])
        .select('r.id');
      return rows.map((r) => r.id as number);
    },
  };
}

export type CertificateSettingsRepository = ReturnType<typeof createCertificateSettingsRepository>;
