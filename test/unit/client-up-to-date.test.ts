/**
 * The typed client's types (`clients/typescript/schema.d.ts`) are generated from the OpenAPI
 * document; this regenerates them into a temporary directory with `scripts/client.ts` (what
 * `npm run client` runs) and requires the checked-in file to be byte-for-byte the same, so a
 * change to the document without a new client fails CI.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, runScript } from '../helpers/run';

jest.setTimeout(120_000);

test('when the client is regenerated from the current document, then it equals the checked-in clients/typescript/schema.d.ts', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'client-up-to-date-'));
  try {
    const run = await runScript('scripts/client.ts', [dir]);
    if (run.code !== 0) throw new Error(`scripts/client.ts exited with ${run.code}:\n${run.stderr}`);
    const fresh = fs.readFileSync(path.join(dir, 'schema.d.ts'));
    const checkedIn = fs.readFileSync(path.join(ROOT, 'clients', 'typescript', 'schema.d.ts'));
    if (!fresh.equals(checkedIn)) {
      const a = fresh.toString().split('\n');
      const b = checkedIn.toString().split('\n');
      const line = a.findIndex((l, i) => l !== b[i]);
      throw new Error(
        `clients/typescript/schema.d.ts is out of date with the OpenAPI document: run \`npm run client\` and commit the result ` +
          `(first difference at line ${line + 1}: generated ${JSON.stringify(a[line])}, checked in ${JSON.stringify(b[line])})`,
      );
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
