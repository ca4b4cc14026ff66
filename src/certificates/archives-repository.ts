/**
 * The zips of a purchase's certificates in PostgreSQL (`certificate_archives`; issue 6, spec
 * §4.5): the current one per purchase, kind (the whole payment, or one product line with its
 * proof-of-coverage code) and product line, and the ones a later set of certificates replaced.
 * This module is the one writer of `certificate_archives`.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';

/** A stored zip of certificates: every certificate of the payment, or of one product line with its proof-of-coverage code. */
export interface ArchiveRow {
  kind: 'payment' | 'product';
  productLineId: number | null;
  proofCode: string | null;
  storageKey: string;
  sizeBytes: number;
  sha256: string;
  /** The certificates it holds (null: recorded before zips kept them; taken as current). */
  certificateIds: number[] | null;
}

/** `archives` / `recordArchive` / `clearArchives` over `db` (a transaction or the pool). */
export function createCertificateArchivesRepository(db: Db | Knex.Transaction) {
  return {
    /** The purchase's current zips (none superseded), by kind and product line. */
    async archives(purchaseId: number): Promise<ArchiveRow[]> {
      const rows = await db('certificate_archives')
        .where({ purchase_id: purchaseId })
        .whereNull('superseded_at')
        .orderBy([{ column: 'kind' }, { column: 'product_line_id' }]);
      return rows.map((r) => ({
        kind: r.kind,
        productLineId: r.product_line_id,
        proofCode: r.proof_code,
        storageKey: r.storage_key,
        sizeBytes: r.size_bytes,
        sha256: r.sha256,
        certificateIds: r.certificate_ids ?? null,
      }));
    },

    /**
     * Records a stored zip as the current one of its purchase, kind and product line; one built
     * before over another set of certificates (a holder added, a version reissued) is marked
     * superseded (its object and proof-of-coverage code stay). The same zip again changes nothing.
     */
    async recordArchive(purchaseId: number, a: ArchiveRow): Promise<void> {
      // The common case (a first zip of its kind, at issuance): one insert. Only when it conflicts
      // (this zip recorded before, or a current one over another set) the transaction below.
      const first = await db.raw(
        `insert into certificate_archives (purchase_id, kind, product_line_id, proof_code, storage_key, size_bytes, sha256, certificate_ids)
         values (?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing returning id`,
        [purchaseId, a.kind, a.productLineId, a.proofCode, a.storageKey, a.sizeBytes, a.sha256, a.certificateIds],
      );
      if (first.rows.length > 0) return;
      await db.transaction(async (trx) => {
        const same = await trx('certificate_archives').where({ storage_key: a.storageKey }).first('id', 'superseded_at');
        if (same && same.superseded_at === null) return;
        await trx('certificate_archives')
          .where({ purchase_id: purchaseId, kind: a.kind })
          .whereRaw('coalesce(product_line_id, 0) = ?', [a.productLineId ?? 0])
          .whereNull('superseded_at')
          .update({ superseded_at: trx.fn.now() });
        // The set of certificates came back to one zipped before: that zip is current again.
        if (same) {
          await trx('certificate_archives').where({ id: same.id }).update({ superseded_at: null });
          return;
        }
        await trx.raw(
          `insert into certificate_archives (purchase_id, kind, product_line_id, proof_code, storage_key, size_bytes, sha256, certificate_ids)
           values (?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing`,
          [purchaseId, a.kind, a.productLineId, a.proofCode, a.storageKey, a.sizeBytes, a.sha256, a.certificateIds],
        );
      });
    },

    /** Drops archive rows whose objects went missing, so they are built again. */
    async clearArchives(purchaseId: number, storageKeys: readonly string[]): Promise<void> {
      if (storageKeys.length === 0) return;
      await db('certificate_archives')
        .where({ purchase_id: purchaseId })
        .whereNull('superseded_at')
        .whereIn('storage_key', storageKeys)
        .delete();
    },
  };
}
