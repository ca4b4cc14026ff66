/**
 * Outgoing email over SMTP (nodemailer), configured by `SMTP_URL` (e.g.
 * `smtp://user:pass@relay:587`; STARTTLS is used when the server offers it) and `MAIL_FROM`.
 *
 * `createMailer(config)` returns `{ send, close }`. `send({ to, subject, text, html? })` resolves
 * with the relay's `messageId` once the relay accepted the message; any failure (unreachable
 * relay, refused recipient, timeout) throws AppError INTERNAL_ERROR (500, retry with backoff).
 * Bodies may carry payment links, so only the message id, the recipient count and SMTP error
 * codes are logged, never subjects or bodies. Timeouts are short (10 s connect/greeting, 20 s
 * socket) so an API request never waits minutes on a dead relay.
 */
import nodemailer from 'nodemailer';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { AppError } from '../shared/errors';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** Files to attach (bytes in memory). */
  attachments?: Array<{ filename: string; content: Buffer; contentType: string }>;
  /** A fixed `Message-ID` (`<id@domain>`), so a resend after a lost acknowledgement can be recognised as the same message. */
  messageId?: string;
}

export interface Mailer {
  /** Sends one message; resolves with the relay's message id. Throws AppError INTERNAL_ERROR. */
  send(message: MailMessage): Promise<{ messageId: string }>;
  close(): void;
}

export function createMailer(config: Pick<Config, 'SMTP_URL' | 'MAIL_FROM'>, log?: Logger): Mailer {
  const transport = nodemailer.createTransport({
    url: config.SMTP_URL,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  });
  return {
    async send(message) {
      try {
        const info = await transport.sendMail({ from: config.MAIL_FROM, ...message });
        log?.info({ messageId: info.messageId, recipients: info.accepted.length }, 'mail sent');
        return { messageId: info.messageId };
      } catch (err) {
        const e = err as { code?: string; command?: string; responseCode?: number };
        log?.warn({ smtpCode: e.code, smtpCommand: e.command, smtpResponseCode: e.responseCode }, 'mail not sent');
        throw new AppError('INTERNAL_ERROR', 'The email could not be sent; retry with backoff', { cause: err });
      }
    },
    close: () => transport.close(),
  };
}
