/**
 * The fault stack's SMTP server (smtp-server, in the suite's process): accepts every message and
 * keeps only a count. Every issued purchase emails its buyer, so the stack's worker needs a mail
 * server that answers; the suites measure outages of the processor, storage, PostgreSQL and the
 * workers, not of mail, and a load of purchases must not leave email retries behind it.
 */
import { SMTPServer } from 'smtp-server';

export interface MailSink {
  /** Messages accepted so far. */
  readonly delivered: number;
  close(): Promise<void>;
}

/** Listens on `host:port` until `close()`. @throws {Error} when the port cannot be listened on. */
export async function startMailSink({ host, port }: { host: string; port: number }): Promise<MailSink> {
  let delivered = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    size: 50 * 1024 * 1024,
    onData(stream, _session, callback) {
      stream.on('data', () => {});
      stream.on('error', callback);
      stream.on('end', () => {
        delivered++;
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, host, () => {
      server.server.removeListener('error', reject);
      resolve();
    });
  });
  return {
    get delivered() {
      return delivered;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
