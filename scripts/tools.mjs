#!/usr/bin/env node
/**
 * Installs the pinned Go-built tools the local stack and the tests need, and links them
 * into `<repo>/.tools/bin/` (git-ignored).
 *
 * Each tool is built once per version with `GOBIN=<cache> go install <module>@<version>`
 * into `~/.cache/insurance-tools/<name>-<version>/` (override the root with
 * INSURANCE_TOOLS_CACHE), outside the clone, so fresh clones and CI runs on the same
 * machine reuse it. Plain Node, no npm dependencies: runs before `npm ci`.
 *
 *   node scripts/tools.mjs        # build what is missing (every tool), print the paths
 *   node scripts/tools.mjs --dev  # only the dev-server stack's tools (no Temporal cluster)
 *   node scripts/tools.mjs --k8s  # the dev-server stack's tools and the Kubernetes manifest validator
 */
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN_DIR = path.join(REPO_ROOT, '.tools', 'bin');
const LOG_DIR = path.join(REPO_ROOT, 'var', 'log');

/** Toolchain to retry with when the machine's Go cannot build a pinned tool. */
const FALLBACK_TOOLCHAIN = 'go1.25.5';
/** How long to wait for a build that another process is already running. */
const FOREIGN_BUILD_WAIT_MS = 15 * 60 * 1000;

/**
 * The pinned tools. Later Temporal CLI tags (v1.6.0+) carry a `replace` directive that
 * `go install` refuses, hence v1.5.1 (Temporal server 1.29). `goBin` is the name `go install`
 * gives the binary when it differs from ours. `cluster` tools are the production-shaped
 * Temporal (server 1.30.4 on PostgreSQL, its SQL schema tool and the UI server 2.42.1, the UI
 * the CLI's dev server embeds): built when asked for (`npm run dev -- --cluster`,
 * TEMPORAL_MODE=cluster) and by `node scripts/tools.mjs` without arguments (CI).
 * `k8s` tools check deploy/kubernetes/ (kubeconform; deploy/kubernetes/validate.mjs): built
 * with `--k8s` and without arguments (CI).
 * `schemaFrom` copies a directory of the built module (the SQL schema) beside the binary, or,
 * with its own `version`, of that module fetched with `go mod download` (kubeconform: the
 * Kubernetes OpenAPI document of `k8s.io/kubernetes`, as it cannot download its schemas here).
 */
export const TOOLS = Object.freeze({
  temporal: { bin: 'temporal', module: 'github.com/temporalio/cli/cmd/temporal', version: 'v1.5.1' },
  stripeMock: { bin: 'stripe-mock', module: 'github.com/stripe/stripe-mock', version: 'v0.203.0' },
  fakeGcs: { bin: 'fake-gcs-server', module: 'github.com/fsouza/fake-gcs-server', version: 'v1.56.1' },
  temporalServer: {
    bin: 'temporal-server',
    goBin: 'server',
    module: 'go.temporal.io/server/cmd/server',
    version: 'v1.30.4',
    cluster: true,
    schemaFrom: { module: 'go.temporal.io/server', dir: 'schema/postgresql/v12' },
  },
  temporalSqlTool: {
    bin: 'temporal-sql-tool',
    goBin: 'sql',
    module: 'go.temporal.io/server/cmd/tools/sql',
    version: 'v1.30.4',
    cluster: true,
  },
  temporalUiServer: {
    bin: 'temporal-ui-server',
    goBin: 'server',
    module: 'github.com/temporalio/ui-server/v2/cmd/server',
    version: 'v2.42.1',
    cluster: true,
  },
  kubeconform: {
    bin: 'kubeconform',
    module: 'github.com/yannh/kubeconform/cmd/kubeconform',
    version: 'v0.8.0',
    k8s: true,
    schemaFrom: { module: 'k8s.io/kubernetes', version: 'v1.34.4', dir: 'api/openapi-spec' },
  },
});

/** Root of the per-version build cache. */
export function cacheRoot() {
  if (process.env.INSURANCE_TOOLS_CACHE) return path.resolve(process.env.INSURANCE_TOOLS_CACHE);
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'insurance-tools');
}

function toolCacheDir(tool) {
  return path.join(cacheRoot(), `${tool.bin}-${tool.version}`);
}

function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function findGo() {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, 'go'))) return path.join(dir, 'go');
  }
  for (const candidate of ['/usr/local/go/bin/go', path.join(os.homedir(), 'go', 'bin', 'go'), '/usr/lib/go/bin/go']) {
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

function pidAlive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** Pids of `go install <module>@…` processes started by anyone (e.g. a provisioning script). */
function foreignGoInstalls(tool) {
  try {
    const out = execFileSync('pgrep', ['-f', `go install ${tool.module}@`], { encoding: 'utf8' });
    return out
      .split('\n')
      .map(Number)
      .filter((pid) => pid && pid !== process.pid);
  } catch {
    return []; // pgrep exits 1 when nothing matches, or is missing
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function fmtElapsed(ms) {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/**
 * Takes the build lock for `tool` (an O_EXCL file next to its cache dir holding our pid).
 * Returns a release function, or null when a live process holds it. Stale locks are removed.
 */
function tryLock(lockFile) {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const fd = fs.openSync(lockFile, 'wx');
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      return () => fs.rmSync(lockFile, { force: true });
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      const holder = Number(fs.readFileSync(lockFile, 'utf8').trim());
      if (pidAlive(holder)) return null;
      fs.rmSync(lockFile, { force: true }); // stale: its builder died
    }
  }
  return null;
}

/** Waits until `binary` exists and no other builder (lock holder or `go install`) is still running. */
async function waitForForeignBuild(tool, binary, lockFile, log) {
  const started = Date.now();
  let lastReport = 0;
  for (;;) {
    const lockHeld = fs.existsSync(lockFile) && pidAlive(Number(fs.readFileSync(lockFile, 'utf8').trim() || 0));
    const building = lockHeld || foreignGoInstalls(tool).length > 0;
    if (!building) return; // the caller re-checks the binary and builds if it is still missing
    const elapsed = Date.now() - started;
    if (elapsed > FOREIGN_BUILD_WAIT_MS) {
      throw new Error(`gave up after ${fmtElapsed(elapsed)} waiting for another build of ${tool.bin} ${tool.version} (${binary})`);
    }
    if (Date.now() - lastReport >= 10_000) {
      log(`[tools] ${tool.bin} ${tool.version}: another process is building it, waiting… ${fmtElapsed(elapsed)}`);
      lastReport = Date.now();
    }
    await sleep(2000);
  }
}

/** Runs one `go install`, streaming a progress line every 10 s; resolves to its exit code. */
function runGoInstall({ go, tool, gobin, env, logFile, log }) {
  return new Promise((resolve, reject) => {
    const out = fs.openSync(logFile, 'a');
    fs.writeSync(
      out,
      `\n=== ${new Date().toISOString()} GOBIN=${gobin}${env.GOTOOLCHAIN ? ` GOTOOLCHAIN=${env.GOTOOLCHAIN}` : ''} go install -v ${tool.module}@${tool.version}\n`,
    );
    const child = spawn(go, ['install', '-v', `${tool.module}@${tool.version}`], {
      env: { ...env, GOBIN: gobin },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const started = Date.now();
    let packages = 0;
    let last = '';
    let pending = '';
    const onData = (chunk) => {
      fs.writeSync(out, chunk);
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (line.trim() && !line.startsWith('go: ')) {
          packages += 1;
          last = line.trim();
        }
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setInterval(() => {
      log(
        `[tools] building ${tool.bin} ${tool.version}… ${fmtElapsed(Date.now() - started)}, ${packages} packages${last ? ` (last: ${last})` : ''}`,
      );
    }, 10_000);
    child.on('error', (err) => {
      clearInterval(timer);
      fs.closeSync(out);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearInterval(timer);
      fs.closeSync(out);
      resolve({ code: code ?? 1, signal, elapsed: Date.now() - started });
    });
  });
}

function tailFile(file, lines = 15) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Builds `tool` into its cache dir (atomically: into a temp GOBIN, then rename). */
async function build(tool, binary, log) {
  const go = findGo();
  if (!go) {
    throw new Error(`cannot build ${tool.bin}: no \`go\` on PATH or at /usr/local/go/bin/go (install Go ≥ 1.21)`);
  }
  fs.mkdirSync(LOG_DIR, { recursive: true });
  const logFile = path.join(LOG_DIR, `go-install-${tool.bin}.log`);
  const dir = path.dirname(binary);
  const tmpBin = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmpBin, { recursive: true, force: true });
  fs.mkdirSync(tmpBin, { recursive: true });
  try {
    const attempts = [{ ...process.env }];
    if (!process.env.GOTOOLCHAIN) attempts.push({ ...process.env, GOTOOLCHAIN: FALLBACK_TOOLCHAIN });
    for (const [i, env] of attempts.entries()) {
      log(
        `[tools] building ${tool.bin} ${tool.version} with ${go}${env.GOTOOLCHAIN ? ` (GOTOOLCHAIN=${env.GOTOOLCHAIN})` : ''}; output in ${path.relative(REPO_ROOT, logFile)}`,
      );
      const { code, elapsed } = await runGoInstall({ go, tool, gobin: tmpBin, env, logFile, log });
      const built = path.join(tmpBin, tool.goBin ?? tool.bin);
      if (code === 0 && isExecutable(built)) {
        fs.mkdirSync(dir, { recursive: true });
        if (tool.schemaFrom) copySchema(go, tool, dir);
        fs.renameSync(built, binary);
        log(`[tools] built ${tool.bin} ${tool.version} in ${fmtElapsed(elapsed)}`);
        return;
      }
      const more = i + 1 < attempts.length ? `; retrying with GOTOOLCHAIN=${FALLBACK_TOOLCHAIN}` : '';
      log(`[tools] go install ${tool.module}@${tool.version} failed (exit ${code})${more}\n${tailFile(logFile)}`);
    }
    throw new Error(`go install ${tool.module}@${tool.version} failed; see ${path.relative(REPO_ROOT, logFile)}`);
  } finally {
    fs.rmSync(tmpBin, { recursive: true, force: true });
  }
}

/**
 * Copies `tool.schemaFrom.dir` of the module just built (Go's module cache), or of
 * `schemaFrom.module@schemaFrom.version` (`go mod download`), into `dir/schema`.
 */
function copySchema(go, tool, dir) {
  const { module, version } = tool.schemaFrom;
  const moduleDir = version
    ? JSON.parse(execFileSync(go, ['mod', 'download', '-json', `${module}@${version}`], { encoding: 'utf8', cwd: os.tmpdir() })).Dir
    : path.join(execFileSync(go, ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim(), `${module}@${tool.version}`);
  const from = path.join(moduleDir, tool.schemaFrom.dir);
  if (!fs.existsSync(from)) throw new Error(`schema directory ${from} not found after building ${tool.bin}`);
  fs.cpSync(from, path.join(dir, 'schema'), { recursive: true });
}

/** The schema directory copied beside a tool's binary (`schemaFrom`), e.g. `…/temporal-server-v1.30.4/schema`. */
export function toolSchemaDir(key) {
  return path.join(toolCacheDir(TOOLS[key]), 'schema');
}

/** Points `<repo>/.tools/bin/<name>` at `target`, replacing any other link atomically. */
function link(name, target) {
  fs.mkdirSync(BIN_DIR, { recursive: true });
  const linkPath = path.join(BIN_DIR, name);
  try {
    if (fs.readlinkSync(linkPath) === target) return linkPath;
  } catch {
    /* missing or not a link */
  }
  const tmp = `${linkPath}.tmp-${process.pid}`;
  fs.rmSync(tmp, { force: true });
  fs.symlinkSync(target, tmp);
  fs.renameSync(tmp, linkPath);
  return linkPath;
}

async function ensureTool(tool, log) {
  const dir = toolCacheDir(tool);
  const binary = path.join(dir, tool.bin);
  const lockFile = `${dir}.lock`;
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  for (;;) {
    // Someone else (another checkout, a provisioning script) may be mid-build: wait for them.
    if (foreignGoInstalls(tool).length > 0 || fs.existsSync(lockFile)) {
      await waitForForeignBuild(tool, binary, lockFile, log);
    }
    if (isExecutable(binary)) return link(tool.bin, binary);
    const release = tryLock(lockFile);
    if (!release) continue; // lost the race: wait for the winner
    try {
      if (!isExecutable(binary)) await build(tool, binary, log);
    } finally {
      release();
    }
    return link(tool.bin, binary);
  }
}

/**
 * Makes sure the pinned Temporal CLI, stripe-mock and fake-gcs-server binaries exist,
 * building missing ones with `go install` (several minutes for Temporal; progress is logged
 * every 10 s). Concurrent callers share one build through a lock file.
 *
 * @param {{ log?: (line: string) => void, cluster?: boolean, k8s?: boolean }} [options] `log` receives progress
 *   lines (default: stderr); `cluster` also builds the cluster tools (Temporal server, SQL tool, UI server);
 *   `k8s` also builds the Kubernetes manifest validator (kubeconform).
 * @returns {Promise<{ temporal: string, stripeMock: string, fakeGcs: string, temporalServer?: string,
 *   temporalSqlTool?: string, temporalUiServer?: string, kubeconform?: string }>} absolute paths of the links in `<repo>/.tools/bin/`.
 * @throws {Error} when Go is missing or a build fails (message names the log under var/log/).
 */
export async function ensureTools({ log = (line) => process.stderr.write(`${line}\n`), cluster = false, k8s = false } = {}) {
  const result = {};
  // Sequential on purpose: the machine has 2 cores and each go build uses all of them.
  for (const [key, tool] of Object.entries(TOOLS)) {
    if (tool.cluster && !cluster) continue;
    if (tool.k8s && !k8s) continue;
    result[key] = await ensureTool(tool, log);
  }
  return result;
}

function isMain() {
  if (!process.argv[1]) return false;
  try {
    return fs.realpathSync(process.argv[1]) === fs.realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  const started = Date.now();
  // Without arguments every tool (CI); `--dev` only those the dev-server stack needs; `--k8s` those and kubeconform.
  const only = process.argv.includes('--dev') || process.argv.includes('--k8s');
  ensureTools({ cluster: !only, k8s: !only || process.argv.includes('--k8s') })
    .then((paths) => {
      for (const [key, p] of Object.entries(paths)) {
        process.stdout.write(`${TOOLS[key].bin.padEnd(16)} ${TOOLS[key].version.padEnd(9)} ${p} -> ${fs.realpathSync(p)}\n`);
      }
      process.stderr.write(`[tools] ready in ${fmtElapsed(Date.now() - started)}\n`);
    })
    .catch((err) => {
      process.stderr.write(`[tools] ${err.message}\n`);
      process.exit(1);
    });
}
