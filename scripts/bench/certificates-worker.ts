/**
 * The real Temporal worker (`src/worker.ts`) as a child process of the certificates benchmark,
 * and what the benchmark reads about it from `/proc` (Linux only).
 *
 * The worker runs as `node <WORKER_NODE_ARGS> --import tsx src/worker.ts` (the flags every
 * launcher gives a worker: scripts/worker-runtime.cjs) rather than through the `tsx` CLI: the CLI
 * runs the script in a second Node process, so its pid would not be the worker's and its RSS
 * would not be the worker's RSS. The environment carries a marker variable with a value unique
 * to this run; Chromium inherits the environment from the worker (puppeteer passes it on), so
 * every process of the worker's browser pool can be found by that marker, and only those (a
 * `npm run dev` worker's Chromium, which also has a `coi-chromium-` profile, lacks it).
 *
 * Units: memory in KiB as `/proc/<pid>/status` reports it (`VmRSS`, `VmHWM`), times in ms.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { loadConfig, type Config } from '../../src/config';
import { createContainer, type Container } from '../../src/container';
import { createLogger } from '../../src/logger';
import type { ApiHandle } from '../harness/api';
import { call } from '../harness/fixtures';
import type { QuotingAccount } from '../harness/purchases';
import { listenApi } from './lib';
/** Node flags of a worker process (scripts/worker-runtime.cjs: its heap cap), as every launcher passes them. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const { WORKER_NODE_ARGS } = require('../worker-runtime.cjs') as { WORKER_NODE_ARGS: readonly string[] };

/** Name of the environment variable that marks the worker and the Chromium processes it starts. */
export const MARKER_ENV = 'COI_CERTIFICATES_BENCH_MARKER';

export interface WorkerProcess {
  pid: number;
  child: ChildProcess;
  /** Where the worker's stdout and stderr go. */
  logFile: string;
  /** Resolves with the exit code and signal once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Set once the process has exited. */
  exitInfo: { code: number | null; signal: NodeJS.Signals | null } | null;
}

/**
 * Spawns `src/worker.ts` with `env` (plus the marker `MARKER_ENV=marker`) and resolves once it
 * has logged `worker running` (its pino line at info level; `env.LOG_LEVEL` must let it through).
 * Throws, after killing the child, when it exits first or is not running within `timeoutMs`.
 */
export async function startWorker(opts: {
  repoRoot: string;
  env: Record<string, string | undefined>;
  marker: string;
  logFile: string;
  timeoutMs: number;
}): Promise<WorkerProcess> {
  fs.mkdirSync(path.dirname(opts.logFile), { recursive: true });
  const out = fs.createWriteStream(opts.logFile, { flags: 'w' });
  const child = spawn(process.execPath, [...WORKER_NODE_ARGS, '--import', 'tsx', path.join(opts.repoRoot, 'src', 'worker.ts')], {
    cwd: opts.repoRoot,
    env: { ...opts.env, [MARKER_ENV]: opts.marker },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (!child.pid) throw new Error('could not spawn the worker');
  const proc: WorkerProcess = {
    pid: child.pid,
    child,
    logFile: opts.logFile,
    exitInfo: null,
    exited: new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        proc.exitInfo = { code, signal };
        resolve(proc.exitInfo);
      });
    }),
  };
  let running: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    running = resolve;
  });
  for (const stream of [child.stdout!, child.stderr!]) {
    readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      out.write(`${line}\n`);
      if (line.includes('"msg":"worker running"')) running();
    });
  }
  void proc.exited.then(() => out.end());

  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    ready.then(() => 'ready' as const),
    proc.exited.then(() => 'exited' as const),
    new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), opts.timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  if (outcome !== 'ready') {
    if (!proc.exitInfo) {
      child.kill('SIGKILL');
      await proc.exited;
    }
    const tail = fs.existsSync(opts.logFile) ? fs.readFileSync(opts.logFile, 'utf8').trimEnd().split('\n').slice(-10).join('\n') : '';
    throw new Error(
      `the worker ${outcome === 'exited' ? `exited (code ${proc.exitInfo?.code}, signal ${proc.exitInfo?.signal})` : `was not running within ${opts.timeoutMs} ms`} ` +
        `before it was ready; see ${opts.logFile}${tail ? `\n${tail}` : ''}`,
    );
  }
  return proc;
}

/**
 * Sends SIGTERM to the worker (it stops polling, lets activities finish, closes its page pool)
 * and waits up to `graceMs` for it to exit; then SIGKILL. Returns how it ended and how long it took.
 */
export async function stopWorker(
  proc: WorkerProcess,
  graceMs: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number; killed: boolean }> {
  const t0 = Date.now();
  if (proc.exitInfo) return { ...proc.exitInfo, ms: 0, killed: false };
  proc.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([
    proc.exited.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), graceMs);
    }),
  ]);
  clearTimeout(timer);
  if (!inTime) {
    proc.child.kill('SIGKILL');
    await proc.exited;
  }
  return { ...proc.exitInfo!, ms: Date.now() - t0, killed: !inTime };
}

/** Memory of one process from `/proc/<pid>/status`, KiB; null when the process is gone. */
export function processMemory(pid: number): { rssKiB: number; hwmKiB: number } | null {
  let status: string;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssKiB: field('VmRSS'), hwmKiB: field('VmHWM') };
}

/** One process found in `/proc`. */
export interface ProcInfo {
  pid: number;
  /** Process state letter from `/proc/<pid>/stat` (`Z` = zombie). */
  state: string;
  /** Parent pid (1 or a subreaper once the parent has exited). */
  ppid: number;
  /** Start time in clock ticks after boot (tells a reused pid from the original process). */
  startTicks: number;
  /** First 120 characters of the command line. */
  cmdline: string;
  rssKiB: number;
}

function readProc(pid: number): ProcInfo | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name: state is field 3 of stat(5), ppid 4, starttime 22.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim().slice(0, 120);
    return {
      pid,
      state: fields[0] ?? '?',
      ppid: Number(fields[1]),
      startTicks: Number(fields[19]),
      cmdline,
      rssKiB: processMemory(pid)?.rssKiB ?? 0,
    };
  } catch {
    return null;
  }
}

/**
 * Every live process (other than `excludePid`, the worker itself) whose environment carries
 * `MARKER_ENV=marker`: the Chromium processes the worker started (browser, zygotes, renderers,
 * utilities). A zombie has no readable environment: see `stillPresent` for those.
 */
export function markedProcesses(marker: string, excludePid?: number): ProcInfo[] {
  const needle = Buffer.from(`${MARKER_ENV}=${marker}\0`);
  const found: ProcInfo[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === excludePid || pid === process.pid) continue;
    let environ: Buffer;
    try {
      environ = fs.readFileSync(`/proc/${pid}/environ`);
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    if (!environ.includes(needle)) continue;
    const info = readProc(pid);
    if (info) found.push(info);
  }
  return found;
}

/** Which of `procs` still exist in any state (zombies included); a reused pid does not count. */
export function stillPresent(procs: readonly ProcInfo[]): ProcInfo[] {
  return procs.flatMap((p) => {
    const now = readProc(p.pid);
    return now && now.startTicks === p.startTicks ? [now] : [];
  });
}

/**
 * CPU time of a process (user + system) plus that of its children it has reaped, in clock ticks
 * (USER_HZ, 100 per second on Linux); 0 when gone. `ownOnly`: without the reaped children's.
 */
export function processTicks(pid: number, ownOnly = false): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    // utime, stime (fields 14 and 15 of stat(5)), then cutime, cstime (16 and 17)
    return f[11]! + f[12]! + (ownOnly ? 0 : f[13]! + f[14]!);
  } catch {
    return 0;
  }
}

/** Busy and total CPU ticks of the whole machine (all cores) from `/proc/stat`. */
export function machineTicks(): { busy: number; total: number } {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0); // user nice system idle iowait irq softirq steal
  return { busy: total - (v[3] ?? 0) - (v[4] ?? 0), total };
}

/** The parent of `pid` from /proc (0 once it has gone). */
export function parentPid(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}

/** `root` and every process below it (children, grandchildren, …), from the parent pids in /proc. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const ppid = parentPid(Number(name));
    if (ppid) children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
  }
  const out: number[] = [];
  for (const queue = [root]; queue.length > 0;) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** CPU use over an interval, in cores (1 = one core fully busy). */
export interface CpuUse {
  /** The whole machine (every process, ours and others'). */
  machine: number;
  /** The worker process and its descendants (its Chromium). */
  worker: number;
  /** This process and its descendants other than the worker (the API, the activity path and its Chromium, the naive script's Chromium). */
  bench: number;
  /** Number of cores, for reading the figures above. */
  cores: number;
}

/**
 * Starts measuring CPU use; the returned function ends the interval. Process trees are looked up
 * at both ends; a process that exits within the interval is counted through its parent's
 * reaped-children time (all of its life, so a long-lived process that exits then is over-counted,
 * and one whose parent is gone too is lost): `worker` and `bench` are approximate, `machine` is exact.
 */
export function startCpuMeter(workerPid?: number): () => CpuUse {
  const sample = () => {
    const workerSet = new Set(workerPid === undefined ? [] : processTree(workerPid));
    const benchPids = processTree(process.pid).filter((pid) => !workerSet.has(pid));
    return {
      machine: machineTicks(),
      worker: new Map([...workerSet].map((pid) => [pid, processTicks(pid)])),
      bench: new Map(benchPids.map((pid) => [pid, processTicks(pid)])),
    };
  };
  const delta = (a: Map<number, number>, b: Map<number, number>) => [...b].reduce((sum, [pid, t]) => sum + t - (a.get(pid) ?? 0), 0);
  const s0 = sample();
  return () => {
    const s1 = sample();
    const cores = Math.max(1, os.cpus().length);
    const seconds = (s1.machine.total - s0.machine.total) / 100 / cores; // wall time as /proc/stat counts it
    if (seconds <= 0) return { machine: 0, worker: 0, bench: 0, cores };
    return {
      machine: (s1.machine.busy - s0.machine.busy) / 100 / seconds,
      worker: delta(s0.worker, s1.worker) / 100 / seconds,
      bench: delta(s0.bench, s1.bench) / 100 / seconds,
      cores,
    };
  };
}

/**
 * The environment the API and the worker of a bench on its own stack share: its database, Temporal
 * namespace and task queue, processor and bucket; no per-key rate limit to speak of (REDIS_URL
 * empty: the in-memory limiter), metrics on free ports, the SDK's metrics off, mail to a closed port.
 * `extra` adds or replaces variables.
 */
export function benchServiceEnv(
  o: {
    databaseUrl: string;
    temporalAddress: string;
    namespace: string;
    taskQueue: string;
    processorUrl: string;
    storage: { url: string; bucket: string };
  },
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: o.databaseUrl,
    TEMPORAL_ADDRESS: o.temporalAddress,
    TEMPORAL_NAMESPACE: o.namespace,
    TEMPORAL_TASK_QUEUE: o.taskQueue,
    PAYPROC_API_BASE: o.processorUrl,
    STORAGE_API_ENDPOINT: o.storage.url,
    STORAGE_BUCKET: o.storage.bucket,
    RATE_LIMIT_PER_MINUTE: '100000000',
    REDIS_URL: '',
    METRICS_PORT: '0',
    WORKER_METRICS_PORT: '0',
    WORKER_SDK_METRICS_ADDRESS: '',
    SMTP_URL: 'smtp://127.0.0.1:1',
    ...extra,
  };
}

/** What a bench started of its API and worker; the bench keeps it to stop them (stopApiAndWorker) whatever happened. */
export interface ApiAndWorker {
  container?: Container;
  server?: Server;
  worker?: WorkerProcess;
}

/**
 * Starts the worker (`node --import tsx src/worker.ts`, its output in `logFile`, LOG_LEVEL info)
 * and, while it bundles its workflows, the API in this process on a free port, both with `env`
 * over this process's environment; records each part in `into` as it starts. Answers the API (its
 * config; the bench prepares its accounts then) and the worker's start, to await once they are made.
 */
export async function startApiAndWorker(
  into: ApiAndWorker,
  o: { repoRoot: string; env: Record<string, string>; logFile: string; loggerName: string; timeoutMs?: number },
): Promise<{ app: ApiHandle; config: Config; workerReady: Promise<WorkerProcess> }> {
  const workerReady = startWorker({
    repoRoot: o.repoRoot,
    env: { ...process.env, ...o.env, LOG_LEVEL: 'info' },
    marker: randomUUID(),
    logFile: o.logFile,
    timeoutMs: o.timeoutMs ?? 240_000,
  }).then((worker) => (into.worker = worker));
  workerReady.catch(() => undefined);
  const config = loadConfig({ ...process.env, ...o.env, LOG_LEVEL: 'silent', PORT: '0' });
  const container = (into.container = createContainer(config, createLogger(config, o.loggerName)));
  const { server, baseUrl } = await listenApi(container);
  into.server = server;
  return { app: { baseUrl, container }, config, workerReady };
}

/** Stops what startApiAndWorker started: the worker (SIGTERM, 20 s grace), the API's server, its container. */
export async function stopApiAndWorker(s: ApiAndWorker): Promise<void> {
  if (s.worker && !s.worker.exitInfo) await stopWorker(s.worker, 20_000);
  if (s.server) {
    s.server.closeAllConnections();
    await new Promise<void>((resolve) => s.server!.close(() => resolve()));
  }
  await s.container?.close();
}

/** A bench's API in this process (startApiAndWorker) and the quoting account it drives (createQuotingAccount). */
export interface QuotingBench {
  app: ApiHandle;
  container: Container;
  account: QuotingAccount;
}

/** `call` of `/api/v1<p>` on the bench's API with its account's key; answers the call as it came. */
export const accountApi = (b: QuotingBench, p: string, init: { method?: string; body?: unknown } = {}) =>
  call(b.app.baseUrl, `/api/v1${p}`, { key: b.account.key, ...init });
