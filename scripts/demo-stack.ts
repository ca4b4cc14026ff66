/**
 * Where `npm run demo` runs (scripts/demo.ts): the settings of the stack it talks to (DEMO_*
 * variables, else `var/dev-credentials.json` of `npm run dev`), whether that API answers, and
 * starting `npm run dev` when it does not.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const env = process.env;
const say = (line: string) => process.stdout.write(`${line}\n`);

export interface Settings {
  baseUrl: string;
  apiKey: string;
  teammateUuid: string;
  rootUuid: string;
  rootAccountId: number;
  sellerSlug: string;
  temporalUi: string;
  namespace: string;
  outputDir: string;
}

/** The stack's settings. @throws {Error} naming the first one missing. */
export function readSettings(): Settings {
  const file = path.join(ROOT, 'var', 'dev-credentials.json');
  const creds = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : null;
  const account = creds?.accounts?.[0];
  const pick = (name: string, fromFile: unknown): string => {
    const v = env[name] ?? fromFile;
    if (typeof v !== 'string' || v === '')
      throw new Error(`${name} is not set and var/dev-credentials.json does not have it (run npm run dev first)`);
    return v;
  };
  return {
    baseUrl: pick('DEMO_BASE_URL', creds?.baseUrl ?? 'http://127.0.0.1:3000'),
    apiKey: pick('DEMO_API_KEY', account?.testApiKey),
    teammateUuid: pick('DEMO_TEAMMATE_UUID', account?.idpTeammateUuid),
    rootUuid: pick('DEMO_ROOT_UUID', account?.idpRootAccountUuid),
    rootAccountId: Number(pick('DEMO_ROOT_ACCOUNT_ID', account?.rootAccountId === undefined ? undefined : String(account.rootAccountId))),
    sellerSlug: pick('DEMO_SELLER_SLUG', account?.slug),
    temporalUi: env.DEMO_TEMPORAL_UI ?? creds?.temporalUiUrl ?? 'http://127.0.0.1:8233',
    namespace: env.DEMO_NAMESPACE ?? 'default',
    outputDir: path.resolve(ROOT, env.DEMO_OUTPUT_DIR ?? 'demo-output'),
  };
}

export async function ready(baseUrl: string): Promise<boolean> {
  try {
    return (await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(3000) })).ok;
  } catch {
    return false;
  }
}

/** Starts `npm run dev` and waits (up to 30 min: a cold machine builds the Go tools) for the API. */
export async function startDevStack(baseUrl: string): Promise<ChildProcess> {
  say('  the API does not answer: starting `npm run dev` (the first run on a machine builds tools and takes minutes)');
  const child = spawn('npm', ['run', 'dev'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const log = fs.createWriteStream(path.join(ROOT, 'var', 'demo-dev.log'));
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  const deadline = Date.now() + 30 * 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`npm run dev exited with ${child.exitCode}; see var/demo-dev.log`);
    if (fs.existsSync(path.join(ROOT, 'var', 'dev-credentials.json')) && (await ready(baseUrl))) return child;
    await new Promise((r) => setTimeout(r, 2000));
  }
  throw new Error('npm run dev was not ready within 30 minutes; see var/demo-dev.log');
}
