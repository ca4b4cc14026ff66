/**
 * Activities of the policy workflow for certificate holders (workflows/policy.ts), each run one at
 * a time with the purchase's other changes:
 *
 * - `addCertificateHolder` checks the purchase (in force, its certificates issued, a covered unit
 *   still active: not ended, not cancelled or scheduled to be), records the holder and plans one
 *   certificate per such unit for it; the workflow then issues them through the same rendering,
 *   storage and zip steps as issuance. While the purchase's first issuance is still running it
 *   answers `wait`. The same request key again answers the holder it added (a retried update).
 * - `removeCertificateHolder` marks a holder removed and voids its certificates; the last holder
 *   cannot be removed while a unit is active (a certificate must name someone).
 * - `certificateHolderIssued` publishes `certificate_holder.added` with the certificates issued.
 * - `queueHolderCancellationNotices` records, after a cancellation completed, a notice for each
 *   holder that asked to be told (`notify_on_cancellation`, with an email) and held a voided
 *   certificate; `sendHolderCancellationNotice` emails one (never twice: a sent notice is skipped
 *   and every attempt reuses one Message-ID); `markHolderCancellationNoticeFailed` records one whose
 *   attempts all failed.
 *
 * Refusals are non-retryable failures whose type is the API's error code: NOT_FOUND (no such
 * holder), PURCHASE_NOT_CHANGEABLE (not paid, refunded in full), NO_ACTIVE_COVERED_UNITS,
 * CERTIFICATE_HOLDER_ALREADY_REMOVED, LAST_CERTIFICATE_HOLDER, ENDORSEMENT_NOT_ALLOWED, PAYMENT_REQUIRED (a
 * holder asking for an endorsement its product prices: that goes through an endorsement quote),
 * HOLDER_ENDORSEMENT_PAID (removing a holder that paid for an endorsement on units not started).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from '../src/db/knex';
import type { EventEmitter } from '../src/events/emitter';
import type { PurchaseItemDetail } from '../src/purchases/purchase-record';
import { createAccountsRepository } from '../src/accounts/repository';
import { createSaleRepository } from '../src/purchases/sale-repository';
import { createLedgerRepository } from '../src/purchases/ledger-repository';
import { createCertificatesRepository } from '../src/certificates/repository';
import { createCertificateHoldersRepository, type NewCertificateHolder } from '../src/certificate-holders/repository';
import { policyClock } from '../src/purchases/cancellation-pricing';
import { cancellableUnits, changeRefusal, standingOf } from '../src/purchases/rules';
import { createProductsRepository } from '../src/products/repository';
import type { CertificateHolderChange } from '../workflows/contracts';
import type { Mailer } from '../src/mail/mailer';
import { verificationUrl } from '../src/certificates/certificate-data';
import { DateTime } from 'luxon';

export interface CertificateHolderActivityDeps {
  db: Db;
  events: Pick<EventEmitter, 'certificateHolderAdded' | 'certificateHolderRemoved'>;
  /** SMTP, for the cancellation notices holders asked for. */
  mailer: Mailer;
  /** Domain of the notices' fixed Message-IDs. */
  messageIdDomain: string;
  publicBaseUrl: string;
  now?: () => Date;
}

const refuse = (code: string, message: string): never => {
  throw ApplicationFailure.nonRetryable(message, code);
};

type HolderChange = CertificateHolderChange;

export function createCertificateHolderActivities(deps: CertificateHolderActivityDeps) {
  const sales = createSaleRepository(deps.db);
  const ledger = createLedgerRepository(deps.db);
  const certificates = createCertificatesRepository(deps.db);
  const holders = createCertificateHoldersRepository(deps.db);
  const accounts = createAccountsRepository(deps.db);
  const now = deps.now ?? (() => new Date());

  /** The purchase, refused unless it is in force; `wait` while its first issuance runs. */
  async function changeable(purchaseId: number) {
    const p = await sales.findById(purchaseId);
    if (!p) return refuse('NOT_FOUND', `purchase ${purchaseId} does not exist`);
    const refusal = changeRefusal(p, 'certificate_holders');
    if (refusal?.reason === 'not_in_force') refuse(refusal.code, refusal.message);
    return p;
  }

  /** Units still active at `at`: not ended, not taken by a cancellation (scheduled ones included). */
  async function activeUnitIds(purchaseId: number, at: Date): Promise<number[]> {
    return activeIn(await sales.itemDetails(purchaseId), at);
  }
  const activeIn = (items: PurchaseItemDetail[], at: Date): number[] =>
    items.flatMap((i) => i.units.filter((u) => u.cancellationId === null && u.endsAt.getTime() > at.getTime()).map((u) => u.id));

  return {
    /**
     * Adds holder `holder` to purchase `purchaseId` and plans its certificates (`requestKey`: the
     * API's id of this request, so a retried update adds it once). Answers `wait` while the
     * purchase's certificates are still being issued.
     */
    async addCertificateHolder(input: {
      purchaseId: number;
      requestKey: string;
      holder: NewCertificateHolder;
    }): Promise<{ kind: 'added'; change: HolderChange } | { kind: 'wait' }> {
      const p = await changeable(input.purchaseId);
      const earlier = (await holders.list(input.purchaseId, { includeRemoved: true })).find((h) => h.requestKey === input.requestKey);
      if (earlier)
        return { kind: 'added', change: { holderId: earlier.id, certificateNumbers: await plannedFor(input.purchaseId, earlier.id) } };
      if (changeRefusal(p, 'certificate_holders')?.reason === 'certificates_issuing') return { kind: 'wait' };
      const at = policyClock(p, now());
      if ((await activeUnitIds(input.purchaseId, at)).length === 0)
        refuse(
          'NO_ACTIVE_COVERED_UNITS',
          `Purchase ${input.purchaseId} has no covered unit still active (every one ended or was cancelled): a new holder would get no certificate`,
        );
      // The product says whether it allows each endorsement: every product of the purchase must (the holder holds all its items).
      if (input.holder.additionalInsured || input.holder.waiverOfSubrogation) {
        const productIds = [...new Set((await sales.itemDetails(input.purchaseId)).map((i) => i.productLineId))];
        const terms = await createProductsRepository(deps.db).endorsementTerms(productIds);
        for (const [productId, t] of terms) {
          if (input.holder.additionalInsured && !t.allowsAdditionalInsured)
            refuse('ENDORSEMENT_NOT_ALLOWED', `Product ${productId} does not allow naming a certificate holder additional insured`);
          if (input.holder.waiverOfSubrogation && !t.allowsWaiverOfSubrogation)
            refuse('ENDORSEMENT_NOT_ALLOWED', `Product ${productId} does not allow a waiver of subrogation`);
        }
        // A priced endorsement is collected before it takes effect: through an endorsement quote, not here.
        for (const [productId, t] of terms) {
          const priced = [
            ...(input.holder.additionalInsured && t.additionalInsuredPremiumMinor > 0
              ? [`additional insured (${t.additionalInsuredPremiumMinor} minor units per covered unit)`]
              : []),
            ...(input.holder.waiverOfSubrogation && t.waiverOfSubrogationPremiumMinor > 0
              ? [`a waiver of subrogation (${t.waiverOfSubrogationPremiumMinor} minor units per covered unit)`]
              : []),
          ];
          if (priced.length > 0)
            refuse(
              'PAYMENT_REQUIRED',
              `Product ${productId} charges a premium for ${priced.join(' and ')}: add the holder without it, then ask for an endorsement quote { type: "certificate_holder_endorsements" } and endorse it with a payment`,
            );
        }
      }
      // The holder and its certificates (planned, not stored yet) appear together: a reader never
      // sees the holder with a certificate set that lacks its certificates.
      const added = await deps.db.transaction(async (trx) => {
        const holder = await createCertificateHoldersRepository(trx).add(input.purchaseId, input.holder, input.requestKey, at);
        await createCertificatesRepository(trx).plan(input.purchaseId);
        return holder;
      });
      return { kind: 'added', change: { holderId: added.id, certificateNumbers: await plannedFor(input.purchaseId, added.id) } };
    },

    /** Publishes `certificate_holder.added` for holder `holderId` once its certificates are stored. */
    async certificateHolderIssued(input: { purchaseId: number; holderId: number }): Promise<void> {
      const holder = await holders.find(input.purchaseId, input.holderId);
      // A holder removed while its certificates were being issued was announced removed: no added after that.
      if (holder && holder.removedAt === null)
        await deps.events.certificateHolderAdded(holder, await plannedFor(input.purchaseId, holder.id));
    },

    /** Queues the cancellation notices of cancellation `cancellationId` (completed); answers the ids still to send. */
    async queueHolderCancellationNotices(input: { cancellationId: number }): Promise<number[]> {
      const c = await ledger.findCancellation(input.cancellationId);
      if (!c || c.status !== 'completed') return [];
      const voided = (await certificates.listForPurchase(c.purchaseId))
        .filter((x) => c.coveredUnitIds.includes(x.coveredUnitId) && x.voidedAt !== null)
        .map((x) => x.certificateNumber);
      return holders.queueCancellationNotices(c.purchaseId, c.id, voided);
    },

    /** Emails notice `noticeId` unless it was sent already. */
    async sendHolderCancellationNotice(input: { noticeId: number }): Promise<{ alreadySent: boolean }> {
      const n = await holders.notice(input.noticeId);
      if (!n) throw ApplicationFailure.nonRetryable(`notice ${input.noticeId} does not exist`, 'NoticeNotFound');
      if (n.status === 'sent') return { alreadySent: true };
      const c = (await ledger.findCancellation(n.cancellationId))!;
      const p = (await sales.findById(c.purchaseId))!;
      const agency = await accounts.findById(p.rootAccountId);
      const mine = (await certificates.listForPurchase(c.purchaseId)).filter(
        (x) => x.certificateHolderId === n.holder.id && c.coveredUnitIds.includes(x.coveredUnitId),
      );
      const lines = [
        `${agency?.name ?? 'Your insurance agency'} informs ${n.holder.name} that insurance coverage named on certificates issued to you was cancelled${p.mode === 'test' ? ' (TEST MODE: not real coverage)' : ''}.`,
        `Effective: ${effectiveLocal(c.effectiveAt, mine[0]?.timeZone)}`,
        '',
        'These certificates are void from then on:',
        ...mine.map(
          (x) =>
            `  ${x.certificateNumber} (${x.productName}, ${x.localLabel})  verify: ${verificationUrl(deps.publicBaseUrl, x.certificateNumber)}`,
        ),
        '',
        'Certificates of coverage that was not cancelled stay in force; each verification link says which.',
      ];
      await holders.countNoticeAttempt(n.id);
      const sent = await deps.mailer.send({
        to: n.recipient,
        subject: `Coverage cancelled: certificates issued to ${n.holder.name}`,
        text: lines.join('\n'),
        messageId: `<holder-notice-${n.id}@${deps.messageIdDomain}>`,
      });
      await holders.markNoticeSent(n.id, sent.messageId);
      return { alreadySent: false };
    },

    /** Records that every attempt to send notice `noticeId` failed. */
    async markHolderCancellationNoticeFailed(input: { noticeId: number; reason: string }): Promise<void> {
      await holders.markNoticeFailed(input.noticeId, input.reason);
    },

    /** Removes holder `holderId` of purchase `purchaseId` and voids its certificates; answers the numbers voided. */
    async removeCertificateHolder(input: { purchaseId: number; holderId: number }): Promise<HolderChange> {
      const p = await changeable(input.purchaseId);
      const holder = await holders.find(input.purchaseId, input.holderId);
      if (!holder) return refuse('NOT_FOUND', `purchase ${input.purchaseId} has no certificate holder ${input.holderId}`);
      const at = now();
      if (holder.removedAt === null) {
        const all = await holders.list(input.purchaseId);
        // The holders whose certificates cover the same items: the last of them cannot go while a unit is active.
        const others = all.filter(
          (h) =>
            h.id !== holder.id &&
            (h.purchaseItemId === null || holder.purchaseItemId === null || h.purchaseItemId === holder.purchaseItemId),
        );
        // A paid endorsement on units not started goes back through an endorsement (its refund), not with the holder.
        const clock = policyClock(p, at);
        const items = await sales.itemDetails(input.purchaseId);
        const notStarted = new Set(items.flatMap((i) => cancellableUnits(i.units, (u) => standingOf(u, clock)).map((u) => u.id)));
        const paid = (await ledger.endorsementCharges(input.purchaseId))
          .flatMap((c) => c.breakdown)
          .filter((b) => b.certificateHolderId === holder.id && notStarted.has(b.unitId))
          .reduce((n, b) => n + b.premiumMinor, 0);
        if (paid > 0)
          refuse(
            'HOLDER_ENDORSEMENT_PAID',
            `Certificate holder ${holder.id} paid ${paid} minor units for additional insured or a waiver of subrogation on covered units not started: remove them first with an endorsement { type: "certificate_holder_endorsements" } (the premium goes back), then remove the holder`,
          );
        if (others.length === 0 && activeIn(items, clock).length > 0) {
          refuse(
            'LAST_CERTIFICATE_HOLDER',
            `Certificate holder ${holder.id} is the purchase's last: add another holder before removing it, or cancel the purchase`,
          );
        }
      }
      const removed = holder.removedAt === null ? (await holders.markRemoved(holder.id, at))! : holder;
      await certificates.voidForHolder(holder.id, removed.removedAt!);
      // Every certificate of the holder is voided now (by this call, or by an earlier try of it).
      const voided = (await certificates.listForPurchase(input.purchaseId))
        .filter((c) => c.certificateHolderId === holder.id)
        .map((c) => c.certificateNumber);
      await deps.events.certificateHolderRemoved(removed, voided);
      return { holderId: holder.id, certificateNumbers: voided };
    },
  };

  /**
   * A cancellation's effective instant as a holder's notice prints it: the local date and time in
   * the covered unit's zone (`Saturday 14 March 2026, 00:00 (America/Chicago)`); UTC without a unit.
   */
  function effectiveLocal(at: Date, zone: string | undefined): string {
    const local = DateTime.fromJSDate(at, { zone: zone ?? 'utc' });
    return `${local.setLocale('en-GB').toFormat('cccc d LLLL yyyy, HH:mm')} (${zone ?? 'UTC'})`;
  }

  async function plannedFor(purchaseId: number, holderId: number): Promise<string[]> {
    return (await certificates.listForPurchase(purchaseId))
      .filter((c) => c.certificateHolderId === holderId)
      .map((c) => c.certificateNumber);
  }
}

export type CertificateHolderActivities = ReturnType<typeof createCertificateHolderActivities>;
