/**
 * The one writer of `account_signatures` (issue 50, item 1): an agency's authorized
 * representative as its certificates print it, a name and the key of the signature image the
 * agency uploaded (in object storage). Plain objects; instants as `Date`.
 */
import type { Db } from '../db/knex';

export interface AccountSignature {
  rootAccountId: number;
  representativeName: string;
  storageKey: string;
  contentType: 'image/png' | 'image/jpeg';
  sizeBytes: number;
  sha256: string;
  updatedAt: Date;
}

const toSignature = (r: Record<string, unknown>): AccountSignature => ({
  rootAccountId: r.root_account_id as number,
  representativeName: r.representative_name as string,
  storageKey: r.storage_key as string,
  contentType: r.content_type as AccountSignature['contentType'],
  sizeBytes: r.size_bytes as number,
  sha256: r.sha256 as string,
  updatedAt: r.updated_at as Date,
});

export function createSignatureRepository(db: Db) {
  return {
    /** The account's signature, or null (certificates then name the agency alone). */
    async find(rootAccountId: number): Promise<AccountSignature | null> {
      const row = await db('account_signatures').where('root_account_id', rootAccountId).first();
      return row ? toSignature(row) : null;
    },

    /** Sets the account's signature (replacing any earlier one). */
    async save(s: Omit<AccountSignature, 'updatedAt'>): Promise<AccountSignature> {
      const values = {
        representative_name: s.representativeName,
        storage_key: s.storageKey,
        content_type: s.contentType,
        size_bytes: s.sizeBytes,
        sha256: s.sha256,
      };
      const [row] = await db('account_signatures')
        .insert({ root_account_id: s.rootAccountId, ...values })
        .onConflict('root_account_id')
        .merge({ ...values, updated_at: db.fn.now() })
        .returning('*');
      return toSignature(row);
    },
  };
}

export type SignatureRepository = ReturnType<typeof createSignatureRepository>;
