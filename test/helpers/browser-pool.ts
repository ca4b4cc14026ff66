/**
 * The service's PDF renderer (src/pdf/browser-pool.ts) on the test environment's Chromium
 * (CHROMIUM_PATH) for the renderer and template suites: a pool shared by a describe block
 * (`useBrowserPool`), or one of a test's own with other settings (`withBrowserPool`).
 */
import { loadConfig } from '../../src/config';
import { createBrowserPool, type BrowserPool, type BrowserPoolOptions } from '../../src/pdf/browser-pool';

const config = loadConfig({ ...process.env });
/** The Chromium the worker renders with (CHROMIUM_PATH). */
export const CHROMIUM_PATH = config.CHROMIUM_PATH;
/** The page format the worker prints certificates on (PDF_PAGE_FORMAT). */
export const PDF_PAGE_FORMAT = config.PDF_PAGE_FORMAT;

/** A pool's settings but Chromium's path (pages, renders per browser, deadline in ms, fresh document). */
export type PoolSettings = Omit<BrowserPoolOptions, 'executablePath'>;

/**
 * Registers the beforeAll that creates a pool of `settings` on the test Chromium and the afterAll
 * that closes it; answers a getter of it (read `.pool` in hooks and tests).
 */
export function useBrowserPool(settings: PoolSettings): { readonly pool: BrowserPool } {
  let pool: BrowserPool | undefined;
  beforeAll(() => {
    pool = createBrowserPool({ executablePath: CHROMIUM_PATH, ...settings });
  });
  afterAll(async () => {
    await pool?.close();
  });
  return {
    get pool() {
      if (!pool) throw new Error('useBrowserPool: the pool is not created (read it in a hook or a test)');
      return pool;
    },
  };
}

/** Runs `fn` with a pool of its own (`settings`, on the test Chromium) and closes the pool afterwards, whatever `fn` did. */
export async function withBrowserPool<T>(settings: PoolSettings, fn: (pool: BrowserPool) => Promise<T>): Promise<T> {
  const pool = createBrowserPool({ executablePath: CHROMIUM_PATH, ...settings });
  try {
    return await fn(pool);
  } finally {
    await pool.close();
  }
}
