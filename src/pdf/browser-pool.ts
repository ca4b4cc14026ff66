/**
 * One headless Chromium per process, driven by puppeteer-core, with a bounded pool of pages
 * that turn HTML into PDF (issue 6, "Render with puppeteer-core…" and "The renderer is
 * hostile-input safe…"; ARCHITECTURE §1 for the Chromium flags).
 *
 * Safety: every page intercepts requests and lets through only `data:` and `about:blank`
 * URLs (everything else is aborted and counted), JavaScript is disabled, and each render has a
 * deadline. The browser talks to us over a pipe (no DevTools port) and runs from a fresh
 * temporary profile that is removed when that browser goes away.
 *
 * Lifecycle: the browser is launched lazily by the first render, replaced after
 * `rendersPerBrowser` renders (the old one closes once its in-flight renders finish) and
 * relaunched by the next render after a crash or disconnect. The replacement is launched ahead,
 * when a tenth of the old browser's renders is left (`launchAheadOf`), so renders never wait for
 * a launch at the switch: on a busy worker a launch took a second or more, and every render
 * queued behind it. `close()` closes everything and waits until the Chromium process has exited.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser, type HTTPRequest, type Page, type PaperFormat } from 'puppeteer-core';

/** Page sizes the service prints (config `PDF_PAGE_FORMAT`). */
export type PdfPageFormat = 'Letter' | 'A4';

/** The few logger methods the pool uses (pino's `Logger` fits). */
export interface PoolLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface BrowserPoolOptions {
  /** Path of the Chromium binary (config `CHROMIUM_PATH`, Debian: `/usr/bin/chromium`). */
  executablePath: string;
  /** Most renders running at once, i.e. open pages (≥ 1). */
  pageCount: number;
  /** Renders one browser serves before it is replaced by a fresh one (≥ 1). */
  rendersPerBrowser: number;
  /** Deadline of one render in ms: loading the HTML plus printing the PDF (≥ 1). */
  renderTimeoutMs: number;
  /**
   * Whether a reused page navigates to about:blank before each render (default true), so that
   * nothing of the previous document (e.g. the Content-Security-Policy of its `<meta>`) applies
   * to the next. That navigation costs about 0.04 CPU-s, half of a one-page print; false writes
   * each document over the last (puppeteer's `setContent`), for callers whose documents all
   * carry the same policy (the certificate template's fixed one).
   */
  freshDocumentPerRender?: boolean;
  log?: PoolLogger;
}

export interface BrowserPool {
  /**
   * Renders `html` to a PDF of paper size `format` (backgrounds printed) and returns its bytes.
   * `timeoutMs` overrides the pool's `renderTimeoutMs` for this render. Waits for a free page
   * first (that wait, and a browser launch, do not count against the deadline).
   * Throws `RenderTimeoutError` past `renderTimeoutMs`, `BrowserPoolClosedError` after
   * `close()`, and puppeteer's error when the browser fails or crashes mid-render (all of
   * these are worth a retry; the next render relaunches a crashed browser).
   */
  render(html: string, options: { format: PdfPageFormat; timeoutMs?: number }): Promise<Buffer>;
  /** Closes the browser(s) and waits until no Chromium process of this pool is left. Idempotent. */
  close(): Promise<void>;
  /** Browsers launched so far (recycling and crash recovery each add one). */
  readonly launches: number;
  /**
   * Pages open now in the pool's live browsers: `busy` are rendering (at most `pageCount`),
   * `idle` wait for the next render (a recycled browser's stay open until its last render ends,
   * so the sum can pass `pageCount` briefly). Both are 0 before the first render and after a
   * crash (its pages went with the browser) or `close()`.
   */
  readonly pages: { readonly idle: number; readonly busy: number };
  /**
   * True while the pool is open and its browser alive: no browser launched yet, the browser
   * launched last still connected (puppeteer's `browser.connected`), or the last one closed on
   * purpose after `rendersPerBrowser` renders (its replacement starts with the next render).
   * False after `close()`, and after the browser crashed or disconnected until a render has
   * launched a new one.
   */
  healthy(): boolean;
  /** Renders completed successfully so far. */
  readonly renders: number;
  /** Requests aborted because their URL was neither `data:` nor `about:blank`. */
  readonly blockedRequests: number;
  /** Test hook: pid of the current browser process, if one is running. */
  __browserPidForTests(): number | undefined;
}

/** A render did not finish within `renderTimeoutMs`; its page has been discarded. */
export class RenderTimeoutError extends Error {
  override name = 'RenderTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`PDF render did not finish within ${timeoutMs} ms`);
  }
}

/** `render` was called on (or was waiting in) a pool that has been closed. */
export class BrowserPoolClosedError extends Error {
  override name = 'BrowserPoolClosedError';
  constructor() {
    super('browser pool is closed');
  }
}

/** Flags for Debian's Chromium in a container (ARCHITECTURE §1: new headless mode only). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
] as const;

/**
 * Renders left on a browser when its replacement is launched: a tenth of `rendersPerBrowser`
 * (50 of the default 500, about 12 s of prints at 8 purchases/s); 0 (no launch ahead) below 10.
 */
export function launchAheadOf(rendersPerBrowser: number): number {
  return Math.floor(rendersPerBrowser / 10);
}

/** One launched browser and the pages opened on it. */
interface Generation {
  browser: Browser;
  userDataDir: string;
  pid: number | undefined;
  freePages: Page[];
  /** Renders handed to this browser (the recycle counter). */
  assigned: number;
  inFlight: number;
  /** No new renders go here; it closes when `inFlight` reaches 0. */
  retired: boolean;
  dead: boolean;
  /** Disconnected without `shutdown` asking for it (a crash, a killed process). */
  lost: boolean;
  closed?: Promise<void>;
}

/**
 * Creates the pool; no browser starts until the first `render`. Throws `RangeError` on a
 * non-positive `pageCount`, `rendersPerBrowser` or `renderTimeoutMs`.
 */
export function createBrowserPool(options: BrowserPoolOptions): BrowserPool {
  const { executablePath, pageCount, rendersPerBrowser, renderTimeoutMs, log } = options;
  const freshDocument = options.freshDocumentPerRender ?? true;
  for (const [name, value] of Object.entries({ pageCount, rendersPerBrowser, renderTimeoutMs })) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }

  const slots = createSemaphore(pageCount);
  const generations = new Set<Generation>();
  let current: Generation | undefined;
  /** Launched ahead while `current` still had renders left: takes over when they are spent. */
  let next: Generation | undefined;
  const launchAhead = launchAheadOf(rendersPerBrowser);
  /** The browser launched last, kept after a crash so that `healthy()` can report it. */
  let newest: Generation | undefined;
  let launching: Promise<Generation> | undefined;
  let closed = false;
  let launches = 0;
  let renders = 0;
  let blockedRequests = 0;
  let busyPages = 0;

  async function launch(): Promise<Generation> {
    const userDataDir = await mkdtemp(path.join(tmpdir(), 'coi-chromium-'));
    let browser: Browser;
    try {
      browser = await puppeteer.launch({
        executablePath,
        headless: true, // `--headless=new`: Debian's Chromium has no old headless mode
        pipe: true, // no DevTools port on localhost
        userDataDir,
        args: [...CHROMIUM_ARGS],
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
    } catch (err) {
      await rm(userDataDir, { recursive: true, force: true });
      throw err;
    }
    launches += 1;
    const gen: Generation = {
      browser,
      userDataDir,
      pid: browser.process()?.pid,
      freePages: [],
      assigned: 0,
      inFlight: 0,
      retired: false,
      dead: false,
      lost: false,
    };
    generations.add(gen);
    newest = gen;
    browser.once('disconnected', () => {
      gen.dead = true;
      gen.freePages.length = 0;
      if (current === gen) current = undefined;
      if (next === gen) next = undefined;
      if (!gen.closed) {
        gen.lost = true;
        log?.warn({ pid: gen.pid }, 'chromium disconnected; the next render relaunches it');
        void shutdown(gen);
      }
    });
    log?.info({ pid: gen.pid, launches }, 'chromium launched');
    return gen;
  }

  const usable = (gen: Generation | undefined): gen is Generation =>
    gen !== undefined && !gen.dead && gen.browser.connected && gen.assigned < rendersPerBrowser;

  /**
   * Starts a launch unless one is under way. The browser becomes `current`, or `next` when the
   * current one still has renders left (a launch ahead). A failed launch ahead is left to the
   * render that needs the browser, which launches again.
   */
  function startLaunch(): Promise<Generation> {
    if (!launching) {
      launching = launch().finally(() => {
        launching = undefined;
      });
      launching.then(
        (g) => {
          if (closed) void shutdown(g);
          else if (usable(current)) next = g;
          else {
            // A browser whose renders were spent while this one launched is retired here.
            if (current) retire(current);
            current = g;
          }
        },
        () => undefined,
      );
    }
    return launching;
  }

  /** The browser the next render goes to, launching or replacing it as needed. */
  async function acquireGeneration(): Promise<Generation> {
    for (;;) {
      if (closed) throw new BrowserPoolClosedError();
      const gen = current;
      if (usable(gen)) {
        gen.assigned += 1;
        gen.inFlight += 1;
        if (launchAhead > 0 && rendersPerBrowser - gen.assigned <= launchAhead && !next) startLaunch().catch(() => undefined);
        return gen;
      }
      if (gen) retire(gen);
      if (usable(next)) {
        current = next;
        next = undefined;
        continue;
      }
      await startLaunch();
    }
  }

  function retire(gen: Generation): void {
    if (current === gen) current = undefined;
    gen.retired = true;
    if (gen.inFlight === 0) void shutdown(gen);
  }

  function release(gen: Generation): void {
    gen.inFlight -= 1;
    if ((gen.retired || gen.dead) && gen.inFlight === 0) void shutdown(gen);
  }

  /** Closes one browser (killing it if it does not exit) and removes its profile. */
  function shutdown(gen: Generation): Promise<void> {
    gen.closed ??= (async () => {
      gen.retired = true;
      gen.freePages.length = 0;
      const proc = gen.browser.process();
      const exited =
        proc && proc.exitCode === null && proc.signalCode === null
          ? new Promise<void>((resolve) => proc.once('exit', () => resolve()))
          : Promise.resolve();
      if (gen.browser.connected) {
        await withTimeout(gen.browser.close(), 5_000).catch(() => undefined);
      }
      if (proc && proc.exitCode === null && proc.signalCode === null) {
        const killTimer = setTimeout(() => proc.kill('SIGKILL'), 2_000);
        await exited;
        clearTimeout(killTimer);
      }
      await rm(gen.userDataDir, { recursive: true, force: true }).catch(() => undefined);
      generations.delete(gen);
    })();
    return gen.closed;
  }

  async function newPage(gen: Generation): Promise<Page> {
    const page = await gen.browser.newPage();
    await page.setJavaScriptEnabled(false);
    await page.setRequestInterception(true);
    page.on('request', (request: HTTPRequest) => {
      if (request.isInterceptResolutionHandled()) return;
      const url = request.url();
      if (url.startsWith('data:') || url === 'about:blank') {
        void request.continue().catch(() => undefined);
      } else {
        blockedRequests += 1;
        void request.abort('blockedbyclient').catch(() => undefined);
      }
    });
    return page;
  }

  async function renderOn(gen: Generation, html: string, format: PdfPageFormat, timeoutMs: number): Promise<Buffer> {
    const reused = gen.freePages.pop();
    const page = reused ?? (await newPage(gen));
    busyPages += 1;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RenderTimeoutError(timeoutMs)), timeoutMs);
    });
    const work = (async () => {
      // `setContent` rewrites the current document, which keeps state of the previous render
      // (e.g. its Content-Security-Policy); a navigation to about:blank gives a fresh document.
      if (reused && freshDocument) await page.goto('about:blank', { waitUntil: 'load', timeout: 0 });
      await page.setContent(html, { waitUntil: 'load', timeout: 0 });
      // Tagged (puppeteer's default, stated): a structure tree, /Lang from <html lang> (issue 50 item 6).
      return page.pdf({ format: format as PaperFormat, printBackground: true, timeout: 0, tagged: true });
    })();
    try {
      const pdf = await Promise.race([work, deadline]);
      // A page of a browser that has gone since is not open any more: it is not kept.
      if (!gen.dead && !gen.closed) gen.freePages.push(page);
      return Buffer.from(pdf);
    } catch (err) {
      // A page that failed or timed out may still be busy: discard it rather than reuse it.
      work.catch(() => undefined);
      void page.close().catch(() => undefined);
      throw err;
    } finally {
      busyPages -= 1;
      clearTimeout(timer);
    }
  }

  return {
    async render(html, { format, timeoutMs = renderTimeoutMs }) {
      if (closed) throw new BrowserPoolClosedError();
      if (!(timeoutMs >= 1)) throw new RangeError(`timeoutMs must be ≥ 1, got ${timeoutMs}`);
      await slots.acquire();
      try {
        const gen = await acquireGeneration();
        try {
          const pdf = await renderOn(gen, html, format, timeoutMs);
          renders += 1;
          return pdf;
        } finally {
          release(gen);
        }
      } finally {
        slots.release();
      }
    },

    async close() {
      closed = true;
      slots.rejectWaiters(new BrowserPoolClosedError());
      await launching?.catch(() => undefined);
      current = undefined;
      next = undefined;
      await Promise.all([...generations].map((gen) => shutdown(gen)));
    },

    get launches() {
      return launches;
    },
    get pages() {
      let idle = 0;
      for (const gen of generations) if (!gen.dead && !gen.closed) idle += gen.freePages.length;
      return { idle, busy: busyPages };
    },
    healthy: () => !closed && (newest === undefined || newest.browser.connected || (newest.retired && !newest.lost)),
    get renders() {
      return renders;
    },
    get blockedRequests() {
      return blockedRequests;
    },
    __browserPidForTests() {
      return current && !current.dead ? current.pid : undefined;
    },
  };
}

/** A counting semaphore: at most `permits` holders; waiters are served in FIFO order. */
function createSemaphore(permits: number) {
  let available = permits;
  const waiters: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  return {
    acquire(): Promise<void> {
      if (available > 0) {
        available -= 1;
        return Promise.resolve();
      }
      return new Promise<void>((resolve, reject) => waiters.push({ resolve, reject }));
    },
    release(): void {
      const next = waiters.shift();
      if (next) next.resolve();
      else available += 1;
    },
    rejectWaiters(err: Error): void {
      for (const w of waiters.splice(0)) w.reject(err);
    },
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
