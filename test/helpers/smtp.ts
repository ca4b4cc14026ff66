/**
 * An SMTP server in the test process (smtp-server; no TLS, no auth) that keeps every message it
 * accepts. `failNext(n)` answers the next `n` messages with a temporary failure (451) after
 * reading them, as a relay that is briefly unable to take mail would.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export interface TestSmtp {
  port: number;
  url: string;
  messages: ReceivedMail[];
  /** Messages refused by `failNext`. */
  readonly refused: number;
  failNext(n: number): void;
  close(): Promise<void>;
}

export async function startSmtp(): Promise<TestSmtp> {
  const messages: ReceivedMail[] = [];
  let failures = 0;
  let refused = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    size: 50 * 1024 * 1024,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (failures > 0) {
          failures--;
          refused++;
          const err = Object.assign(new Error('Temporary local problem, try again later'), { responseCode: 451 });
          return callback(err);
        }
        const from = session.envelope.mailFrom;
        messages.push({
          from: from ? from.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString(),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    get refused() {
      return refused;
    },
    failNext(n) {
      failures = n;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
