/**
 * One server process the fault suite can start, stop, kill and start again, the way an
 * operator or a supervisor (systemd, Kubernetes) would: spawned in its own process group, its
 * output appended to one log file across restarts, ready when `ready()` answers.
 *
 * Unlike scripts/stack.mjs (which reuses whatever already answers on a port and stops only at
 * the end of a run), every process here is owned by the suite and can be faulted at any time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';

export interface ProcessSpec {
  /** Short name used in messages (`postgres`, `temporal`, `worker`…). */
  name: string;
  cmd: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Appended to (never truncated) so one file tells the whole run's story. */
  logFile: string;
  /** Resolves true once the server answers; polled every 250 ms. */
  ready(): Promise<boolean>;
  /** Milliseconds `start()` waits for `ready()` (default 90 000). */
  readyTimeoutMs?: number;
  /** Signal for a graceful stop (default SIGTERM; PostgreSQL's fast shutdown is SIGINT). */
  stopSignal?: NodeJS.Signals;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ManagedProcess {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();

  constructor(readonly spec: ProcessSpec) {}

  get name(): string {
    return this.spec.name;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * Spawns the process and waits until `ready()` answers.
   * @throws {Error} naming the process and its log when it exits first or is not ready in time.
   */
  async start(): Promise<void> {
    if (this.running) return;
    const { name, cmd, args, env, cwd, logFile } = this.spec;
    const fd = fs.openSync(logFile, 'a');
    fs.writeSync(fd, `\n# ${new Date().toISOString()} start ${cmd} ${args.join(' ')}\n`);
    const child = spawn(cmd, args, { cwd, env: env ?? process.env, stdio: ['ignore', fd, fd], detached: true });
    fs.closeSync(fd);
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', () => resolve());
    });
    const deadline = Date.now() + (this.spec.readyTimeoutMs ?? 90_000);
    for (;;) {
      if (!this.running) throw new Error(`${name} exited before it was ready; see ${logFile}`);
      if (await this.spec.ready().catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`${name} not ready within ${this.spec.readyTimeoutMs ?? 90_000} ms; see ${logFile}`);
      await sleep(250);
    }
  }

  /** Graceful stop: the stop signal to the whole group, SIGKILL after `graceMs`. Never throws. */
  async stop(graceMs = 15_000): Promise<void> {
    if (!this.running || !this.child?.pid) return;
    this.signalGroup(this.spec.stopSignal ?? 'SIGTERM');
    const gone = await Promise.race([this.exited.then(() => true), sleep(graceMs).then(() => false)]);
    if (!gone) this.signalGroup('SIGKILL');
    await this.exited;
    this.signalGroup('SIGKILL'); // anything the leader left behind in its group
  }

  /** SIGKILL to the whole group, as a crash or an OOM kill would; waits until it has exited. */
  async kill(): Promise<void> {
    if (!this.running || !this.child?.pid) return;
    this.signalGroup('SIGKILL');
    await this.exited;
  }

  private signalGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.child!.pid!, signal);
    } catch {
      // ESRCH: the group is gone
    }
  }
}
