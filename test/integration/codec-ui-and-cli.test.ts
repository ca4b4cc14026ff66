/**
 * The codec endpoint used the way operators use it, with the real tools: the Temporal CLI
 * (`workflow show` and `workflow query` with `--codec-endpoint`/`--codec-auth`) and the Temporal
 * UI of a dev server started with `--ui-codec-endpoint` (the UI mount, `/codec/ui/<key>`), opened
 * in Chromium. Payloads of a real purchase run are encrypted on the server; through the codec an
 * operator reads its summary, input and `status` query in clear.
 *
 * This suite starts a Temporal dev server of its own (in memory, free ports): the UI's codec
 * endpoint is fixed when the server starts, and must name this suite's API.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import puppeteer, { type Browser } from 'puppeteer-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { startTestWorker, uniqueTaskQueue, eventually, type TestWorker } from '../helpers/worker';
import { checkout, createQuotingAccount } from '../helpers/purchases';
import { CHROMIUM_ARGS } from '../../src/pdf/browser-pool';
import { loadConfig } from '../../src/config';
import { freePort } from '../helpers/ports';

jest.setTimeout(180_000);

const run = promisify(execFile);
const REPO = path.resolve(__dirname, '../..');
const TEMPORAL = path.join(REPO, '.tools/bin/temporal');
const TOKEN = 'operator-codec-token-for-cli-tests-0123456789';
const UI_KEY = 'ui-codec-key-for-tests-0123456789abcdef';
const SEARCH_ATTRIBUTES = JSON.parse(fs.readFileSync(path.join(REPO, 'workflows/search-attributes.json'), 'utf8')) as Record<
  string,
  string
>;

let server: ChildProcess;
let grpc: string;
let uiUrl: string;
let app: TestApp;
let worker: TestWorker;
let browser: Browser | undefined;

/** Every payload in the CLI's JSON output as `encoding: text` lines (the JSON keeps payloads in base64). */
function payloadTexts(json: string): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (!v || typeof v !== 'object') return;
    const p = v as { metadata?: { encoding?: string }; data?: string };
    if (typeof p.metadata?.encoding === 'string' && typeof p.data === 'string') {
      out.push(`${Buffer.from(p.metadata.encoding, 'base64').toString()}: ${Buffer.from(p.data, 'base64').toString()}`);
      return;
    }
    for (const child of Object.values(v)) walk(child);
  };
  walk(JSON.parse(json));
  return out;
}

const cli = (args: string[]) => run(TEMPORAL, [...args, '--address', grpc, '--namespace', 'default'], { timeout: 30_000 });

beforeAll(async () => {
  const [grpcPort, uiPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  grpc = `127.0.0.1:${grpcPort}`;
  uiUrl = `http://127.0.0.1:${uiPort}`;
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  server = spawn(
    TEMPORAL,
    [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(grpcPort),
      '--ui-port',
      String(uiPort),
      '--log-level',
      'error',
      '--ui-codec-endpoint',
      `${apiUrl}/codec/ui/${UI_KEY}`,
      ...Object.entries(SEARCH_ATTRIBUTES).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]),
    ],
    { stdio: 'ignore' },
  );
  await eventually(
    async () =>
      (await cli(['operator', 'namespace', 'describe', 'default']).then(
        () => true,
        () => false,
      )) &&
      (await fetch(uiUrl).then(
        (r) => r.ok,
        () => false,
      )),
    60_000,
  );
  const env = { TEMPORAL_ADDRESS: grpc, TEMPORAL_NAMESPACE: 'default' };
  const taskQueue = uniqueTaskQueue();
  worker = await startTestWorker(taskQueue, {}, env);
  app = await startTestApp({
    ...env,
    PORT: String(apiPort),
    TEMPORAL_TASK_QUEUE: taskQueue,
    TEMPORAL_CODEC_TOKEN: TOKEN,
    TEMPORAL_CODEC_UI_KEY: UI_KEY,
    TEMPORAL_CODEC_CORS_ORIGINS: uiUrl,
  });
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await worker?.shutdown();
  server?.kill('SIGTERM');
});

test('when an operator runs workflow show and workflow query through the codec, then the purchase reads in clear; without it, it is encrypted', async () => {
  const account = await createQuotingAccount(app);
  const { purchaseId } = await checkout(app, account);
  const codec = ['--codec-endpoint', `${app.baseUrl}/codec`, '--codec-auth', `Bearer ${TOKEN}`];

  const plain = payloadTexts((await cli(['workflow', 'show', '--workflow-id', `purchase-${purchaseId}`, '--output', 'json'])).stdout);
  // (Search attributes and the SDK's patch markers are plain by design: ids, never buyer data.)
  expect(plain.filter((t) => t.startsWith('binary/encrypted: ')).length).toBeGreaterThan(2);
  expect(plain.join('\n')).not.toContain(`Purchase ${purchaseId} ·`);
  expect(plain.join('\n')).not.toContain('"purchaseId"');

  const shown = payloadTexts(
    (await cli(['workflow', 'show', '--workflow-id', `purchase-${purchaseId}`, '--output', 'json', ...codec])).stdout,
  );
  expect(shown.filter((t) => t.startsWith('binary/encrypted'))).toEqual([]);
  expect(shown).toContain(`json/plain: "Purchase ${purchaseId} · agency ${account.accountId} · test · USD 40.00"`);
  expect(shown.some((t) => t.startsWith(`json/plain: {"purchaseId":${purchaseId},`))).toBe(true);

  const queried = await cli([
    'workflow',
    'query',
    '--workflow-id',
    `purchase-${purchaseId}`,
    '--name',
    'status',
    '--output',
    'json',
    ...codec,
  ]);
  expect(queried.stdout).toMatch(/awaiting_payment|unpaid|pending/);
  expect(queried.stdout).toContain(`${purchaseId}`);

  // Each decode is logged with who asked (the token's fingerprint), never the payloads.
  const lines = app.logs.filter((l) => l.msg === 'codec request');
  expect(lines.length).toBeGreaterThan(0);
  expect(lines[0]).toMatchObject({ caller: 'cli-token', tokenFingerprint: expect.stringMatching(/^[0-9a-f]{8}$/), namespace: 'default' });
  expect(app.rawLogs()).not.toContain(TOKEN);
});

test('when an operator opens a purchase in the Temporal UI configured with the codec endpoint, then its summary and input show decoded', async () => {
  const account = await createQuotingAccount(app);
  const { purchaseId } = await checkout(app, account);
  const config = loadConfig(process.env);
  browser = await puppeteer.launch({ executablePath: config.CHROMIUM_PATH, headless: true, pipe: true, args: [...CHROMIUM_ARGS] });
  const page = await browser.newPage();
  // The UI keeps polling the server, so the network never goes idle: wait for the text instead.
  await page.goto(`${uiUrl}/namespaces/default/workflows/purchase-${purchaseId}`, { waitUntil: 'domcontentloaded', timeout: 60_000 });
  // Browser-side code as strings: this project compiles without the DOM library.
  await page.waitForFunction(
    `document.body.innerText.includes(${JSON.stringify(`Purchase ${purchaseId} · agency ${account.accountId}`)})`,
    { timeout: 30_000 },
  );
  const text = String(await page.evaluate('document.body.innerText'));
  expect(text).toContain(`Purchase ${purchaseId} · agency ${account.accountId} · test`);
  expect(text).toMatch(new RegExp(`"purchaseId":\\s*${purchaseId}`));
  expect(text).not.toContain('binary/encrypted');
  // The UI called the UI mount (CORS from its origin), and the API logged it as the UI's.
  expect(app.logs.some((l) => l.msg === 'codec request' && l.caller === 'temporal-ui' && l.origin === uiUrl)).toBe(true);
});
