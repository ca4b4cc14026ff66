/**
 * The page pool's health and page counts (src/pdf/browser-pool.ts) over a fake puppeteer (no
 * Chromium: test/integration/pdf-renderer.test.ts renders for real), and `watchBrowserPool`
 * reading them into the worker's registry at each scrape.
 */
import { EventEmitter } from 'node:events';
import { createBrowserPool, launchAheadOf } from '../../src/pdf/browser-pool';
import { createWorkerMetrics, watchBrowserPool } from '../../src/metrics/registry';
import { eventually } from '../../scripts/harness/api';

/** A deferred: a promise and the function that settles it. */
function later<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A browser that is connected until `close()` or `crash()`. */
class FakeBrowser extends EventEmitter {
  connected = true;
  /** Each page's `pdf()` waits for the test when set. */
  pdfGate: Promise<void> | undefined;
  process() {
    return null;
  }
  newPage() {
    const gate = () => this.pdfGate ?? Promise.resolve();
    return Promise.resolve({
      setJavaScriptEnabled: () => Promise.resolve(),
      setRequestInterception: () => Promise.resolve(),
      on: () => undefined,
      goto: () => Promise.resolve(),
      setContent: () => Promise.resolve(),
      pdf: async () => {
        await gate();
        return new Uint8Array([37, 80, 68, 70]);
      },
      close: () => Promise.resolve(),
    });
  }
  /** As puppeteer's: the disconnect is reported later, once the browser has gone. */
  async close() {
    await new Promise((r) => setImmediate(r));
    this.crash();
  }
  /** Chromium went away: puppeteer marks the browser disconnected and says so. */
  crash() {
    if (!this.connected) return;
    this.connected = false;
    this.emit('disconnected');
  }
}

const launched: FakeBrowser[] = [];
let launchGate: Promise<void> | undefined;
/** The profile directories of launches that failed, and every directory the pool has removed (once removed). */
const failedProfiles: string[] = [];
const removedPaths = new Set<string>();

jest.mock('puppeteer-core', () => ({
  __esModule: true,
  default: {
    launch: async (options: { userDataDir: string }) => {
      try {
        await launchGate;
      } catch (err) {
        failedProfiles.push(options.userDataDir);
        throw err;
      }
      const browser = new FakeBrowser();
      launched.push(browser);
      return browser;
    },
  },
}));

// The real `rm`, noting each path once it is removed: a failed launch removes its profile last,
// so the pool is done with that launch once its profile is noted here.
jest.mock('node:fs/promises', () => {
  const actual = jest.requireActual<typeof import('node:fs/promises')>('node:fs/promises');
  return {
    ...actual,
    rm: (target: string, options?: Parameters<typeof actual.rm>[1]) => actual.rm(target, options).finally(() => removedPaths.add(target)),
  };
});

/** Polls `check` (every 100 ms, at most 2 s): the pool's work that the test waits for is all in-process. */
const until = (check: () => boolean) => eventually(async () => check(), 2_000);

const options = { executablePath: '/nonexistent/chromium', pageCount: 2, rendersPerBrowser: 100, renderTimeoutMs: 5_000 };
const render = (pool: ReturnType<typeof createBrowserPool>) => pool.render('<p>x</p>', { format: 'A4' });

beforeEach(() => {
  launched.length = 0;
  launchGate = undefined;
  failedProfiles.length = 0;
});

describe('page pool', () => {
  test('when no render has run yet, then the pool is healthy with no browser and no pages', async () => {
    const pool = createBrowserPool(options);
    expect(pool.healthy()).toBe(true);
    expect(pool.launches).toBe(0);
    expect(pool.pages).toEqual({ idle: 0, busy: 0 });
    await pool.close();
  });

  test('when renders run, then their pages count as busy, and as idle once done', async () => {
    const pool = createBrowserPool(options);
    await render(pool);
    const pdfGate = later();
    launched[0]!.pdfGate = pdfGate.promise;
    const two = [render(pool), render(pool)];
    await until(() => pool.pages.busy === 2);
    expect(pool.pages).toEqual({ idle: 0, busy: 2 });
    pdfGate.resolve();
    await Promise.all(two);
    expect(pool.pages).toEqual({ idle: 2, busy: 0 });
    expect(pool.launches).toBe(1);
    expect(pool.healthy()).toBe(true);
    await pool.close();
    expect(pool.pages).toEqual({ idle: 0, busy: 0 });
  });

  test('when the browser crashes, then the pool is unhealthy with no pages until the next render relaunches it', async () => {
    const pool = createBrowserPool(options);
    await render(pool);
    launched[0]!.crash();
    expect(pool.healthy()).toBe(false);
    expect(pool.pages).toEqual({ idle: 0, busy: 0 });
    await render(pool);
    expect(pool.launches).toBe(2);
    expect(pool.healthy()).toBe(true);
    expect(pool.pages).toEqual({ idle: 1, busy: 0 });
    await pool.close();
  });

  test('when a browser is recycled after its renders, then the pool stays healthy while the next one launches', async () => {
    const pool = createBrowserPool({ ...options, rendersPerBrowser: 1 });
    await render(pool);
    const launch = later();
    launchGate = launch.promise;
    const second = render(pool);
    await until(() => !launched[0]!.connected); // its close is reported later, as puppeteer's
    expect(launched[0]!.connected).toBe(false); // retired and closed on purpose
    expect(pool.healthy()).toBe(true);
    launch.resolve();
    await second;
    expect(pool.launches).toBe(2);
    expect(pool.healthy()).toBe(true);
    await pool.close();
  });

  test('when a browser has a tenth of its renders left, then its replacement is launched ahead and the switch waits for no launch', async () => {
    const pool = createBrowserPool({ ...options, pageCount: 1, rendersPerBrowser: 20 });
    for (let i = 0; i < 17; i++) await render(pool);
    expect(pool.launches).toBe(1);
    await render(pool); // the 18th: two left on the first browser
    await until(() => pool.launches === 2);
    expect(pool.launches).toBe(2);
    expect(launched[1]!.connected).toBe(true);
    // From here no launch could finish: the renders below must not need one.
    launchGate = new Promise(() => undefined);
    await render(pool);
    await render(pool); // the first browser's last render
    expect(pool.launches).toBe(2);
    await render(pool); // on the browser launched ahead
    await until(() => !launched[0]!.connected); // its close is reported later, as puppeteer's
    expect(launched[0]!.connected).toBe(false); // retired and closed once its renders were spent
    expect(launched[1]!.connected).toBe(true);
    expect(pool.launches).toBe(2);
    expect(pool.healthy()).toBe(true);
    expect(pool.pages).toEqual({ idle: 1, busy: 0 });
    await pool.close();
    expect(launched[1]!.connected).toBe(false);
  });

  test('when a launch ahead fails, then the render that needs the browser launches it', async () => {
    const pool = createBrowserPool({ ...options, pageCount: 1, rendersPerBrowser: 10 });
    for (let i = 0; i < 8; i++) await render(pool);
    launchGate = Promise.reject(new Error('chromium would not start'));
    launchGate.catch(() => undefined);
    await render(pool); // the 9th: the launch ahead starts and fails
    // The pool is done with the failed launch once it has removed that launch's profile.
    await until(() => failedProfiles.length === 1 && removedPaths.has(failedProfiles[0]!));
    expect(pool.launches).toBe(1);
    launchGate = undefined;
    await render(pool); // the 10th, the last on the first browser (it tries the launch ahead again)
    await render(pool);
    expect(pool.launches).toBe(2);
    await until(() => !launched[0]!.connected); // the retired browser's close is reported later, as puppeteer's
    expect(launched[0]!.connected).toBe(false);
    expect(pool.healthy()).toBe(true);
    await pool.close();
  });

  test('when a browser serves fewer than 10 renders, then nothing is launched ahead', () => {
    expect([1, 9, 10, 19, 500].map(launchAheadOf)).toEqual([0, 0, 1, 1, 50]);
  });

  test('when the pool is closed, then it is unhealthy', async () => {
    const pool = createBrowserPool(options);
    await render(pool);
    await pool.close();
    expect(pool.healthy()).toBe(false);
    expect(launched[0]!.connected).toBe(false);
  });
});

describe('watchBrowserPool', () => {
  test('when scraped, then launches are a counter equal to the pool’s and pages a gauge by state', async () => {
    const pool = { launches: 0, pages: { idle: 0, busy: 0 } };
    const metrics = createWorkerMetrics();
    watchBrowserPool(metrics, pool);
    const read = async () => {
      const json = await metrics.registry.getMetricsAsJSON();
      const launches = json.find((m) => m.name === 'pdf_browser_launches_total')!;
      const pages = json.find((m) => m.name === 'pdf_page_pool_pages')!;
      return {
        type: String(launches.type),
        launches: launches.values[0]?.value ?? 0,
        pages: Object.fromEntries(pages.values.map((v) => [v.labels.state, v.value])),
      };
    };

    expect(await read()).toEqual({ type: 'counter', launches: 0, pages: { idle: 0, busy: 0 } });
    Object.assign(pool, { launches: 1, pages: { idle: 1, busy: 2 } });
    expect(await read()).toEqual({ type: 'counter', launches: 1, pages: { idle: 1, busy: 2 } });
    Object.assign(pool, { launches: 3, pages: { idle: 3, busy: 0 } });
    expect(await read()).toEqual({ type: 'counter', launches: 3, pages: { idle: 3, busy: 0 } });
    expect(await read()).toMatchObject({ launches: 3 });
    expect(await metrics.registry.metrics()).toContain('# TYPE pdf_browser_launches_total counter\npdf_browser_launches_total 3');
  });
});
