/**
 * The stored-documents sweep (issue 52, item 2): every current certificate PDF and zip of a
 * purchase (`certificates` and `certificate_archives` rows not superseded, with an object) is read
 * back from object storage, streamed through SHA-256, and compared with the size and sha256
 * recorded when it was stored. GCS keeps md5/crc32c of an object, not its SHA-256, and the
 * `sha256` metadata is written by us beside the bytes, so only hashing the bytes proves them.
 *
 * Repair goes through the certificates domain's own issuance, the path `npm run ops -- reissue`
 * takes (the purchase's policy workflow starts `certificates-<id>`), never a second renderer:
 * - a damaged object (size or digest differ) is first moved aside to `quarantine/<key>.<digest>`
 *   (`ObjectStore.moveAside`), so its key is free and the bad bytes stay for inspection;
 * - then issuance runs again for its purchase: its verification finds the object missing, resets
 *   the record through the certificates repository, and the next round renders the certificate
 *   from its recorded facts under the same key, number and revision (or rebuilds the zip), and the
 *   record takes the new object's size and sha256;
 * - the sweep waits for that run and checks the repaired objects again: `repaired` only when the
 *   new object matches its (new) record.
 *
 * Why the record takes the new digest rather than the new object matching the old one (kept here:
 * docs/decisions.md is at its 600-line limit): a certificate printed again is the same document
 * (same number, revision, facts and printed values) but not the same bytes, since Chromium subsets
 * fonts per print and the PDF embeds them; demanding the old sha256 would make every repair fail.
 * The old digest stays in the finding (`sha256`) and the damaged bytes under `quarantine/`.
 *
 * A purchase issuance refuses (refunded, cancelled, unpaid) is `not_repaired` with the reason, as
 * is one whose repair run fails or leaves an object that still does not match.
 *
 * Pages: `sweepPage` checks up to `pageSize` certificates and `pageSize` zips after a cursor (ids
 * ascending), repairs what it found, and returns the next cursor (null at the end); `sweepAll`
 * runs the pages one after another and sums them. Reads here are read-only queries; every write to
 * `certificates` and `certificate_archives` is the certificates repository's, inside issuance.
 */
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import type { Client } from '@temporalio/client';
import type { ObjectStore } from '../storage/object-store';
import { createSweepRepository, type RecordedDocument } from './sweep-repository';
import { createPurchaseOperations } from '../purchases/operations';
import { createSaleRepository } from '../purchases/sale-repository';
import { createLedgerRepository } from '../purchases/ledger-repository';
import type { PurchaseWorkflows } from '../purchases/workflow-client';

export type { RecordedDocument } from './sweep-repository';

/** A document whose object did not match its record, and what the sweep did about it. */
export interface SweepFinding extends RecordedDocument {
  /** `missing`: no object under the key; `damaged`: its size or SHA-256 differ from the record. */
  problem: 'missing' | 'damaged';
  /** What was stored, for a damaged one (null when missing). */
  found: { size_bytes: number; sha256: string } | null;
  /** Where the damaged bytes were moved (null when missing). */
  quarantine_key: string | null;
  outcome: 'repaired' | 'not_repaired';
  /** Why it was not repaired (null when repaired). */
  reason: string | null;
  /** The object and record after the repair (same key; null when not repaired). */
  repaired: { storage_key: string; size_bytes: number; sha256: string } | null;
}

/** Where the next page starts: the last certificate and zip ids checked. */
export interface SweepCursor {
  afterCertificateId: number;
  afterArchiveId: number;
}

/** What a page (or the whole sweep) checked, found and repaired. */
export interface SweepReport {
  checked: { certificates: number; archives: number };
  found: number;
  repaired: number;
  not_repaired: number;
  findings: SweepFinding[];
}

/** A page's report with the cursor of the next one (null: the last page). */
export interface SweepPage extends SweepReport {
  next: SweepCursor | null;
}

export interface SweepOptions {
  /** Only this root account's purchases (the agency's). */
  rootAccountId?: number;
  /** Certificates and zips each read per page (default 200). */
  pageSize?: number;
}

export interface DocumentSweepDeps {
  db: Db | Knex.Transaction;
  store: Pick<ObjectStore, 'stat' | 'openRead' | 'moveAside'>;
  /**
   * Runs the purchase's certificate issuance again (`createPurchaseOperations(...).reissue`: throws
   * `OperationRefused` when the purchase's state does not allow it) and returns its run's id.
   */
  reissue(purchaseId: number): Promise<{ workflowId: string; action: 'started' | 'running' }>;
  /** Waits until the run `workflowId` has closed; throws when it failed. */
  waitForRun(workflowId: string): Promise<void>;
  /** Called as work goes on (an activity heartbeats with it). */
  progress?: (done: number) => void;
}

export const FIRST_PAGE: SweepCursor = { afterCertificateId: 0, afterArchiveId: 0 };

/** Objects hashed at once. */
const CONCURRENCY = 4;

/** SHA-256 (hex) and size of the object at `key`, streamed; null when it does not exist. */
export async function hashStored(
  store: Pick<ObjectStore, 'stat' | 'openRead'>,
  key: string,
): Promise<{ size_bytes: number; sha256: string } | null> {
  if ((await store.stat(key)) === null) return null;
  const hash = createHash('sha256');
  let size = 0;
  try {
    await pipeline(
      store.openRead(key),
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          hash.update(chunk);
          size += chunk.length;
          cb();
        },
      }),
    );
  } catch (err) {
    if ((err as { code?: unknown }).code === 404) return null; // deleted between the two requests
    throw err;
  }
  return { size_bytes: size, sha256: hash.digest('hex') };
}

export function createDocumentSweep(deps: DocumentSweepDeps) {
  const { store } = deps;
  const records = createSweepRepository(deps.db);

  /** Compares each document's object with its record; returns the ones that differ. */
  async function check(docs: RecordedDocument[]): Promise<Array<{ doc: RecordedDocument; found: SweepFinding['found'] }>> {
    const bad: Array<{ doc: RecordedDocument; found: SweepFinding['found'] }> = [];
    const queue = [...docs];
    let done = 0;
    const worker = async () => {
      for (let doc = queue.shift(); doc !== undefined; doc = queue.shift()) {
        const found = await hashStored(store, doc.storage_key);
        if (!found || found.size_bytes !== doc.size_bytes || found.sha256 !== doc.sha256) bad.push({ doc, found });
        deps.progress?.(++done);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
    return bad.sort((a, b) => (a.doc.kind === b.doc.kind ? a.doc.id - b.doc.id : a.doc.kind === 'certificate' ? -1 : 1));
  }

  /** Moves damaged objects aside, runs issuance again per purchase, and checks the result. */
  async function repair(bad: Array<{ doc: RecordedDocument; found: SweepFinding['found'] }>): Promise<SweepFinding[]> {
    const byPurchase = new Map<number, typeof bad>();
    for (const b of bad) byPurchase.set(b.doc.purchase_id, [...(byPurchase.get(b.doc.purchase_id) ?? []), b]);
    const findings: SweepFinding[] = [];
    for (const [purchaseId, items] of byPurchase) {
      const quarantined = new Map<RecordedDocument, string>();
      let failure: string | null = null;
      try {
        for (const { doc, found } of items) {
          if (!found) continue;
          const to = `quarantine/${doc.storage_key}.${found.sha256.slice(0, 16)}`;
          if (await store.moveAside(doc.storage_key, to)) quarantined.set(doc, to);
        }
        const run = await deps.reissue(purchaseId);
        await deps.waitForRun(run.workflowId);
      } catch (err) {
        failure = err instanceof Error ? err.message : String(err);
      }
      for (const { doc, found } of items) {
        const base = {
          ...doc,
          problem: found ? ('damaged' as const) : ('missing' as const),
          found,
          quarantine_key: quarantined.get(doc) ?? null,
        };
        if (failure) {
          findings.push({ ...base, outcome: 'not_repaired', reason: failure, repaired: null });
          continue;
        }
        const record = await records.recordNow(doc);
        const stored = record ? await hashStored(store, record.storage_key) : null;
        const ok = record && stored && stored.sha256 === record.sha256 && stored.size_bytes === record.size_bytes;
        findings.push(
          ok
            ? { ...base, outcome: 'repaired', reason: null, repaired: record }
            : {
                ...base,
                outcome: 'not_repaired',
                reason: record
                  ? `after issuance ran again, ${record.storage_key} still does not match its record`
                  : 'after issuance ran again, no stored object is recorded for it',
                repaired: null,
              },
        );
      }
    }
    return findings;
  }

  function summarise(checked: SweepReport['checked'], findings: SweepFinding[]): SweepReport {
    const repaired = findings.filter((f) => f.outcome === 'repaired').length;
    return { checked, found: findings.length, repaired, not_repaired: findings.length - repaired, findings };
  }

  /** Checks and repairs one page after `cursor`; `next` is null after the last page. */
  async function sweepPage(cursor: SweepCursor, options: SweepOptions = {}): Promise<SweepPage> {
    const limit = options.pageSize ?? 200;
    const [certificates, archives] = await Promise.all([
      records.certificatesAfter(cursor.afterCertificateId, limit, options.rootAccountId),
      records.archivesAfter(cursor.afterArchiveId, limit, options.rootAccountId),
    ]);
    const findings = await repair(await check([...certificates, ...archives]));
    const more = certificates.length === limit || archives.length === limit;
    return {
      ...summarise({ certificates: certificates.length, archives: archives.length }, findings),
      next: more
        ? {
            afterCertificateId: certificates.at(-1)?.id ?? cursor.afterCertificateId,
            afterArchiveId: archives.at(-1)?.id ?? cursor.afterArchiveId,
          }
        : null,
    };
  }

  /** Every page in turn (see `sweepPage`), summed. */
  async function sweepAll(options: SweepOptions = {}): Promise<SweepReport> {
    let report = summarise({ certificates: 0, archives: 0 }, []);
    for (let cursor: SweepCursor | null = FIRST_PAGE; cursor;) {
      const page = await sweepPage(cursor, options);
      report = addReports(report, page);
      cursor = page.next;
    }
    return report;
  }

  return { sweepPage, sweepAll };
}

/** Adds page `b` to report `a` (the workflow sums its pages with it). */
export function addReports(a: SweepReport, b: SweepReport): SweepReport {
  return {
    checked: { certificates: a.checked.certificates + b.checked.certificates, archives: a.checked.archives + b.checked.archives },
    found: a.found + b.found,
    repaired: a.repaired + b.repaired,
    not_repaired: a.not_repaired + b.not_repaired,
    findings: [...a.findings, ...b.findings],
  };
}

export type DocumentSweep = ReturnType<typeof createDocumentSweep>;

/**
 * The sweep over the service's own clients: repairs go through `createPurchaseOperations(...).reissue`
 * (the operator's reissue: paid, not refunded or cancelled purchases only) and wait for the
 * `certificates-<id>` run it starts or finds running. Issuance found running inside the purchase's
 * own run is not waited for: those documents are reported not repaired, for the next sweep.
 */
export function createServiceDocumentSweep(deps: {
  db: Db;
  store: DocumentSweepDeps['store'];
  client: Client;
  workflows: Pick<PurchaseWorkflows, 'resumePurchase' | 'reissueCertificates' | 'retryFailedCancellations'>;
  progress?: (done: number) => void;
}): DocumentSweep {
  const operations = createPurchaseOperations({
    sales: createSaleRepository(deps.db),
    ledger: createLedgerRepository(deps.db),
    workflows: deps.workflows,
  });
  return createDocumentSweep({
    db: deps.db,
    store: deps.store,
    reissue: (purchaseId) => operations.reissue(purchaseId),
    async waitForRun(workflowId) {
      if (!workflowId.startsWith('certificates-'))
        throw new Error(`issuance is under way in ${workflowId}; the next sweep checks these documents again`);
      await deps.client.workflow.getHandle(workflowId).result();
    },
    ...(deps.progress ? { progress: deps.progress } : {}),
  });
}
