/**
 * Starts the real API (the same container and Koa app as `src/server.ts`) on port 0 against
 * the servers the global setup brought up. Overrides change config for one app only.
 * Log lines are captured so tests can read them back.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../src/config';
import { createContainer, type Container } from '../../src/container';
import { createApp } from '../../src/app';
import { createLogger } from '../../src/logger';

export interface TestApp {
  baseUrl: string;
  container: Container;
  /** Every JSON log line the app wrote, parsed. */
  logs: Record<string, unknown>[];
  /** The raw log text, to search for secrets. */
  rawLogs(): string;
  close(): Promise<void>;
}

export async function startTestApp(
  overrides: Partial<Record<keyof Config, string>> = {},
  customize?: (c: Container) => void,
): Promise<TestApp> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'info', PORT: '0', ...overrides });
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  const container = createContainer(config, createLogger(config, 'api-test', sink));
  customize?.(container);
  // PORT 0 (the default) picks a free port; a test that must know the URL in advance passes one.
  const server: Server = createApp(container).listen(config.PORT, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    container,
    get logs() {
      return chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    rawLogs: () => chunks.join(''),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await container.close();
    },
  };
}
