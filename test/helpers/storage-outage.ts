/**
 * A stack whose object storage can be taken away: the shared fake-gcs-server reached through a TCP
 * proxy the test takes down (`proxy.down()` resets every connection) and brings back (`proxy.up()`).
 */
import type { TestApp } from './app';
import { startAppAndWorker } from './stack';
import { startTcpProxy, type TcpProxy } from './tcp-proxy';
import type { TestWorker } from './worker';

export interface StorageOutageStack {
  readonly app: TestApp;
  readonly worker: TestWorker;
  /** Between the worker and storage. */
  readonly proxy: TcpProxy;
  /** Closes the API, stops the worker, then the proxy. */
  close(): Promise<void>;
}

/**
 * A worker that reaches storage (STORAGE_API_ENDPOINT, default 127.0.0.1:4443) only through a new
 * TCP proxy, and the API with config `env`, on a task queue of their own. The caller closes it.
 */
export async function startWithStorageProxy(env: Record<string, string>): Promise<StorageOutageStack> {
  const endpoint = new URL(process.env.STORAGE_API_ENDPOINT ?? 'http://127.0.0.1:4443');
  const proxy = await startTcpProxy({ host: endpoint.hostname, port: Number(endpoint.port) });
  const { app, worker, close } = await startAppAndWorker(env, { STORAGE_API_ENDPOINT: proxy.url });
  return {
    app,
    worker,
    proxy,
    async close() {
      await close();
      await proxy.close();
    },
  };
}

/**
 * Registers an afterAll that closes what the answer starts: a function that starts the stack
 * (startWithStorageProxy with API config `env`) when a test calls it, inside the test's own time.
 */
export function useStorageOutageStack(env: Record<string, string>): () => Promise<StorageOutageStack> {
  let stack: StorageOutageStack | undefined;
  afterAll(async () => {
    await stack?.close();
  });
  return async () => {
    stack = await startWithStorageProxy(env);
    return stack;
  };
}
