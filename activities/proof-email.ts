/**
 * Activities of the emailed proof of coverage (spec §4.5 teamEmailProofofCoverage; issue 7):
 * send one recorded email (`proof_of_coverage_emails` row) with the purchase's certificate
 * bundle, and record a final failure.
 *
 * Built by `createProofEmailActivities({ db, store, mailer, publicBaseUrl, attachmentMaxBytes,
 * messageIdDomain })`. The bundle: per product the proof-of-coverage link (QR page, never
 * expires) and each certificate's coverage window and verification link; the per-payment zip
 * as a signed link valid 7 days; and the PDFs attached when they total at most
 * `attachmentMaxBytes` bytes, else a signed 7-day download link per PDF. Sent to the purchase's
 * own buyer (the same address, case aside), it also carries the buyer's online withdrawal link
 * (src/withdrawals/) when the purchase offers one, and the link of the buyer's claim page
 * (src/claims/buyer-link.ts) while it is in force; never to anyone else (a venue or rental company
 * receiving the proof must not be able to withdraw the buyer's cover or claim on it).
 *
 * Never sent twice by a retry: a row already `sent` is not sent again, and every attempt of a
 * row carries the same `Message-ID` (`<proof-of-coverage-<id>@<domain>>`), so the one case SMTP
 * cannot rule out (the relay accepted, its answer was lost) reaches the recipient as a copy of
 * the same message, which mail clients collapse. SMTP failures throw (retried by the workflow).
 */
import { ApplicationFailure } from '@temporalio/activity';
import { DateTime } from 'luxon';
import type { Db } from '../src/db/knex';
import type { Mailer } from '../src/mail/mailer';
import { MAX_SIGNED_URL_SECONDS, type ObjectStore } from '../src/storage/object-store';
import { createProofOfCoverageEmailsRepository } from '../src/proof-of-coverage/repository';
import { createCertificatesRepository } from '../src/certificates/repository';
import { verificationUrl } from '../src/certificates/certificate-data';
import { createSaleRepository } from '../src/purchases/sale-repository';
import { createWithdrawalLinks } from '../src/withdrawals/links';
import { claimPageUrl } from '../src/claims/buyer-link';

export interface ProofEmailActivityDeps {
  db: Db;
  store: ObjectStore;
  mailer: Mailer;
  publicBaseUrl: string;
  /** Attach the PDFs when they total at most this many bytes (config PROOF_EMAIL_ATTACHMENT_MAX_BYTES). */
  attachmentMaxBytes: number;
  /** Domain of the fixed Message-IDs (the MAIL_FROM address's domain). */
  messageIdDomain: string;
  /** Key of the buyer's links, the withdrawal and the claim page's (WITHDRAWAL_LINK_KEY). */
  withdrawalLinkKey: string;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

export function createProofEmailActivities(deps: ProofEmailActivityDeps) {
  const { db, store } = deps;
  const certificates = createCertificatesRepository(db);
  const emails = createProofOfCoverageEmailsRepository(db);
  const withdrawalLinks = createWithdrawalLinks({
    sales: createSaleRepository(db),
    key: deps.withdrawalLinkKey,
    publicBaseUrl: deps.publicBaseUrl,
  });

  return {
    /** Sends the email of row `emailId` unless it is already sent; returns how it was delivered. */
    async sendProofOfCoverageEmail(input: {
      emailId: number;
    }): Promise<{ status: 'sent'; delivery: 'attachments' | 'links'; alreadySent: boolean }> {
      const row = await emails.toSend(input.emailId);
      if (!row) throw ApplicationFailure.nonRetryable(`proof-of-coverage email ${input.emailId} does not exist`, 'ProofEmailNotFound');
      if (row.status === 'sent') return { status: 'sent', delivery: row.delivery ?? 'attachments', alreadySent: true };

      // An email for one certificate holder carries that holder's certificates only.
      const all = (await certificates.listForPurchase(row.purchaseId)).filter(
        (c) => row.certificateHolderId === null || c.certificateHolderId === row.certificateHolderId,
      );
      const archives = await certificates.archives(row.purchaseId);
      if (all.length === 0 || all.some((c) => !c.storageKey)) {
        throw ApplicationFailure.retryable(`certificates of purchase ${row.purchaseId} are not all stored`, 'CertificatesNotStored');
      }
      // A certificate a cancellation voided is never sent; the zips, built at issuance, hold it, so they are left out then.
      const certs = all.filter((c) => c.voidedAt === null);
      const someVoided = certs.length < all.length;
      if (certs.length === 0)
        throw ApplicationFailure.nonRetryable(
          `every certificate of purchase ${row.purchaseId} was voided by a cancellation`,
          'CertificatesVoided',
        );
      const totalBytes = certs.reduce((n, c) => n + (c.sizeBytes ?? 0), 0);
      const delivery: 'attachments' | 'links' = totalBytes <= deps.attachmentMaxBytes ? 'attachments' : 'links';
      const linkUntil = new Date(Date.now() + MAX_SIGNED_URL_SECONDS * 1000);
      const sign = (key: string, downloadName: string) =>
        store.signedReadUrl(key, { expiresInSeconds: MAX_SIGNED_URL_SECONDS, downloadName });

      const lines: string[] = [];
      if (row.note) lines.push(row.note, '');
      lines.push(
        `${row.agencyName} sends you proof of insurance coverage${row.mode === 'test' ? ' (TEST MODE SPECIMEN: not real coverage)' : ''}.`,
        '',
      );
      const products = [...new Set(certs.map((c) => c.productLineId))];
      for (const productLineId of products) {
        const mine = certs.filter((c) => c.productLineId === productLineId);
        const proof = archives.find((a) => a.kind === 'product' && a.productLineId === productLineId);
        lines.push(
          `${mine[0]!.productName}: ${mine.length} certificate${mine.length === 1 ? '' : 's'}${mine[0]!.namedInsuredName ? `, named insured ${mine[0]!.namedInsuredName}` : ''}`,
        );
        if (proof?.proofCode) lines.push(`  Proof of coverage (always current): ${verificationUrl(deps.publicBaseUrl, proof.proofCode)}`);
        for (const c of mine) {
          const from = DateTime.fromJSDate(c.startsAt, { zone: c.timeZone }).toFormat('yyyy-MM-dd HH:mm');
          const to = DateTime.fromJSDate(c.endsAt, { zone: c.timeZone }).toFormat('yyyy-MM-dd HH:mm');
          lines.push(
            `  ${c.certificateNumber}: ${from} to ${to} (${c.timeZone})  verify: ${verificationUrl(deps.publicBaseUrl, c.certificateNumber)}`,
          );
          if (delivery === 'links') lines.push(`    download: ${await sign(c.storageKey!, `${c.certificateNumber}.pdf`)}`);
        }
        lines.push('');
      }
      const paymentZip = archives.find((a) => a.kind === 'payment');
      // The zip holds every holder's certificates: not for an email of one holder's.
      if (paymentZip && !someVoided && row.certificateHolderId === null)
        lines.push(
          `All certificates in one zip (link works until ${linkUntil.toISOString().slice(0, 10)}): ${await sign(paymentZip.storageKey, 'certificates.zip')}`,
        );
      lines.push(
        delivery === 'attachments'
          ? 'The certificates are attached as PDF files.'
          : 'The certificates are too large to attach; use the download links above.',
      );
      const toBuyer =
        typeof row.buyerEmail === 'string' && row.buyerEmail.trim().toLowerCase() === String(row.recipient).trim().toLowerCase();
      const withdrawal = toBuyer ? await withdrawalLinks.urlFor({ id: row.purchaseId, status: row.purchaseStatus }) : null;
      if (withdrawal) {
        lines.push(
          '',
          'Changed your mind? You can withdraw from this insurance online; the page shows what you would get back before you confirm anything.',
          `Withdraw from contract here: ${withdrawal}`,
        );
      }
      const claimLink = toBuyer
        ? claimPageUrl(deps.publicBaseUrl, deps.withdrawalLinkKey, { id: row.purchaseId, status: row.purchaseStatus })
        : null;
      if (claimLink) lines.push('', 'Something went wrong at your event? Tell the insurer online.', `Make a claim here: ${claimLink}`);

      const attachments =
        delivery === 'attachments'
          ? await Promise.all(
              certs.map(async (c) => ({
                filename: `${c.certificateNumber}.pdf`,
                content: await readAll(store.openRead(c.storageKey!)),
                contentType: 'application/pdf',
              })),
            )
          : undefined;

      await emails.countAttempt(row.id);
      const sent = await deps.mailer.send({
        to: row.recipient,
        subject: `Proof of coverage from ${row.agencyName}: ${[...new Set(certs.map((c) => c.productName))].join(', ')}`,
        text: lines.join('\n'),
        attachments,
        messageId: `<proof-of-coverage-${row.id}@${deps.messageIdDomain}>`,
      });
      await emails.markSent(row.id, { delivery, messageId: sent.messageId });
      return { status: 'sent', delivery, alreadySent: false };
    },

    /** Records that every attempt to send row `emailId` failed (a sent row stays sent). */
    async markProofOfCoverageEmailFailed(input: { emailId: number; reason: string }): Promise<void> {
      await emails.markFailed(input.emailId, input.reason);
    },
  };
}

export type ProofEmailActivities = ReturnType<typeof createProofEmailActivities>;
