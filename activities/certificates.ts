/**
 * Activities of the certificate child workflow (issue 6; ARCHITECTURE §3 step 7): plan one
 * certificate per covered unit, render and store the PDFs, build the zips, verify that all of
 * it is in storage (the purchase activities then mark the purchase issued).
 *
 * Built by `createCertificateActivities({ db, store, printer, pagesPerPrint, publicBaseUrl })`
 * over injected clients (STYLE practice 2). Every step is safe to retry:
 * - numbers are planned once per covered unit (a retry reads the same rows);
 * - an object already in storage (an earlier attempt's) is kept and recorded, its reprint
 *   discarded, so a retry never makes a second, different object; one found lost from storage
 *   is rendered again under the same key and its row takes the new digest (a page printed with
 *   others can differ in bytes, never in content, from the same page printed alone: fonts are
 *   subset per print);
 * - zips are deterministic (fixed entry dates and order) and stored create-only; one already
 *   stored under its key is kept.
 * A template error fails without retry (it would fail the same way again); a render, storage
 * or database error is retried by the workflow's policy.
 * Long activities heartbeat, so a killed worker's work is picked up within the heartbeat timeout;
 * an attempt sends none in its first `HEARTBEAT_GRACE_MS` (./heartbeat.ts).
 */
import { Readable } from 'node:stream';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { attemptStarted, heartbeat, withHeartbeat } from './heartbeat';
import type { Db } from '../src/db/knex';
import { certificatePage } from '../src/pdf/certificate-template';
import { CertificateTemplateError } from '../src/pdf/certificate-format';
import type { CertificatePrinter } from '../src/pdf/certificate-printer';
import { ObjectConflictError, certificateKey, zipKeys, type ObjectStore } from '../src/storage/object-store';
import { PROOF_OF_COVERAGE_NAME, buildZipToStore, proofOfCoveragePng, type ZipEntry, type ZipExtra } from '../src/storage/zips';
import { createCertificatesRepository, printedValues, type IssuanceRow, type StoredCertificate } from '../src/certificates/repository';
import { createSaleRepository } from '../src/purchases/sale-repository';
import {
  certificateFacts,
  proofCode,
  toCertificateData,
  verificationUrl,
  type CertificateSignature,
} from '../src/certificates/certificate-data';
import { createSignatureRepository } from '../src/accounts/signature-repository';
import type { CertificateSigner } from '../src/certificates/signed-proof';

import type { WorkerMetrics } from '../src/metrics/registry';

export interface CertificateActivityDeps {
  db: Db;
  store: ObjectStore;
  /** The worker's certificate printer (Chromium prints shared by purchases of one account). */
  printer: CertificatePrinter;
  /** Most certificates one print job of an activity holds (config `PDF_PAGES_PER_PRINT`). */
  pagesPerPrint: number;
  publicBaseUrl: string;
  /**
   * Signs each certificate's facts into the proof its QR code and verification link carry (config
   * CERTIFICATE_SIGNING_KEYS; issue 50 item 3). Absent (benchmarks, unit tests): plain links.
   */
  certificateSigner?: Pick<CertificateSigner, 'sign'>;
  /** Counts PDFs rendered and times each issuing activity (optional in benchmarks and unit tests). */
  metrics?: Pick<WorkerMetrics, 'certificatesRendered' | 'renderDuration'>;
}

/** What `verifyCertificates` found; anything missing has been reset so the next round redoes it. */
export interface IssuanceCheck {
  complete: boolean;
  certificates: number;
  /** Covered units that have no current certificate yet. */
  unitsWithoutCertificate: number;
  missingCertificates: number;
  missingArchives: number;
}

/**
 * A zip already stored under its key is kept: the key names its certificates (a digest of their
 * numbers), and an earlier attempt's zip, stored before its database record was lost, may differ
 * in bytes from a rebuild (PDFs reprinted, a newer release encoding the QR image differently)
 * without differing in what it certifies. Failing there would leave the purchase without its zips.
 */
const ZIP_OPTIONS = { onExisting: 'keep' } as const;

/** Maps a failure that would repeat on retry to a non-retryable activity failure. */
function permanent(err: unknown): never {
  if (err instanceof CertificateTemplateError || err instanceof ObjectConflictError) {
    throw ApplicationFailure.nonRetryable(err.message, err.name);
  }
  throw err;
}

export function createCertificateActivities(deps: CertificateActivityDeps) {
  const { db, store, printer, publicBaseUrl } = deps;
  const repo = createCertificatesRepository(db);
  const sales = createSaleRepository(db);
  const signatures = createSignatureRepository(db);

  /** The account's representative with its image read from storage (once per issuing call, not per certificate), or null. */
  async function loadSignature(rootAccountId: number): Promise<CertificateSignature | null> {
    const s = await signatures.find(rootAccountId);
    if (!s) return null;
    const chunks: Buffer[] = [];
    for await (const chunk of store.openRead(s.storageKey)) chunks.push(chunk as Buffer);
    return {
      representativeName: s.representativeName,
      imageDataUrl: `data:${s.contentType};base64,${Buffer.concat(chunks).toString('base64')}`,
    };
  }

  /**
   * Renders and stores the given pending certificates (see `issueCertificates`). With `rendered`,
   * also keeps each PDF this call stored under its storage key, for zips built in the same
   * activity; with `created`, adds the key of every object this call created.
   */
  async function issue(
    input: { purchaseId: number; certificateIds: number[] },
    rendered?: Map<string, Buffer>,
    created?: Set<string>,
  ): Promise<{ rendered: number; alreadyStored: number }> {
    const ctx = Context.current();
    attemptStarted(ctx);
    const timer = deps.metrics?.renderDuration.startTimer();
    const rows = await repo.pendingForIssue(input.purchaseId, input.certificateIds);
    let renderedCount = 0;
    let alreadyStored = 0;
    const beat = () => heartbeat(ctx, { done: renderedCount + alreadyStored, of: rows.length });
    // A PDF already in storage (an earlier attempt stored it, then its database write was lost)
    // is kept and recorded as it is: the create-only upload is refused and the stored object's
    // size and digest are recorded, so a retry never makes a second, different object.
    const storePdf = async (row: IssuanceRow, bytes: Buffer, proof: string | undefined) => {
      const key = certificateKey(row.purchaseId, row.certificateNumber);
      const put = await store.putIfAbsent(key, bytes, { contentType: 'application/pdf', onExisting: 'keep' }).catch(permanent);
      await repo.markStored(row.certificateId, {
        storageKey: key,
        sizeBytes: put.size,
        sha256: put.sha256,
        printed: printedValues(row, proof),
      });
      if (put.created) {
        rendered?.set(key, bytes);
        created?.add(key);
        renderedCount++;
      } else {
        alreadyStored++;
      }
      beat();
    };
    // Pages are built here, so that a template error fails this purchase alone; the printer
    // prints them with other purchases' pages of the same account (a print costs far more than a
    // page) and splits the print into one PDF per certificate.
    // Each certificate's facts signed (deterministic: a retry signs the same token with the same key).
    const proofs = await Promise.all(rows.map((row) => deps.certificateSigner?.sign(certificateFacts(row))));
    const signature = rows.length > 0 ? await loadSignature(rows[0]!.rootAccountId) : null;
    const pages = await Promise.all(
      rows.map((row, i) => certificatePage(toCertificateData(row, publicBaseUrl, proofs[i], signature))),
    ).catch(permanent);
    const perPrint = deps.pagesPerPrint;
    const jobs: number[] = [];
    for (let i = 0; i < rows.length; i += perPrint) jobs.push(i);
    // Heartbeats go on while the jobs wait for a print (the printer may be busy with others').
    const printAndStore = async (from: number) => {
      const job = rows.slice(from, from + perPrint);
      const pdfs = await printer
        .print({
          account: job[0]!.rootAccountId,
          pages: pages.slice(from, from + perPrint),
          meta: job.map((row) => ({ title: `Certificate of Insurance ${row.certificateNumber}`, date: row.issueDate })),
        })
        .catch(permanent);
      await Promise.all(job.map((row, i) => storePdf(row, pdfs[i]!, proofs[from + i])));
    };
    await withHeartbeat(() => Promise.all(jobs.map(printAndStore)));
    timer?.();
    deps.metrics?.certificatesRendered.inc(renderedCount);
    return { rendered: renderedCount, alreadyStored };
  }

  /**
   * Builds and stores the zips that are not recorded yet (see `buildCertificateArchives`). A PDF
   * found in `inMemory` (by storage key) is zipped from there instead of being read back. With
   * `created`, adds the key of every zip this call created.
   */
  async function archive(
    purchaseId: number,
    inMemory?: ReadonlyMap<string, Buffer>,
    created?: Set<string>,
  ): Promise<{ built: number; existing: number }> {
    attemptStarted(Context.current());
    const current = await repo.listForPurchase(purchaseId);
    // Some not stored yet (planned after this round began: a holder added meanwhile): no zip now;
    // the verification that follows finds them missing and the next round issues them and zips all.
    if (current.length === 0 || current.some((c) => !c.storageKey)) return { built: 0, existing: 0 };
    // Zips hold the certificates in force: one voided (its unit cancelled, its holder removed) is
    // left out of a zip built after that (zips built before stay as they are).
    const certificates = current.filter((c) => c.voidedAt === null);
    if (certificates.length === 0) return { built: 0, existing: 0 };
    // With more than one holder, each holder's certificates go in a folder of their own.
    const byHolder = new Set(certificates.map((c) => c.certificateHolderId ?? 0)).size > 1;
    const holderFolder = (c: StoredCertificate) =>
      byHolder ? `${c.certificateHolderId === null ? 'no-holder' : `holder-${c.certificateHolderId}`}/` : '';
    const purchase = await sales.findById(purchaseId);
    const recorded = new Set((await repo.archives(purchaseId)).map((a) => a.storageKey));
    const entry = (name: string, key: string): ZipEntry => {
      const bytes = inMemory?.get(key);
      return bytes ? { name, open: () => Readable.from(bytes) } : { name, key };
    };

    const byProduct = new Map<number, StoredCertificate[]>();
    for (const c of certificates) byProduct.set(c.productLineId, [...(byProduct.get(c.productLineId) ?? []), c]);

    let built = 0;
    let existing = 0;
    const paymentEntries: ZipEntry[] = [];
    const paymentExtras: ZipExtra[] = [];
    await withHeartbeat(async () => {
      for (const [productLineId, certs] of byProduct) {
        const code = proofCode(certs.map((c) => c.certificateNumber));
        const png = await proofOfCoveragePng(verificationUrl(publicBaseUrl, code));
        const folder = `product-${productLineId}`;
        paymentExtras.push({ name: `${folder}/${PROOF_OF_COVERAGE_NAME}`, body: png });
        paymentEntries.push(...certs.map((c) => entry(`${folder}/${holderFolder(c)}${c.certificateNumber}.pdf`, c.storageKey!)));

        const key = zipKeys.product(purchaseId, productLineId, code);
        if (recorded.has(key)) {
          existing++;
          continue;
        }
        const entries = certs.map((c) => entry(`${holderFolder(c)}${c.certificateNumber}.pdf`, c.storageKey!));
        const put = await buildZipToStore(store, key, entries, [{ name: PROOF_OF_COVERAGE_NAME, body: png }], ZIP_OPTIONS).catch(permanent);
        if (put.created) created?.add(key);
        await repo.recordArchive(purchaseId, {
          kind: 'product',
          productLineId,
          proofCode: code,
          storageKey: key,
          sizeBytes: put.size,
          sha256: put.sha256,
          certificateIds: certs.map((c) => c.certificateId),
        });
        built++;
      }
      // Certificate numbers carry random tails: the digest keeps keys unique even if purchase ids are reused.
      const digest = proofCode(certificates.map((c) => c.certificateNumber)).slice('POC-'.length);
      const paymentKey = zipKeys.payment(purchaseId, purchase?.paymentIntentId ?? `purchase-${purchaseId}`, digest);
      if (recorded.has(paymentKey)) {
        existing++;
      } else {
        const put = await buildZipToStore(store, paymentKey, paymentEntries, paymentExtras, ZIP_OPTIONS).catch(permanent);
        if (put.created) created?.add(paymentKey);
        await repo.recordArchive(purchaseId, {
          kind: 'payment',
          productLineId: null,
          proofCode: null,
          storageKey: paymentKey,
          sizeBytes: put.size,
          sha256: put.sha256,
          certificateIds: certificates.map((c) => c.certificateId),
        });
        built++;
      }
    });
    return { built, existing };
  }

  /**
   * Checks and resets what is missing (see `verifyCertificates`). Keys in `createdNow` were
   * created by this same activity (their upload succeeded moments ago) and are not asked again.
   */
  async function verify(purchaseId: number, createdNow: ReadonlySet<string> = new Set()): Promise<IssuanceCheck> {
    attemptStarted(Context.current());
    const [unitsWithout, certificates, archives] = await Promise.all([
      repo.unitsWithoutCertificate(purchaseId),
      repo.listForPurchase(purchaseId),
      repo.archives(purchaseId),
    ]);
    const keys = [...certificates.flatMap((c) => (c.storageKey ? [c.storageKey] : [])), ...archives.map((a) => a.storageKey)];
    const present: Record<string, boolean> = { ...(await withHeartbeat(() => store.exists(keys.filter((k) => !createdNow.has(k))))) };
    for (const key of keys) if (createdNow.has(key)) present[key] = true;
    const lostCertificates = certificates.filter((c) => c.storageKey && !present[c.storageKey]);
    const lostArchives = archives.filter((a) => !present[a.storageKey]);
    await repo.clearStored(lostCertificates.map((c) => c.certificateId));
    await repo.clearArchives(
      purchaseId,
      lostArchives.map((a) => a.storageKey),
    );

    // A zip per product line with a certificate in force, and the payment's zip (none once all are voided).
    const inForce = certificates.filter((c) => c.voidedAt === null);
    const products = new Set(inForce.map((c) => c.productLineId)).size;
    const missingCertificates = unitsWithout + certificates.filter((c) => !c.storageKey).length + lostCertificates.length;
    const missingArchives = Math.max(0, products + (inForce.length > 0 ? 1 : 0) - (archives.length - lostArchives.length));
    return {
      complete: missingCertificates === 0 && missingArchives === 0,
      certificates: certificates.length,
      unitsWithoutCertificate: unitsWithout,
      missingCertificates,
      missingArchives,
    };
  }

  return {
    /**
     * Plans the purchase's certificates (one per covered unit, numbered once) and returns the
     * ids still to be stored, in unit order, with the total planned.
     */
    async planCertificates(input: { purchaseId: number }): Promise<{ total: number; pendingIds: number[] }> {
      const all = await repo.plan(input.purchaseId);
      return { total: all.length, pendingIds: all.filter((c) => !c.stored).map((c) => c.certificateId) };
    },

    /**
     * Renders and stores the given certificates of the purchase that are not stored yet, in
     * print jobs of up to `PDF_PAGES_PER_PRINT` certificates that the worker's printer may print
     * together with other purchases' of the same account (split into one PDF per certificate),
     * heartbeating the count done. Returns how many PDFs were rendered
     * now and how many were already in storage (a retry after a lost database write).
     */
    async issueCertificates(input: { purchaseId: number; certificateIds: number[] }): Promise<{ rendered: number; alreadyStored: number }> {
      return issue(input);
    },

    /**
     * A small purchase's whole issuance in one activity (the certificates workflow sends at most
     * `CERTIFICATE_BATCH_SIZE` pending certificates this way): renders and stores them as
     * `issueCertificates` does, builds the zips as `buildCertificateArchives` does but from the
     * PDFs it just rendered (no read back from storage), then verifies as `verifyCertificates`
     * does. One task round trip instead of three. Returns the verification with the render
     * counts; `complete` false sends the workflow into another round.
     */
    async issueCertificatesAndArchives(input: {
      purchaseId: number;
      certificateIds: number[];
    }): Promise<IssuanceCheck & { rendered: number; alreadyStored: number }> {
      const kept = new Map<string, Buffer>();
      const created = new Set<string>();
      const counts = await issue(input, kept, created);
      await archive(input.purchaseId, kept, created);
      return { ...(await verify(input.purchaseId, created)), ...counts };
    },

    /**
     * Builds and stores the per-product zips (`<number>.pdf` entries and `proof-of-coverage.png`
     * with the product's QR link) and the per-payment zip (`product-<id>/…` folders holding the
     * same), each once. Builds nothing while any certificate is not stored yet (verification then
     * reports them missing, and the next round issues them).
     */
    async buildCertificateArchives(input: { purchaseId: number }): Promise<{ built: number; existing: number }> {
      return archive(input.purchaseId);
    },

    /**
     * Checks that everything getCertificates will return exists: a stored certificate per covered
     * unit, the zips, and each of their objects in storage. Whatever is missing is reset (so the
     * next planning round issues it again) and reported; `complete` only when nothing is.
     */
    async verifyCertificates(input: { purchaseId: number }): Promise<IssuanceCheck> {
      return verify(input.purchaseId);
    },
  };
}

export type CertificateActivities = ReturnType<typeof createCertificateActivities>;
