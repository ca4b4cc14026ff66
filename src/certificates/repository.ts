/**
 * Certificate rows and their versions in PostgreSQL (issue 6; spec §1.3, §2.4, §4.5); this
 * module is the one writer of `certificates`.
 *
 * - `plan(purchaseId)` creates one `certificates` row per covered unit (idempotent: a covered
 *   unit has at most one row, so a retry keeps the first certificate number).
 * - `pendingForIssue` / `markStored` drive rendering; `voidForUnits`, `voidForHolder` and
 *   `supersede` void a certificate or replace it by its next version.
 * - The repository it returns also holds the zips' methods (`archives` / `recordArchive`, from
 *   archives-repository.ts, the writer of `certificate_archives`) and the verification lookup
 *   (`findForVerification` for the QR page, from lookup-repository.ts, which writes nothing), so
 *   its callers see one repository.
 *
 * Certificate numbers: `COI-<purchase id>-<line position, 1-based>-<unit, 1-based>-<10 hex>`;
 * the random tail (chosen by PostgreSQL once, when the row is planned) keeps numbers unguessable,
 * so the public verification page cannot be walked through by counting.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { redactJsonString } from '../db/json-redaction';
import { createCertificateArchivesRepository, type ArchiveRow } from './archives-repository';
import { createCertificateLookups, type PrintedValues } from './lookup-repository';
import type { ProducerProfile } from '../accounts/types';
import { DEFAULT_CERTIFICATE_SETTINGS, type CertificateSettings } from '../products/certificate-settings';

export type { PrintedValues } from './lookup-repository';

/** The values `row` prints (what `markStored` keeps with the PDF). */
export function printedValues(row: IssuanceRow, proof?: string | null): PrintedValues {
  return {
    ...(proof ? { proof } : {}),
    starts_at: row.startsAt.toISOString(),
    ends_at: row.endsAt.toISOString(),
    time_zone: row.timeZone,
    local_label: row.localLabel,
    named_insured_name: row.namedInsured?.name ?? null,
    holder_name: row.certificateHolder?.name ?? null,
  };
}

/**
 * The purchase's certificates and zips as one consistent read (`currentSet`), and whether they
 * are the complete current set: every covered unit has a current certificate, every current
 * certificate is stored, and each zip holds every current certificate in force of its scope.
 * Not complete while an issuance round is under way (first issuance, a holder's certificates,
 * an endorsement's new versions, objects found lost being stored again).
 */
export interface CertificateSet {
  /** Current certificates (with `includeSuperseded`, every version), in `listForPurchase` order. */
  certificates: StoredCertificate[];
  /** The current zips. */
  archives: ArchiveRow[];
  complete: boolean;
}

/** Everything the certificate template needs for one certificate (minor units; UTC instants). */
export interface IssuanceRow {
  certificateId: number;
  certificateNumber: string;
  /** `YYYY-MM-DD`, fixed when the certificate was planned. */
  issueDate: string;
  purchaseId: number;
  /** The root account that sold the purchase (certificates of one account may share a print). */
  rootAccountId: number;
  testMode: boolean;
  producerName: string;
  /** The agency's producer block (issue 50, item 1); null until the account sets one. */
  producer: Partial<ProducerProfile> | null;
  productLineId: number;
  productName: string;
  insurerName: string;
  /** Insurer A's NAIC number (the product's insurer party's register number), or null. */
  insurerNaic: string | null;
  /** Insurers B–F the product's certificate setting names, in order (issue 50, item 1). */
  otherInsurers: Array<{ name: string; naic: string | null }>;
  /** How the product's certificates describe its coverage (the defaults when it has no setting). */
  coverageSettings: CertificateSettings;
  masterPolicyNumber: string;
  policyNumberTwo: string;
  claimsPhone: string;
  deductibleMinor: number;
  currency: string;
  /** The product's question set `certificate.limits` (amounts in minor units of `currency`). */
  limits: Array<{ label: string; amount_minor: number }>;
  namedInsured: { name: string; address?: Address } | null;
  /** The buyer's name, the named insured when the template asks for none. */
  buyerName: string;
  /** The holder this certificate is issued to (null: none, "to whom it may concern"). */
  certificateHolder: IssuanceHolder | null;
  /** 1 for a certificate's first version; each change that reissues it counts one up. */
  revision: number;
  /** The unit's local calendar day or trip window, as the purchase shows it. */
  localLabel: string;
  unitIndex: number;
  unitKind: 'day' | 'trip';
  startsAt: Date;
  endsAt: Date;
  timeZone: string;
}

/** A certificate holder as a certificate prints it. */
export interface IssuanceHolder {
  name: string;
  address: Address;
  additionalInsured: boolean;
  waiverOfSubrogation: boolean;
  /** null: the default description (the product and the covered dates). */
  descriptionOfOperations: string | null;
}

/** A postal address as the quote answers store it. */
export interface Address {
  line1: string;
  line2?: string;
  city: string;
  region: string;
  postal_code: string;
  country: string;
}

/**
 * A certificate as getCertificates lists it. Its window, named insured and holder name are what
 * it printed once stored (a past version keeps them when an endorsement moves its unit or
 * corrects the named insured); before that, the unit's and item's as they are now.
 */
export interface StoredCertificate {
  certificateId: number;
  /** The covered unit it proves. */
  coveredUnitId: number;
  certificateNumber: string;
  productLineId: number;
  productName: string;
  unitIndex: number;
  unitKind: 'day' | 'trip';
  startsAt: Date;
  endsAt: Date;
  timeZone: string;
  localLabel: string;
  namedInsuredName: string | null;
  storageKey: string | null;
  sizeBytes: number | null;
  sha256: string | null;
  /** When a cancellation of its unit voided it (null while in force; a full refund shows on the purchase). */
  voidedAt: Date | null;
  /** The holder it is issued to (null: none); removed holders' certificates are voided. */
  certificateHolderId: number | null;
  certificateHolderName: string | null;
  /** 1 for the first version; higher after a change reissued it. */
  revision: number;
  /** Set on a past version: when, and by which certificate, it was replaced. */
  supersededAt: Date | null;
  supersededByNumber: string | null;
  /** The signed proof its QR code carries (null or absent: stored before proofs, or not yet stored). */
  proof?: string | null;
}

export function createCertificatesRepository(db: Db | Knex.Transaction) {
  /**
   * The certificates of purchase `purchaseId` (`c`) with the covered unit (`cu`), purchase item
   * (`i`) and product line (`pl`) each is of, and its certificate holder (`h`; none for a
   * certificate of the purchase itself): the rows the issuing and listing reads start from.
   */
  const purchaseCertificates = (purchaseId: number) =>
    db('certificates as c')
      .join('covered_units as cu', 'cu.id', 'c.covered_unit_id')
      .join('purchase_items as i', 'i.id', 'c.purchase_item_id')
      .join('product_lines as pl', 'pl.id', 'c.product_line_id')
      .leftJoin('certificate_holders as h', 'h.id', 'c.certificate_holder_id')
      .where('c.purchase_id', purchaseId);
  return {
    /**
     * Plans the purchase's certificates: one row per covered unit, numbered once. Returns the
     * ids of every certificate of the purchase (planned now or earlier), in unit order.
     */
    async plan(purchaseId: number): Promise<Array<{ certificateId: number; stored: boolean }>> {
      // One current certificate per covered unit and holder: the holders of the unit's item (its
      // buyer's answer, and holders added for every item), or none ("to whom it may concern") when
      // the item has none. A holder added later holds units that were still active when it was
      // added (not ended, not taken by a cancellation); a removed holder gets nothing new.
      await db.raw(
        `insert into certificates (purchase_id, purchase_item_id, covered_unit_id, product_line_id, certificate_holder_id, certificate_number, issue_date)
         select cu.purchase_id, i.id, cu.id, i.product_line_id, h.id,
                'COI-' || cu.purchase_id || '-' || (i.position + 1) || '-' || (cu.unit_index + 1) ||
                  case when h.source = 'api' then '-H' || h.id else '' end || '-' ||
                  upper(substr(replace(gen_random_uuid()::text, '-', ''), 1, 10)),
                (now() at time zone 'utc')::date
           from covered_units cu join purchase_items i on i.id = cu.purchase_item_id
           left join lateral (
             select h.id, h.source, h.active_units_at, h.removed_at from certificate_holders h
              where h.purchase_id = cu.purchase_id and (h.purchase_item_id is null or h.purchase_item_id = i.id)
           ) h on true
          where cu.purchase_id = ?
            and (h.id is null or (h.removed_at is null and (h.source = 'answers' or (cu.ends_at > h.active_units_at and cu.cancellation_id is null))))
            and not exists (select 1 from certificates c0 where c0.covered_unit_id = cu.id and c0.certificate_holder_id is not distinct from h.id and c0.superseded_at is null)
         on conflict do nothing`,
        [purchaseId],
      );
      const rows = await db('certificates as c')
        .join('covered_units as cu', 'cu.id', 'c.covered_unit_id')
        .join('purchase_items as i', 'i.id', 'c.purchase_item_id')
        .where('c.purchase_id', purchaseId)
        .whereNull('c.superseded_at')
        .orderBy([{ column: 'i.position' }, { column: 'cu.unit_index' }, { column: 'c.id' }])
        .select('c.id', 'c.storage_key');
      return rows.map((r) => ({ certificateId: r.id as number, stored: r.storage_key !== null }));
    },

    /** Template data of the given certificates of `purchaseId` that are not stored yet. */
    async pendingForIssue(purchaseId: number, certificateIds: readonly number[]): Promise<IssuanceRow[]> {
      if (certificateIds.length === 0) return [];
      const rows = await purchaseCertificates(purchaseId)
        .join('purchases as p', 'p.id', 'c.purchase_id')
        .join('root_accounts as ra', 'ra.id', 'p.root_account_id')
        .join('buyers as b', 'b.id', 'p.buyer_id')
        .leftJoin('root_accounts as ins', 'ins.id', 'pl.insurer_root_account_id')
        .leftJoin('question_sets as qs', 'qs.id', 'pl.question_set_id')
        .leftJoin('product_certificate_settings as pcs', 'pcs.product_line_id', 'pl.id')
        .whereIn('c.id', certificateIds)
        .whereNull('c.storage_key')
        .orderBy('c.id')
        .select(
          'c.id as certificate_id',
          'c.certificate_number',
          db.raw("to_char(c.issue_date, 'YYYY-MM-DD') as issue_date"),
          'p.id as purchase_id',
          'p.root_account_id',
          'p.mode',
          'ra.name as producer_name',
          'ra.producer_profile',
          'pl.id as product_line_id',
          'pl.customer_name',
          'pl.insurer_name',
          'ins.name as insurer_account_name',
          'ins.register_number as insurer_naic',
          'pcs.coverage_type',
          'pcs.coverage_trigger',
          'pcs.aggregate_basis',
          'pcs.additional_insured_form',
          'pcs.waiver_form',
          'pcs.primary_non_contributory',
          db.raw(
            `coalesce((select jsonb_agg(jsonb_build_object('name', x.name, 'naic', x.register_number) order by u.ord)
               from unnest(pcs.other_insurer_ids) with ordinality as u(id, ord) join root_accounts x on x.id = u.id), '[]'::jsonb) as other_insurers`,
          ),
          'pl.master_policy_number',
          'pl.policy_number_two',
          'pl.claims_phone_number',
          'pl.deductible_minor',
          'pl.currency',
          db.raw("coalesce(qs.definition -> 'certificate' -> 'limits', '[]'::jsonb) as limits"),
          'i.named_insured',
          db.raw("b.first_name || ' ' || b.last_name as buyer_name"),
          'c.certificate_holder_id',
          'h.name as holder_name',
          'h.address as holder_address',
          'h.additional_insured',
          'h.waiver_of_subrogation',
          'h.description_of_operations',
          'c.revision',
          'cu.local_label',
          'cu.unit_index',
          'cu.kind',
          'cu.starts_at',
          'cu.ends_at',
          'cu.time_zone',
        );
      return rows.map((r) => ({
        certificateId: r.certificate_id,
        certificateNumber: r.certificate_number,
        issueDate: r.issue_date,
        purchaseId: r.purchase_id,
        rootAccountId: r.root_account_id,
        testMode: r.mode === 'test',
        producerName: r.producer_name,
        producer: (r.producer_profile as Partial<ProducerProfile> | null) ?? null,
        productLineId: r.product_line_id,
        productName: r.customer_name,
        insurerName: r.insurer_name || r.insurer_account_name || '',
        insurerNaic: r.insurer_naic ?? null,
        otherInsurers: r.other_insurers,
        coverageSettings:
          r.coverage_type === null
            ? DEFAULT_CERTIFICATE_SETTINGS
            : {
                coverageType: r.coverage_type,
                coverageTrigger: r.coverage_trigger,
                aggregateBasis: r.aggregate_basis,
                additionalInsuredForm: r.additional_insured_form,
                waiverForm: r.waiver_form,
                primaryNonContributory: r.primary_non_contributory,
                otherInsurerIds: [],
              },
        masterPolicyNumber: r.master_policy_number,
        policyNumberTwo: r.policy_number_two,
        claimsPhone: r.claims_phone_number,
        deductibleMinor: Number(r.deductible_minor),
        currency: r.currency,
        limits: r.limits,
        namedInsured: r.named_insured,
        buyerName: r.buyer_name,
        certificateHolder:
          r.certificate_holder_id === null
            ? null
            : {
                name: r.holder_name,
                address: r.holder_address,
                additionalInsured: r.additional_insured,
                waiverOfSubrogation: r.waiver_of_subrogation,
                descriptionOfOperations: r.description_of_operations ?? null,
              },
        revision: r.revision,
        localLabel: r.local_label,
        unitIndex: r.unit_index,
        unitKind: r.kind,
        startsAt: r.starts_at,
        endsAt: r.ends_at,
        timeZone: r.time_zone,
      }));
    },

    /**
     * Records where a certificate's PDF is stored and what it printed (`printed`: its window,
     * named insured and holder, see `printedValues`); a row already stored is left as it is.
     */
    async markStored(
      certificateId: number,
      stored: { storageKey: string; sizeBytes: number; sha256: string; printed: PrintedValues },
    ): Promise<void> {
      await db('certificates')
        .where({ id: certificateId })
        .whereNull('storage_key')
        .update({
          storage_key: stored.storageKey,
          size_bytes: stored.sizeBytes,
          sha256: stored.sha256,
          stored_at: db.fn.now(),
          printed: JSON.stringify(stored.printed),
        });
    },

    /** Forgets the storage of certificates whose objects went missing, so they are issued again. */
    async clearStored(certificateIds: readonly number[]): Promise<void> {
      if (certificateIds.length === 0) return;
      await db('certificates')
        .whereIn('id', certificateIds)
        .update({ storage_key: null, size_bytes: null, sha256: null, stored_at: null, printed: null });
    },

    /**
     * The purchase's current certificates (every version with `includeSuperseded`), in
     * product-line, unit, holder and version order.
     */
    async listForPurchase(purchaseId: number, opts: { includeSuperseded?: boolean } = {}): Promise<StoredCertificate[]> {
      const q = purchaseCertificates(purchaseId)
        .leftJoin('certificates as next', 'next.id', 'c.superseded_by_id')
        .orderBy([
          { column: 'i.position' },
          { column: 'cu.unit_index' },
          { column: 'c.certificate_holder_id', order: 'asc', nulls: 'first' },
          { column: 'c.revision' },
        ])
        .select(
          'c.id',
          'c.covered_unit_id',
          'c.certificate_number',
          'c.product_line_id',
          'pl.customer_name',
          'cu.unit_index',
          'cu.kind',
          'cu.starts_at',
          'cu.ends_at',
          'cu.time_zone',
          'cu.local_label',
          db.raw("i.named_insured ->> 'name' as named_insured_name"),
          'c.storage_key',
          'c.size_bytes',
          'c.sha256',
          'c.voided_at',
          'c.certificate_holder_id',
          'h.name as holder_name',
          'c.revision',
          'c.superseded_at',
          'next.certificate_number as superseded_by_number',
          'c.printed',
        );
      if (!opts.includeSuperseded) q.whereNull('c.superseded_at');
      const rows = await q;
      return rows.map((r) => {
        const printed = r.printed as PrintedValues | null;
        return {
          certificateId: r.id,
          coveredUnitId: r.covered_unit_id,
          certificateNumber: r.certificate_number,
          productLineId: r.product_line_id,
          productName: r.customer_name,
          unitIndex: r.unit_index,
          unitKind: r.kind,
          startsAt: printed ? new Date(printed.starts_at) : r.starts_at,
          endsAt: printed ? new Date(printed.ends_at) : r.ends_at,
          timeZone: printed?.time_zone ?? r.time_zone,
          localLabel: printed?.local_label ?? r.local_label,
          namedInsuredName: printed ? printed.named_insured_name : r.named_insured_name,
          storageKey: r.storage_key,
          sizeBytes: r.size_bytes,
          sha256: r.sha256,
          voidedAt: r.voided_at ?? null,
          certificateHolderId: r.certificate_holder_id ?? null,
          certificateHolderName: printed ? printed.holder_name : (r.holder_name ?? null),
          revision: r.revision,
          supersededAt: r.superseded_at ?? null,
          supersededByNumber: r.superseded_by_number ?? null,
          proof: printed?.proof ?? null,
        };
      });
    },

    /**
     * The purchase's certificates (current ones, or every version with `includeSuperseded`) and
     * current zips read in one snapshot (a repeatable-read transaction), with whether they are
     * the complete current set (see `CertificateSet`): a reader never sees new versions planned
     * but not stored, or zips not rebuilt over them yet, as complete.
     */
    async currentSet(purchaseId: number, opts: { includeSuperseded?: boolean } = {}): Promise<CertificateSet> {
      const read = async (r: ReturnType<typeof createCertificatesRepository>): Promise<CertificateSet> => {
        const certificates = await r.listForPurchase(purchaseId, opts);
        const archives = await r.archives(purchaseId);
        const unitsWithout = await r.unitsWithoutCertificate(purchaseId);
        return { certificates, archives, complete: unitsWithout === 0 && isCompleteSet(certificates, archives) };
      };
      if (db.isTransaction) return read(createCertificatesRepository(db));
      return db.transaction((trx) => read(createCertificatesRepository(trx)), { isolationLevel: 'repeatable read', readOnly: true });
    },

    /** Covered units of the purchase with no current certificate at all (issuance must plan them). */
    async unitsWithoutCertificate(purchaseId: number): Promise<number> {
      const row = await db('covered_units as cu')
        .where('cu.purchase_id', purchaseId)
        .whereNotExists(db('certificates as c').whereRaw('c.covered_unit_id = cu.id').whereNull('c.superseded_at'))
        .count<{ n: string }[]>({ n: '*' })
        .first();
      return Number(row?.n ?? 0);
    },

    /** How many of the purchase's current certificates are in force (not voided by a cancellation or a holder's removal). */
    async countInForce(purchaseId: number): Promise<number> {
      const row = await db('certificates')
        .where({ purchase_id: purchaseId })
        .whereNull('voided_at')
        .whereNull('superseded_at')
        .count({ n: '*' })
        .first();
      return Number(row?.n ?? 0);
    },

    /**
     * Voids the current certificates of `coveredUnitIds` at `at` (a cancellation took those units);
     * a certificate voided before keeps its time. Returns the numbers voided by this call.
     */
    async voidForUnits(coveredUnitIds: readonly number[], at: Date): Promise<string[]> {
      if (!coveredUnitIds.length) return [];
      const rows = await db('certificates')
        .whereIn('covered_unit_id', coveredUnitIds)
        .whereNull('voided_at')
        .whereNull('superseded_at')
        .update({ voided_at: at })
        .returning('certificate_number');
      return rows.map((r: { certificate_number: string }) => r.certificate_number);
    },

    /**
     * Replaces the purchase's current certificates in force that `which` names (all of them, or
     * those of some holders and of some covered units) by their next version, at `at`: each is marked superseded
     * and linked to its successor, which is planned with the same unit and holder, the next
     * `revision` and the number `<first version's number>-R<revision>` (rendered by the next
     * issuance round; a stored PDF is never edited). Returns the numbers, old → new.
     */
    async supersede(
      purchaseId: number,
      which: { all: true } | { holderIds: number[]; coveredUnitIds: number[] },
      at: Date,
    ): Promise<Array<{ from: string; to: string }>> {
      if (!('all' in which) && which.holderIds.length === 0 && which.coveredUnitIds.length === 0) return [];
      return db.transaction(async (trx) => {
        const q = trx('certificates')
          .where({ purchase_id: purchaseId })
          .whereNull('superseded_at')
          .whereNull('voided_at')
          .orderBy('id')
          .forUpdate();
        if (!('all' in which))
          q.where((w) => w.whereIn('certificate_holder_id', which.holderIds).orWhereIn('covered_unit_id', which.coveredUnitIds));
        const old = await q.select(
          'id',
          'purchase_item_id',
          'covered_unit_id',
          'product_line_id',
          'certificate_holder_id',
          'certificate_number',
          'revision',
        );
        if (old.length === 0) return [];
        await trx('certificates')
          .whereIn(
            'id',
            old.map((o) => o.id),
          )
          .update({ superseded_at: at });
        const pairs: Array<{ from: string; to: string }> = [];
        for (const o of old) {
          const revision = o.revision + 1;
          const number = `${String(o.certificate_number).replace(/-R\d+$/, '')}-R${revision}`;
          const [next] = await trx('certificates')
            .insert({
              purchase_id: purchaseId,
              purchase_item_id: o.purchase_item_id,
              covered_unit_id: o.covered_unit_id,
              product_line_id: o.product_line_id,
              certificate_holder_id: o.certificate_holder_id,
              certificate_number: number,
              issue_date: trx.raw("(now() at time zone 'utc')::date"),
              revision,
            })
            .returning('id');
          await trx('certificates').where({ id: o.id }).update({ superseded_by_id: next.id });
          pairs.push({ from: o.certificate_number, to: number });
        }
        return pairs;
      });
    },

    /** Voids the current certificates issued to holder `holderId` (it was removed) at `at`. Returns the numbers voided by this call. */
    async voidForHolder(holderId: number, at: Date): Promise<string[]> {
      const rows = await db('certificates')
        .where({ certificate_holder_id: holderId })
        .whereNull('voided_at')
        .whereNull('superseded_at')
        .update({ voided_at: at })
        .returning('certificate_number');
      return rows.map((r: { certificate_number: string }) => r.certificate_number);
    },

    ...createCertificateArchivesRepository(db),
    ...createCertificateLookups(db),

    /**
     * A buyer's erasure on purchases `purchaseIds`, in `trx`: the named insured printed on their
     * certificates replaced by `placeholder` (issued PDFs are kept as they are). Answers the names
     * replaced (certificate id → name).
     */
    eraseNamedInsured(trx: Knex.Transaction, purchaseIds: number[], placeholder: string): Promise<Record<string, string>> {
      return redactJsonString(trx, { table: 'certificates', column: 'printed', key: 'named_insured_name' }, purchaseIds, placeholder);
    },
  };
}

/**
 * Whether `certificates` (the purchase's, superseded versions ignored) and its current zips
 * `archives` are complete: every current certificate stored, and, for the certificates in force,
 * a zip of each product line holding all of that line's and a payment zip holding all of them
 * (a zip recorded without its certificate ids is taken as current). Certificates voided after a
 * zip was built stay in it; that does not make it stale.
 */
export function isCompleteSet(certificates: readonly StoredCertificate[], archives: readonly ArchiveRow[]): boolean {
  const current = certificates.filter((c) => c.supersededAt === null);
  if (current.some((c) => c.storageKey === null)) return false;
  const inForce = current.filter((c) => c.voidedAt === null);
  if (inForce.length === 0) return true;
  const holds = (a: ArchiveRow | undefined, certs: readonly StoredCertificate[]) =>
    a !== undefined && (a.certificateIds === null || certs.every((c) => a.certificateIds!.includes(c.certificateId)));
  if (
    !holds(
      archives.find((a) => a.kind === 'payment'),
      inForce,
    )
  )
    return false;
  const lines = new Set(inForce.map((c) => c.productLineId));
  return [...lines].every((line) =>
    holds(
      archives.find((a) => a.kind === 'product' && a.productLineId === line),
      inForce.filter((c) => c.productLineId === line),
    ),
  );
}

export type CertificatesRepository = ReturnType<typeof createCertificatesRepository>;
