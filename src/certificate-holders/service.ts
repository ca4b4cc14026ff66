/**
 * Certificate holders of a purchase (policy lifecycle II): list, add, remove.
 *
 * Reads go to the repositories; changes go through the purchase's policy workflow
 * (src/purchases/workflow-client.ts), one change of a purchase at a time with its cancellations:
 * adding answers the holder at once and its certificates (one per covered unit still active) are
 * issued after the answer; removing voids its certificates. A request's Idempotency-Key names it
 * to the workflow too, so a retry after a late answer adds the holder once.
 *
 * Errors (AppError): NOT_FOUND (another account's, mode's or teammate's purchase, or no such
 * holder, or one already removed); PURCHASE_NOT_CHANGEABLE (409: not paid, or refunded in full);
 * NO_ACTIVE_COVERED_UNITS (409: every unit ended or was cancelled); ENDORSEMENT_NOT_ALLOWED (409: an
 * endorsement mark a product of the purchase does not allow); LAST_CERTIFICATE_HOLDER (409);
 * CONNECTION_ERROR (503) when the workflow does not answer in time.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { AccountView } from '../api-keys/service';
import { AppError, notFound } from '../shared/errors';
import type { CertificatesRepository, StoredCertificate } from '../certificates/repository';
import type { PurchaseRecord } from '../purchases/purchase-record';
import type { SaleRepository } from '../purchases/sale-repository';
import type { PurchaseWorkflows } from '../purchases/workflow-client';
import { changeRefusal } from '../purchases/rules';
import { ownedPurchase } from '../purchases/service';
import type { CertificateHolderRecord, CertificateHoldersRepository } from './repository';
import type { CertificateHolder, CreateCertificateHolderRequest } from './schemas';

export function toCertificateHolder(h: CertificateHolderRecord, certificates: StoredCertificate[]): CertificateHolder {
  return {
    object: 'certificate_holder',
    id: h.id,
    purchase_id: h.purchaseId,
    source: h.source,
    purchase_item_id: h.purchaseItemId,
    name: h.name,
    address: { ...h.address },
    email: h.email,
    additional_insured: h.additionalInsured,
    waiver_of_subrogation: h.waiverOfSubrogation,
    description_of_operations: h.descriptionOfOperations,
    notify_on_cancellation: h.notifyOnCancellation,
    status: h.removedAt ? 'removed' : 'active',
    certificates: certificates
      .filter((c) => c.certificateHolderId === h.id)
      .map((c) => ({
        certificate_number: c.certificateNumber,
        covered_unit_id: c.coveredUnitId,
        revision: c.revision,
        status: c.voidedAt ? 'voided' : c.storageKey ? 'issued' : 'issuing',
      })),
    created_at: h.createdAt.toISOString(),
    removed_at: h.removedAt?.toISOString() ?? null,
  };
}

export function createCertificateHolderService(deps: {
  sales: Pick<SaleRepository, 'findInScope'>;
  holders: CertificateHoldersRepository;
  certificates: Pick<CertificatesRepository, 'listForPurchase'>;
  workflows: Pick<PurchaseWorkflows, 'addCertificateHolder' | 'removeCertificateHolder'>;
}) {
  const owned = (principal: AccountView, id: number) => ownedPurchase(deps.sales, principal, id);
  /** Refuses a purchase not in force; one whose certificates are being issued is accepted (its policy workflow waits for them). */
  function changeable(p: PurchaseRecord): void {
    const refusal = changeRefusal(p, 'certificate_holders');
    if (refusal?.reason === 'not_in_force') throw new AppError(refusal.code, refusal.message);
  }
  async function view(purchaseId: number, holderId: number): Promise<CertificateHolder> {
    const [h, certificates] = await Promise.all([deps.holders.find(purchaseId, holderId), deps.certificates.listForPurchase(purchaseId)]);
    if (!h) throw notFound('certificate holder', holderId);
    return toCertificateHolder(h, certificates);
  }

  return {
    /** Refuses (404 NOT_FOUND) a purchase outside the key's scope: routes check it before the body, so another account's id reads 404 whatever is sent. */
    async assertOwned(principal: AccountView, purchaseId: number): Promise<void> {
      await owned(principal, purchaseId);
    },

    /** The purchase's holders (removed ones too, `status: removed`), in the order they were added. */
    async list(principal: AccountView, purchaseId: number): Promise<CertificateHolder[]> {
      await owned(principal, purchaseId);
      const [holders, certificates] = await Promise.all([
        deps.holders.list(purchaseId, { includeRemoved: true }),
        deps.certificates.listForPurchase(purchaseId),
      ]);
      return holders.map((h) => toCertificateHolder(h, certificates));
    },

    /**
     * Adds a holder; answers it with its certificates `issuing`. `idempotencyKey` (the request's
     * Idempotency-Key header) makes a retry add it once, even after a late answer.
     */
    async add(
      principal: AccountView,
      purchaseId: number,
      body: CreateCertificateHolderRequest,
      idempotencyKey?: string,
    ): Promise<CertificateHolder> {
      const p = await owned(principal, purchaseId);
      changeable(p);
      const requestKey = idempotencyKey
        ? createHash('sha256').update(`${principal.rootAccountId}|${principal.mode}|${idempotencyKey}`).digest('hex')
        : randomUUID();
      const change = await deps.workflows.addCertificateHolder(p, requestKey, {
        name: body.name,
        address: body.address,
        email: body.email ?? null,
        additionalInsured: body.additional_insured,
        waiverOfSubrogation: body.waiver_of_subrogation,
        descriptionOfOperations: body.description_of_operations ?? null,
        notifyOnCancellation: body.notify_on_cancellation,
      });
      return view(purchaseId, change.holderId);
    },

    /** Removes a holder and voids its certificates; answers it, `removed`. */
    async remove(principal: AccountView, purchaseId: number, holderId: number): Promise<CertificateHolder> {
      const p = await owned(principal, purchaseId);
      const h = await deps.holders.find(purchaseId, holderId);
      if (!h || h.removedAt) throw notFound('certificate holder', holderId);
      changeable(p);
      await deps.workflows.removeCertificateHolder(p, holderId);
      return view(purchaseId, holderId);
    },
  };
}

export type CertificateHolderService = ReturnType<typeof createCertificateHolderService>;
