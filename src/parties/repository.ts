/**
 * Appointments (issue 49, item 1): which insurer or MGA root account appointed which agency to
 * sell for it. The only writer of `appointments`; it reads the parties' names and register
 * numbers from `root_accounts` and the products naming them from `product_lines`. Plain objects.
 */
import type { Db } from '../db/knex';
import type { PartyAccount } from '../accounts/types';

/** A party as an appointed agency sees it: the party, when it appointed the agency, and the agency's products naming it. */
export interface AppointingParty extends PartyAccount {
  appointedAt: Date;
  /** Ids of the agency's products (in the scope asked for) naming the party as insurer or MGA, ascending. */
  productIds: number[];
}

export interface Appointment {
  id: number;
  partyRootAccountId: number;
  agencyRootAccountId: number;
  createdAt: Date;
}

const toAppointment = (r: Record<string, unknown>): Appointment => ({
  id: r.id as number,
  partyRootAccountId: r.party_root_account_id as number,
  agencyRootAccountId: r.agency_root_account_id as number,
  createdAt: r.created_at as Date,
});

export function createPartiesRepository(db: Db) {
  return {
    /**
     * Records that `partyRootAccountId` appointed `agencyRootAccountId`, once: asked again, the
     * same appointment (`created` false). The caller checks both accounts' kinds.
     */
    async appoint(partyRootAccountId: number, agencyRootAccountId: number): Promise<{ appointment: Appointment; created: boolean }> {
      const values = { party_root_account_id: partyRootAccountId, agency_root_account_id: agencyRootAccountId };
      const inserted = await db('appointments')
        .insert(values)
        .onConflict(['party_root_account_id', 'agency_root_account_id'])
        .ignore()
        .returning('id');
      const row = await db('appointments').where(values).first();
      return { appointment: toAppointment(row), created: inserted.length > 0 };
    },

    /** Whether `partyRootAccountId` appointed `agencyRootAccountId`. */
    async hasAppointed(partyRootAccountId: number, agencyRootAccountId: number): Promise<boolean> {
      const row = await db('appointments')
        .where({ party_root_account_id: partyRootAccountId, agency_root_account_id: agencyRootAccountId })
        .first('id');
      return row !== undefined;
    },

    /**
     * A page of the insurers and MGAs that appointed `agencyRootAccountId`, oldest appointment
     * first, with the total; each with the ids of the agency's products naming it (archived
     * products left out; test-mode ones only with `testModeOnly`).
     */
    async listAppointing(
      agencyRootAccountId: number,
      page: { testModeOnly: boolean; limit: number; offset: number },
    ): Promise<{ items: AppointingParty[]; total: number }> {
      const base = db('appointments as a')
        .join('root_accounts as r', 'r.id', 'a.party_root_account_id')
        .where('a.agency_root_account_id', agencyRootAccountId)
        .whereIn('r.kind', ['insurer', 'mga']);
      const [rows, counted] = await Promise.all([
        base
          .clone()
          .select('r.id', 'r.slug', 'r.name', 'r.kind', 'r.register_number', 'a.created_at as appointed_at')
          .select(
            db.raw(
              `array(select pl.id from product_lines pl
                      where pl.root_account_id = a.agency_root_account_id and pl.archived_at is null
                        and (pl.insurer_root_account_id = r.id or pl.mga_root_account_id = r.id)
                        and (pl.is_test_mode or not ?::boolean)
                      order by pl.id) as product_ids`,
              [page.testModeOnly],
            ),
          )
          .orderBy([
            { column: 'a.created_at', order: 'asc' },
            { column: 'a.id', order: 'asc' },
          ])
          .limit(page.limit)
          .offset(page.offset),
        base.clone().count<{ count: string }[]>({ count: '*' }),
      ]);
      return {
        items: (rows as Array<Record<string, unknown>>).map((r) => ({
          id: r.id as number,
          slug: r.slug as string,
          name: r.name as string,
          kind: r.kind as AppointingParty['kind'],
          registerNumber: (r.register_number as string | null) ?? null,
          appointedAt: r.appointed_at as Date,
          productIds: (r.product_ids as number[]).map(Number),
        })),
        total: Number(counted[0]?.count ?? 0),
      };
    },
  };
}

export type PartiesRepository = ReturnType<typeof createPartiesRepository>;
