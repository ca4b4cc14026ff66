/**
 * `npm run client` (`tsx scripts/client.ts [outDir]`): regenerates the typed TypeScript client's
 * types, `clients/typescript/schema.d.ts` (or `<outDir>/schema.d.ts`), from the OpenAPI document
 * the app serves. `scripts/openapi.ts` writes the document (with the fixed server URL of
 * `npm run openapi:lint`, so the result does not depend on the local environment), then the
 * pinned openapi-typescript turns it into types. `clients/typescript/index.ts` is hand-written
 * and is not touched.
 *
 * test/unit/client-up-to-date.test.ts runs this into a temporary directory and compares the
 * result with the checked-in file, so CI fails when the document changes without a new client.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const BIN = path.join(ROOT, 'node_modules', '.bin');
/** The server URL written into the document (the lint's, see scripts/openapi.ts). */
const CLIENT_SERVER_URL = 'http://127.0.0.1:3000';

function main(): void {
  const outDir = path.resolve(process.argv[2] ?? path.join(ROOT, 'clients', 'typescript'));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-client-'));
  try {
    const doc = path.join(work, 'openapi.json');
    execFileSync(path.join(BIN, 'tsx'), [path.join(ROOT, 'scripts', 'openapi.ts'), '--server-url', CLIENT_SERVER_URL, doc], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    fs.mkdirSync(outDir, { recursive: true });
    const out = path.join(outDir, 'schema.d.ts');
    execFileSync(path.join(BIN, 'openapi-typescript'), [doc, '--output', out], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    console.log(`wrote ${path.relative(process.cwd(), out)}`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (require.main === module) {
  try {
    main();
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
