/**
 * Parties by appointment (issue 49, item 1): insurers and MGAs are root accounts of their kind,
 * and an agency sells for those that appointed it. `list` answers the parties that appointed the
 * key's account (oldest appointment first, paged), each with the account's products naming it
 * (a test key: test-mode products only). Another account's appointments are never shown: its
 * list is its own. Operators create parties and appointments (`npm run ops -- create-party`,
 * `appoint`: `appoint` here, audited by the caller). Errors (AppError): none of its own.
 */
import type { Principal } from '../api-keys/service';
import type { AccountsRepository } from '../accounts/repository';
import type { AppointingParty, PartiesRepository } from './repository';
import type { ListPartiesQuery, Party } from './schemas';

/** Why an appointment cannot be made (the operator's input): the message says which account. */
export class AppointmentRefused extends Error {}

export function toPartyRead(p: AppointingParty): Party {
  return {
    object: 'party',
    id: p.id,
    kind: p.kind,
    name: p.name,
    register_number: p.registerNumber,
    product_ids: p.productIds,
    appointed_at: p.appointedAt.toISOString(),
  };
}

export function createPartyService(deps: { parties: PartiesRepository; accounts: Pick<AccountsRepository, 'findById'> }) {
  return {
    async list(principal: Principal, q: ListPartiesQuery): Promise<{ items: Party[]; total: number }> {
      const page = await deps.parties.listAppointing(principal.rootAccountId, {
        testModeOnly: principal.mode === 'test',
        limit: q.pageSize,
        offset: q.pageIndex * q.pageSize,
      });
      return { items: page.items.map(toPartyRead), total: page.total };
    },

    /**
     * Party `partyId` (an insurer or MGA) appoints agency `agencyId` (an agency root account), once:
     * asked again, the same appointment (`created` false).
     * @throws AppointmentRefused when either account is missing or of the wrong kind.
     */
    async appoint(partyId: number, agencyId: number) {
      const [party, agency] = await Promise.all([deps.accounts.findById(partyId), deps.accounts.findById(agencyId)]);
      if (!party || (party.kind !== 'insurer' && party.kind !== 'mga'))
        throw new AppointmentRefused(`root account ${partyId} is not an insurer or MGA`);
      if (!agency || agency.kind !== 'agency') throw new AppointmentRefused(`root account ${agencyId} is not an agency`);
      return { party, agency, ...(await deps.parties.appoint(party.id, agency.id)) };
    },
  };
}

export type PartyService = ReturnType<typeof createPartyService>;
