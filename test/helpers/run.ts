/**
 * Runs the project's own entry points (`tsx <file>`) as child processes with the test env.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { TestApp } from './app';
import type { Agency } from './certificates';

export const ROOT = path.resolve(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `tsx <script> ...args` to completion. */
export function runScript(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(TSX, [script, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts `tsx <script>` and resolves once a stdout line matches `ready`. */
export function startProcess(
  script: string,
  ready: RegExp,
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 60_000,
): Promise<{ child: ChildProcess; output: () => string; exited: Promise<number | null> }> {
  // Own process group: tsx runs the script in a child node process, so a timeout must kill the
  // group, not just the tsx wrapper (which would leave the real process running).
  const child = spawn(TSX, [script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      reject(new Error(`${script} not ready after ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve({ child, output: () => out, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code} before it was ready:\n${out}`));
    });
  });
}

/** Whether process `pid` still exists (signal 0: nothing is sent; an error means it is gone or not ours). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The environment scripts/demo.ts runs with for `agency` on `app`: the agency's key, teammate,
 * root account (uuid and id) and seller slug, this run's Temporal namespace, the API at `baseUrl`
 * (the app's own by default; a proxy in front of it, say) and the files written to `outputDir`.
 */
export async function demoScriptEnv(
  app: TestApp,
  agency: Agency,
  o: { baseUrl?: string; outputDir: string },
): Promise<Record<string, string>> {
  const account = await app.container.db('root_accounts').where({ slug: agency.slug }).first('id');
  return {
    DEMO_BASE_URL: o.baseUrl ?? app.baseUrl,
    DEMO_API_KEY: agency.key,
    DEMO_TEAMMATE_UUID: agency.teammateUuid,
    DEMO_ROOT_UUID: agency.rootUuid,
    DEMO_ROOT_ACCOUNT_ID: String(account.id),
    DEMO_SELLER_SLUG: agency.slug,
    DEMO_NAMESPACE: process.env.TEMPORAL_NAMESPACE ?? 'default',
    DEMO_OUTPUT_DIR: o.outputDir,
  };
}
