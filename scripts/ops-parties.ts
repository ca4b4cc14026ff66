/**
 * Parties by appointment (issue 49, item 1), for `npm run ops` (scripts/ops.ts dispatches here):
 *
 * - `create-party --kind insurer|mga --name "<name>" [--register-number <NAIC code or register no.>]
 *   [--slug <slug>] --reason "<why>"`: creates the insurer or MGA root account (slug: `--slug`, else
 *   `<kind>-<name in lower case, dashes>`), or updates the name and register number of the party
 *   with that slug; refused (exit 2) when the slug is an account of another kind.
 * - `appoint --party <id> --agency <id> --reason "<why>"`: the party appoints the agency, once
 *   (asked again, the same appointment); refused (exit 2) when the party is not an insurer or MGA
 *   or the agency not an agency. From then on the agency lists the party (`GET /api/v1/parties`),
 *   its products may name it and it may ask for its bordereaux.
 *
 * Both are recorded in `operator_audit_log` before they act (target `root_account`: the party;
 * root account: the agency for `appoint`), the operator named as every ops command names them
 * (scripts/ops-operators.ts). `--json` prints `{ party, appointment?, created, audit_id }`.
 */
import { loadConfigOrExit } from '../src/config';
import { createDb, type Db } from '../src/db/knex';
import { createAccountsRepository } from '../src/accounts/repository';
import { createPartiesRepository } from '../src/parties/repository';
import { AppointmentRefused, createPartyService } from '../src/parties/service';
import { createAuditRepository } from '../src/audit/repository';
import { audited } from '../src/audit/audited';
import { positiveInt, UsageError } from './cli';

/** Who is running `action`, as ops.ts names its operators (their audit entry's `actor` and how it was told). */
export type Identify = (db: Db, action: string) => Promise<{ actor: string } & Record<string, unknown>>;

/** A party's slug from its kind and name: `insurer-evergreen-mutual-insurance-co`. */
export function partySlug(kind: string, name: string): string {
  const words = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `${kind}-${words}`.slice(0, 64).replace(/-+$/, '');
}

/** The command's options as ops.ts parsed them. */
export interface PartyOptions {
  kind?: string | undefined;
  name?: string | undefined;
  'register-number'?: string | undefined;
  slug?: string | undefined;
  party?: string | undefined;
  agency?: string | undefined;
  reason?: string | undefined;
}

function reasonOf(command: string, value: string | undefined): string {
  const reason = value?.trim();
  if (!reason)
    throw new UsageError(`${command} changes the service: --reason "<why>" is required (recorded in the audit log with your name)`);
  if (reason.length > 2000) throw new UsageError(`--reason is at most 2000 characters, got ${reason.length}`);
  return reason;
}

/** `create-party` or `appoint` (see the module); exit 0 done, 2 refused, 1 usage error or failure. */
export async function partyCommand(
  command: 'create-party' | 'appoint',
  o: PartyOptions,
  json: boolean,
  identify: Identify,
): Promise<number> {
  try {
    return await carryOut(command, o, json, identify);
  } catch (err) {
    if (!(err instanceof AppointmentRefused)) throw err;
    // A refusal is an answer (exit 2), as ops.ts answers a purchase's.
    console.error(`ops: refused: ${err.message}`);
    const auditId = (err as { auditId?: number }).auditId;
    if (json)
      console.log(JSON.stringify({ outcome: 'refused', reason: err.message, ...(auditId === undefined ? {} : { audit_id: auditId }) }));
    return 2;
  }
}

async function carryOut(command: 'create-party' | 'appoint', o: PartyOptions, json: boolean, identify: Identify): Promise<number> {
  const reason = reasonOf(command, o.reason);
  if (command === 'create-party') {
    if (o.kind !== 'insurer' && o.kind !== 'mga') throw new UsageError(`--kind must be insurer or mga, got "${o.kind ?? ''}"`);
    const name = o.name?.trim();
    if (!name || name.length > 200) throw new UsageError('--name must be 1 to 200 characters');
    const registerNumber = o['register-number']?.trim() || null;
    if (registerNumber !== null && registerNumber.length > 64) throw new UsageError('--register-number is at most 64 characters');
    const slug = o.slug?.trim() || partySlug(o.kind, name);
    if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(slug))
      throw new UsageError(`--slug must be lower-case letters, digits and dashes, got "${slug}"`);
    return withDb(async (db) => {
      const accounts = createAccountsRepository(db);
      const existing = await accounts.findBySlug(slug);
      const { result, auditId } = await run(
        db,
        identify,
        command,
        reason,
        { targetId: existing ? String(existing.id) : slug, rootAccountId: null },
        async () => {
          const party = await accounts.upsertParty({ slug, name, kind: o.kind as 'insurer' | 'mga', registerNumber });
          if (!party)
            throw new AppointmentRefused(
              `slug ${slug} belongs to root account ${existing?.id ?? '?'}, a ${existing?.kind ?? 'root account'} of another kind`,
            );
          return { party, created: !existing };
        },
      );
      const p = result.party;
      if (json) console.log(JSON.stringify({ party: partyJson(p), created: result.created, audit_id: auditId }));
      else
        console.log(
          `${p.kind} ${p.id} ${JSON.stringify(p.name)} (slug ${p.slug}, register number ${p.registerNumber ?? 'none'}) ${result.created ? 'created' : 'updated'}; audit entry ${auditId}`,
        );
      return 0;
    });
  }
  const partyId = positiveInt(o.party, '--party');
  const agencyId = positiveInt(o.agency, '--agency');
  return withDb(async (db) => {
    const service = createPartyService({ parties: createPartiesRepository(db), accounts: createAccountsRepository(db) });
    const { result, auditId } = await run(db, identify, command, reason, { targetId: String(partyId), rootAccountId: agencyId }, () =>
      service.appoint(partyId, agencyId),
    );
    const a = result.appointment;
    if (json)
      console.log(
        JSON.stringify({
          appointment: {
            id: a.id,
            party_id: a.partyRootAccountId,
            agency_id: a.agencyRootAccountId,
            created_at: a.createdAt.toISOString(),
          },
          created: result.created,
          audit_id: auditId,
        }),
      );
    else
      console.log(
        `${result.party.kind} ${partyId} ${JSON.stringify(result.party.name)} ${result.created ? 'appointed' : 'had already appointed'} agency ${agencyId} ${JSON.stringify(result.agency.name)}; audit entry ${auditId}`,
      );
    return 0;
  });
}

const partyJson = (p: { id: number; slug: string; name: string; kind: string; registerNumber: string | null }) => ({
  id: p.id,
  slug: p.slug,
  name: p.name,
  kind: p.kind,
  register_number: p.registerNumber,
});

async function withDb(act: (db: Db) => Promise<number>): Promise<number> {
  const db = createDb(loadConfigOrExit());
  try {
    return await act(db);
  } finally {
    await db.destroy();
  }
}

/** `act` on the record: the audit entry first (target the party), refusals as AppointmentRefused (exit 2 in ops.ts). */
async function run<T>(
  db: Db,
  identify: Identify,
  action: string,
  reason: string,
  target: { targetId: string; rootAccountId: number | null },
  act: () => Promise<T>,
) {
  return audited(
    createAuditRepository(db),
    { actorKind: 'operator_cli', ...(await identify(db, action)), action, targetKind: 'root_account', ...target, reason },
    act,
    {
      details: (r) => JSON.parse(JSON.stringify(r)) as Record<string, unknown>,
      isRefusal: (err) => err instanceof AppointmentRefused || err instanceof UsageError,
      onFinishError: (e, id) =>
        console.error(`ops: could not record the outcome in audit entry ${id}: ${e instanceof Error ? e.message : String(e)}`),
    },
  );
}
