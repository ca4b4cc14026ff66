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

/** The fields of the stored object itself, the same for a certificate and a zip. */
type StoredObject = Pick<RecordedDocument, 'id' | 'purchase_id' | 'root_account_id' | 'storage_key' | 'size_bytes' | 'sha256'>;

/** `row`'s stored object with its kind's own fields (`own`), as one RecordedDocument. */
function recorded(
  row: StoredObject,
  own: Pick<RecordedDocument, 'kind' | 'certificate_number' | 'revision' | 'archive_kind' | 'product_line_id'>,
): RecordedDocument {
  return {
    ...own,
    id: row.id,
    purchase_id: row.purchase_id,
    root_account_id: row.root_account_id,
    storage_key: row.storage_key,
    size_bytes: row.size_bytes,
    sha256: row.sha256,
  };
}

export function createSweepRepository(db: Db | Knex.Transaction) {
  /** Up to `limit` current (not superseded) rows of `table` (aliased `d`, its purchase `p`) after id `afterId`, ids ascending, one root account's with `rootAccountId`. */
  const currentAfter = (table: 'certificates' | 'certificate_archives', afterId: number, limit: number, rootAccountId?: number) => {
    const q = db(`${table} as d`)
      .join('purchases as p', 'p.id', 'd.purchase_id')
      .where('d.id', '>', afterId)
      .whereNull('d.superseded_at')
      .orderBy('d.id')
      .limit(limit);
    if (rootAccountId !== undefined) q.where('p.root_account_id', rootAccountId);
    return q;
  };
  return {
    /** Up to `limit` current certificates with an object after id `afterId`, ids ascending (one root account's with `rootAccountId`). */
    async certificatesAfter(afterId: number, limit: number, rootAccountId?: number): Promise<RecordedDocument[]> {
      const rows: (StoredObject & { certificate_number: string; revision: number })[] = await currentAfter(
        'certificates',
        afterId,
        limit,
        rootAccountId,
      )
        .whereNotNull('d.storage_key')
        .select(
          'd.id',
          'd.purchase_id',
          'p.root_account_id',
          'd.certificate_number',
          'd.revision',
          'd.storage_key',
          'd.size_bytes',
          'd.sha256',
        );
      return rows.map((r) =>
        recorded(r, {
          kind: 'certificate',
          certificate_number: r.certificate_number,
          revision: r.revision,
          archive_kind: null,
          product_line_id: null,
        }),
      );
    },

    /** Up to `limit` current zips after id `afterId`, ids ascending (one root account's with `rootAccountId`). */
    async archivesAfter(afterId: number, limit: number, rootAccountId?: number): Promise<RecordedDocument[]> {
      const rows: (StoredObject & { kind: 'payment' | 'product'; product_line_id: number | null })[] = await currentAfter(
        'certificate_archives',
        afterId,
        limit,
        rootAccountId,
      ).select('d.id', 'd.purchase_id', 'p.root_account_id', 'd.kind', 'd.product_line_id', 'd.storage_key', 'd.size_bytes', 'd.sha256');
      return rows.map((r) =>
        recorded(r, {
          kind: 'archive',
          certificate_number: null,
          revision: null,
          archive_kind: r.kind,
          product_line_id: r.product_line_id,
        }),
      );
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
