/**
 * Test helper: the local OpenID Provider (scripts/local-idp.mjs, the one `npm run dev` runs) as a
 * child process on a free port, with the given users and one client for the portal at `appUrl`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports';

export interface LocalIdpUser {
  sub: string;
  email: string;
  name: string;
  password: string;
}

export interface LocalIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  stop(): Promise<void>;
}

/** Starts the provider and resolves once it listens; `port` and `clientSecret` when the app was already given them. */
export async function startLocalIdp(options: {
  users: LocalIdpUser[];
  appUrl: string;
  port?: number;
  clientSecret?: string;
}): Promise<LocalIdp> {
  const port = options.port ?? (await freePort());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'local-idp-'));
  const usersFile = path.join(dir, 'users.json');
  fs.writeFileSync(usersFile, JSON.stringify(options.users), { mode: 0o600 });
  const clientSecret = options.clientSecret ?? `test-secret-${port}-${Date.now()}`;
  const child: ChildProcess = spawn(
    process.execPath,
    [
      path.resolve(__dirname, '..', '..', 'scripts', 'local-idp.mjs'),
      '--port',
      String(port),
      '--users',
      usersFile,
      '--client-secret',
      clientSecret,
      '--redirect-uri',
      `${options.appUrl}/portal/callback`,
      '--post-logout-redirect-uri',
      `${options.appUrl}/portal/signed-out`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`local-idp did not start in 20 s: ${output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('local-idp ready')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`local-idp exited (${code}): ${output}`));
    });
  });
  return {
    issuer: `http://127.0.0.1:${port}`,
    clientId: 'coi-portal',
    clientSecret,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
