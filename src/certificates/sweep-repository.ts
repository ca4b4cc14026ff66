/**
 * Read-only queries of the stored-documents sweep (src/certificates/document-sweep.ts) over
 * `certificates` and `certificate_archives`: pages of current documents with an object (not
 * superseded; ids ascending; optionally one root account's), and a document's record after a
 * repair. It writes nothing: the certificates repository stays the one writer of both tables.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';

/** One stored document as recorded: a certificate PDF or a zip. */
export interface RecordedDocument {
  kind: 'certificate' | 'archive';
  /** The row's id in `certificates` or `certificate_archives`. */
  id: number;
  purchase_id: number;
  root_account_id: number;
  /** The certificate's number (null for a zip). */
  certificate_number: string | null;
  /** 1 for a certificate's first version (null for a zip). */
  revision: number | null;
  /** For a zip: `payment` or `product` and its product line (null for a certificate). */
  archive_kind: 'payment' | 'product' | null;
  product_line_id: number | null;
  storage_key: string;
  size_bytes: number;
  sha256: string;
}

export function createSweepRepository(db: Db | Knex.Transaction) {
  return {
    /** Up to `limit` current certificates with an object after id `afterId`, ids ascending (one root account's with `rootAccountId`). */
    async certificatesAfter(afterId: number, limit: number, rootAccountId?: number): Promise<RecordedDocument[]> {
      const q = db('certificates as c')
        .join('purchases as p', 'p.id', 'c.purchase_id')
        .where('c.id', '>', afterId)
        .whereNotNull('c.storage_key')
        .whereNull('c.superseded_at')
        .orderBy('c.id')
        .limit(limit)
        .select(
          'c.id',
          'c.purchase_id',
          'p.root_account_id',
          'c.certificate_number',
          'c.revision',
          'c.storage_key',
          'c.size_bytes',
          'c.sha256',
        );
      if (rootAccountId !== undefined) q.where('p.root_account_id', rootAccountId);
      const rows = await q;
      return rows.map((r) => ({
        kind: 'certificate' as const,
        id: r.id,
        purchase_id: r.purchase_id,
        root_account_id: r.root_account_id,
        certificate_number: r.certificate_number,
        revision: r.revision,
        archive_kind: null,
        product_line_id: null,
        storage_key: r.storage_key,
        size_bytes: r.size_bytes,
        sha256: r.sha256,
      }));
    },

    /** Up to `limit` current zips after id `afterId`, ids ascending (one root account's with `rootAccountId`). */
    async archivesAfter(afterId: number, limit: number, rootAccountId?: number): Promise<RecordedDocument[]> {
      const q = db('certificate_archives as a')
        .join('purchases as p', 'p.id', 'a.purchase_id')
        .where('a.id', '>', afterId)
        .whereNull('a.superseded_at')
        .orderBy('a.id')
        .limit(limit)
        .select('a.id', 'a.purchase_id', 'p.root_account_id', 'a.kind', 'a.product_line_id', 'a.storage_key', 'a.size_bytes', 'a.sha256');
      if (rootAccountId !== undefined) q.where('p.root_account_id', rootAccountId);
      const rows = await q;
      return rows.map((r) => ({
        kind: 'archive' as const,
        id: r.id,
        purchase_id: r.purchase_id,
        root_account_id: r.root_account_id,
        certificate_number: null,
        revision: null,
        archive_kind: r.kind,
        product_line_id: r.product_line_id,
        storage_key: r.storage_key,
        size_bytes: r.size_bytes,
        sha256: r.sha256,
      }));
    },

    /** The record of `doc` after issuance ran again: the same certificate row, or its purchase's current zip under the same key. */
    async recordNow(doc: RecordedDocument): Promise<{ storage_key: string; size_bytes: number; sha256: string } | null> {
      const row =
        doc.kind === 'certificate'
          ? await db('certificates').where({ id: doc.id }).first('storage_key', 'size_bytes', 'sha256')
          : await db('certificate_archives')
              .where({ purchase_id: doc.purchase_id, storage_key: doc.storage_key })
              .whereNull('superseded_at')
              .first('storage_key', 'size_bytes', 'sha256');
      return row?.storage_key ? { storage_key: row.storage_key, size_bytes: row.size_bytes, sha256: row.sha256 } : null;
    },
  };
}
