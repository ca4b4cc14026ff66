/**
 * The typed client as an agency installs it (issue 30, item 3): `clients/typescript` is built
 * (build.mjs: ESM + CommonJS + .d.ts) and packed as the README says (`npm run package --
 * <destination>`, which writes nothing into the repository: issue 48, item 10), installed by path into a scratch
 * project offline (its dependency openapi-fetch is packed from this repository's node_modules, so
 * nothing comes from a registry), and every TypeScript example of clients/typescript/README.md
 * (the fenced ```ts <file> blocks) is written into that project and compiled by tsc under
 * `moduleResolution: NodeNext` (emitting) and `Bundler`, with the package's own declarations
 * checked (skipLibCheck off), next to a file of type assertions that fail if the types were
 * `any` or request bodies required defaulted fields. Then the compiled examples run against a
 * running API and worker: the quickstart (account, question set, product, buyer, quote, test
 * payment, certificates, an ApiError), the CommonJS one, the retries one, and the webhook
 * receiver, which must verify and print the purchase's real signed events (and refuse a forged
 * one). The stored events of that purchase match their webhook schemas field for field.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, type TestApp } from '../helpers/app';
import { startTestWorker, uniqueTaskQueue, eventually, type TestWorker } from '../helpers/worker';
import { WEBHOOK_SECRET } from '../helpers/purchases';
import { createAgency, type Agency } from '../helpers/certificates';
import { call } from '../helpers/fixtures';
import { freePort } from '../helpers/ports';
import { ROOT } from '../helpers/run';
import { AGENCY_EVENT_SCHEMAS } from '../../src/events/schemas';
import type { AgencyEventType } from '../../src/events/types';

jest.setTimeout(600_000);

const TSC = path.join(ROOT, 'node_modules', '.bin', 'tsc');
const PACKAGE = '@insurance-coi/client';

let worker: TestWorker;
let app: TestApp;
let agency: Agency;
let dir: string;
let project: string;
let tarball: string;
let packed: { filename: string; files: { path: string }[] }[];
/** The client's folder in the repository, and what git says of it before the package is built. */
const CLIENT_DIR = path.join(ROOT, 'clients', 'typescript');
let clientDirBefore: { files: string[]; status: string };
const children: ChildProcess[] = [];

interface Run {
  code: number | string;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion (never rejects: the exit code is in the result). */
async function run(cmd: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeout?: number }): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(cmd, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      timeout: options.timeout ?? 240_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string; signal?: string };
    return { code: e.code ?? e.signal ?? 'failed', stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

async function mustRun(cmd: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeout?: number }): Promise<string> {
  const r = await run(cmd, args, options);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.code}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** npm without the network: no registry to reach, a cache of its own. */
const npmArgs = () => [
  '--offline',
  '--no-audit',
  '--no-fund',
  '--ignore-scripts',
  '--registry=http://127.0.0.1:9/',
  `--cache=${path.join(dir, 'npm-cache')}`,
];

/** The ```ts <file> blocks of the client's README, by file name. */
function readmeExamples(): Map<string, string> {
  const readme = fs.readFileSync(path.join(ROOT, 'clients', 'typescript', 'README.md'), 'utf8');
  const blocks = new Map<string, string>();
  for (const m of readme.matchAll(/^```ts (\S+)\n([\s\S]*?)^```$/gm)) blocks.set(m[1]!, m[2]!);
  return blocks;
}

/** Assertions on the package's types: each @ts-expect-error line must be an error, so `any` types or required defaults fail the compile. */
const TYPE_ASSERTIONS = `
import { createApiClient, constructEvent, selectedProductLine, type InputSchema, type RequestBody, type Schema, type WebhookEvent, type WebhookEventOf } from '${PACKAGE}';

const api = createApiClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'ik_test_x', maxNetworkRetries: 0 });
export const calls = () => [
  // @ts-expect-error: no such path
  api.GET('/api/v1/no_such_path'),
  // @ts-expect-error: a product needs a customerName
  api.POST('/api/v1/products', { body: { defaultPrice: 1 } }),
  // The service fills in \`outcome\`: a body without it is fine.
  api.POST('/api/v1/test_helpers/purchases/{id}/pay', { params: { path: { id: '1' } }, body: {} }),
];

// A request leaves out what the service defaults; an answer always has it.
const question: InputSchema<'DropdownQuestion'> = { id: 'q', kind: 'dropdown', label: 'Q', options: [{ value: 'a', label: 'A' }] };
// @ts-expect-error: an answered question has \`required\` and each option its \`price_factor\`
export const answered: Schema<'DropdownQuestion'> = question;
export const body: RequestBody<'/api/v1/question_sets', 'post'> = { name: 'n', definition: { version: 1, questions: [question] } };

// Events narrow on \`type\`.
export function amount(event: WebhookEvent): number {
  if (event.type === 'certificates.issued') return event.data.object.certificate_count;
  if (event.type === 'purchase.paid') {
    // @ts-expect-error: a purchase has no certificates
    return event.data.object.certificates;
  }
  return 0;
}
export const paid: WebhookEventOf<'purchase.paid'>['data']['object']['amount_total'] = 1;
// @ts-expect-error: not an event type
export type Nope = WebhookEventOf<'purchase.teleported'>['data'];
export const verify = (raw: string, header: string) => constructEvent(raw, header, 'whsec_x').id;

// A bundle is one selected line with \`product_line_is_bundle\`; the fixed keys keep their types.
export const bundleLine: Schema<'SelectedProductLine'> = selectedProductLine(
  { product_line_template_id: 1, product_line_is_bundle: true, product_line_is_trip_excess_product: false },
  { event_type: 'wedding' },
);
// @ts-expect-error: product_line_is_bundle is a boolean
export const notABundle = selectedProductLine({ product_line_template_id: 1, product_line_is_bundle: 'yes', product_line_is_trip_excess_product: false }, {});
`;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'client-package-'));
  project = path.join(dir, 'project');
  const stack = (async () => {
    const taskQueue = uniqueTaskQueue();
    worker = await startTestWorker(taskQueue);
    app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, RATE_LIMIT_PER_MINUTE: '100000' });
    agency = await createAgency(app);
  })();

  // Build and pack the client as its README says (from its folder, into a destination outside the
  // repository), pack openapi-fetch with its one dependency from node_modules, install offline.
  clientDirBefore = await clientDirState();
  tarball = (await mustRun('npm', ['run', 'package', ...npmArgs(), '--', path.join(dir, 'packed')], { cwd: CLIENT_DIR }))
    .trim()
    .split('\n')
    .pop()!;
  const deps = ['openapi-fetch', 'openapi-typescript-helpers'].map((d) => path.join(ROOT, 'node_modules', d));
  packed = JSON.parse(await mustRun('npm', ['pack', ...deps, '--json', `--pack-destination=${dir}`, ...npmArgs()], { cwd: dir }));
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'agency-server', private: true, type: 'module' }, null, 2));
  await mustRun('npm', ['install', tarball, ...packed.map((p) => path.join(dir, p.filename)), ...npmArgs()], { cwd: project });

  for (const [file, source] of readmeExamples()) fs.writeFileSync(path.join(project, file), source);
  fs.writeFileSync(path.join(project, 'type-assertions.ts'), TYPE_ASSERTIONS);
  const compilerOptions = {
    target: 'es2022',
    strict: true,
    skipLibCheck: false,
    types: ['node'],
    typeRoots: [path.join(ROOT, 'node_modules', '@types')],
  };
  fs.writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: { ...compilerOptions, module: 'nodenext', moduleResolution: 'nodenext', outDir: 'out' },
        include: ['*.ts', '*.cts'],
      },
      null,
      2,
    ),
  );
  fs.writeFileSync(
    path.join(project, 'tsconfig.bundler.json'),
    JSON.stringify(
      { compilerOptions: { ...compilerOptions, module: 'esnext', moduleResolution: 'bundler', noEmit: true }, include: ['*.ts', '*.cts'] },
      null,
      2,
    ),
  );
  await stack;
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await app?.close();
  await worker?.shutdown();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The files of the client's folder (ignored ones included) and `git status --ignored` of it. */
async function clientDirState(): Promise<{ files: string[]; status: string }> {
  const status = await mustRun('git', ['status', '--porcelain', '--ignored', '--untracked-files=all', '--', '.'], { cwd: CLIENT_DIR });
  // Only what git calls ignored or untracked: other engineers' edits of tracked files are not ours to judge.
  return {
    files: fs.readdirSync(CLIENT_DIR).sort(),
    status: status
      .split('\n')
      .filter((l) => l.startsWith('??') || l.startsWith('!!'))
      .join('\n'),
  };
}

test('when the client is packaged as its README says, then only the tarball is written, outside the repository, and a plain npm pack in its folder writes nothing', async () => {
  expect(path.dirname(tarball)).toBe(path.join(dir, 'packed'));
  expect(fs.readdirSync(path.join(dir, 'packed'))).toEqual([path.basename(tarball)]);
  expect(path.basename(tarball)).toMatch(/^insurance-coi-client-\d+\.\d+\.\d+\.tgz$/);
  expect(await clientDirState()).toEqual(clientDirBefore);

  // npm pack in the folder (scripts on, as a user would run it; the tarball, were one made, goes to the scratch directory).
  const inPlace = await run(
    'npm',
    ['pack', `--pack-destination=${path.join(dir, 'in-place')}`, ...npmArgs().filter((a) => a !== '--ignore-scripts')],
    {
      cwd: CLIENT_DIR,
    },
  );
  expect(inPlace.code).not.toBe(0);
  expect(inPlace.stderr).toMatch(/npm run package -- <destination>/);
  expect(fs.existsSync(path.join(dir, 'in-place'))).toBe(false);
  expect(await clientDirState()).toEqual(clientDirBefore);
});

test('when the package is packed, then it ships ESM and CommonJS builds with declarations behind its exports, and both load', async () => {
  const listing = await mustRun('tar', ['-tzf', tarball], { cwd: dir });
  expect(
    listing
      .split('\n')
      .filter(Boolean)
      .map((f) => f.replace(/^package\//, ''))
      .sort(),
  ).toEqual([
    'README.md',
    'dist/cjs/index.d.ts',
    'dist/cjs/index.js',
    'dist/cjs/package.json',
    'dist/cjs/schema.d.ts',
    'dist/esm/index.d.ts',
    'dist/esm/index.js',
    'dist/esm/package.json',
    'dist/esm/schema.d.ts',
    'package.json',
  ]);
  const manifest = JSON.parse(fs.readFileSync(path.join(project, 'node_modules', PACKAGE, 'package.json'), 'utf8'));
  expect(manifest).toMatchObject({
    name: PACKAGE,
    version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
    dependencies: { 'openapi-fetch': '0.17.0' },
  });
  expect(manifest.exports['.']).toEqual({
    import: { types: './dist/esm/index.d.ts', default: './dist/esm/index.js' },
    require: { types: './dist/cjs/index.d.ts', default: './dist/cjs/index.js' },
  });
  const names = ['createApiClient', 'ok', 'constructEvent', 'retryingFetch', 'ApiError', 'WebhookSignatureError'];
  const esm = await mustRun(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const m = await import('${PACKAGE}'); console.log(JSON.stringify(${JSON.stringify(names)}.map((n) => typeof m[n])))`,
    ],
    { cwd: project },
  );
  const cjs = await mustRun(
    process.execPath,
    [
      '-e',
      `const m = require('${PACKAGE}'); console.log(JSON.stringify(${JSON.stringify(names)}.map((n) => typeof m[n])), require.resolve('${PACKAGE}'))`,
    ],
    { cwd: project },
  );
  expect(JSON.parse(esm)).toEqual(names.map(() => 'function'));
  expect(cjs).toContain(JSON.stringify(names.map(() => 'function')));
  expect(cjs).toContain(path.join('dist', 'cjs', 'index.js'));
});

test('when the README examples and the type assertions are compiled with moduleResolution NodeNext and Bundler, then tsc reports nothing', async () => {
  expect([...readmeExamples().keys()]).toEqual(['quickstart.ts', 'bundle.ts', 'account.cts', 'retries.ts', 'webhooks.ts']);
  const [nodeNext, bundler] = await Promise.all([
    run(TSC, ['-p', 'tsconfig.json'], { cwd: project }),
    run(TSC, ['-p', 'tsconfig.bundler.json'], { cwd: project }),
  ]);
  expect({ code: nodeNext.code, out: nodeNext.stdout + nodeNext.stderr }).toEqual({ code: 0, out: '' });
  expect({ code: bundler.code, out: bundler.stdout + bundler.stderr }).toEqual({ code: 0, out: '' });
  expect(fs.readdirSync(path.join(project, 'out')).sort()).toEqual([
    'account.cjs',
    'bundle.js',
    'quickstart.js',
    'retries.js',
    'type-assertions.js',
    'webhooks.js',
  ]);
});

test('when the compiled README examples run against the service, then the purchase is quoted, paid and certified, and the receiver verifies its signed events', async () => {
  const out = path.join(project, 'out');
  expect(fs.existsSync(path.join(out, 'quickstart.js'))).toBe(true);
  const env = { BASE_URL: app.baseUrl, API_KEY: agency.key };

  // The receiver of webhooks.ts, registered as a test-mode endpoint for every event type.
  const port = await freePort();
  const endpoint = await call(app.baseUrl, '/api/v1/webhook_endpoints', {
    method: 'POST',
    key: agency.key,
    body: { url: `http://127.0.0.1:${port}/hooks`, enabled_events: ['*'] },
  });
  expect(endpoint.status).toBe(201);
  const receiver = spawn(process.execPath, [path.join(out, 'webhooks.js')], {
    cwd: project,
    env: { ...process.env, PORT: String(port), WEBHOOK_SECRET: endpoint.body.data.secret },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(receiver);
  let heard = '';
  receiver.stdout!.on('data', (d: Buffer) => (heard += d.toString()));
  receiver.stderr!.on('data', (d: Buffer) => (heard += d.toString()));
  await eventually(async () => heard.includes('listening'), 30_000);

  const quickstart = await run(process.execPath, [path.join(out, 'quickstart.js')], { cwd: project, env, timeout: 200_000 });
  expect({ code: quickstart.code, stderr: quickstart.stderr }).toEqual({ code: 0, stderr: '' });
  const purchaseId = Number(/^purchase (\d+): \d+ usd at http/m.exec(quickstart.stdout)?.[1]);
  expect(purchaseId).toBeGreaterThan(0);
  const certificates = [...quickstart.stdout.matchAll(/^certificate (COI-\S+) (\d{4}-\d{2}-\d{2}) http/gm)].map((m) => m[1]!);
  expect(certificates).toHaveLength(2); // two covered days
  expect(quickstart.stdout).toMatch(/^error 404 NOT_FOUND$/m);

  // The receiver printed the purchase's events, each verified by constructEvent (an unverified one is answered 400 and not printed).
  await eventually(
    async () =>
      heard.includes(`paid ${purchaseId}:`) && certificates.every((c) => heard.includes(`issued ${c} for purchase ${purchaseId}`)),
    60_000,
  );
  expect(heard).toMatch(new RegExp(`^paid ${purchaseId}: \\d+ usd$`, 'm'));
  expect(heard).toMatch(/^purchase\.checkout_created evt_[0-9a-f]{32}$/m);
  const body = JSON.stringify({ id: 'evt_forged', type: 'purchase.paid', data: { object: { id: purchaseId } } });
  const forged = await fetch(`http://127.0.0.1:${port}/hooks`, {
    method: 'POST',
    body,
    headers: { Signature: `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` },
  });
  expect({ status: forged.status, text: await forged.text() }).toEqual({
    status: 400,
    text: expect.stringMatching(/No signature matches/),
  });
  expect(heard).not.toContain('evt_forged');

  // What the service recorded for this purchase (and sent) matches each type's webhook schema, field for field.
  const events = (await call(app.baseUrl, '/api/v1/events?pageSize=100&pageIndex=0', { key: agency.key })).body.data.filter(
    (e: any) => e.data.object.id === purchaseId || e.data.object.purchase_id === purchaseId,
  );
  expect(events.map((e: any) => e.type).sort()).toEqual(['certificates.issued', 'purchase.checkout_created', 'purchase.paid']);
  for (const e of events) {
    const schema = AGENCY_EVENT_SCHEMAS[e.type as AgencyEventType];
    const parsed = schema.safeParse(e);
    expect({ type: e.type, issues: parsed.success ? [] : parsed.error.issues }).toEqual({ type: e.type, issues: [] });
    const objectShape = (schema.shape.data.shape.object as unknown as { shape: Record<string, unknown> }).shape;
    expect({ type: e.type, keys: Object.keys(e.data.object).sort() }).toEqual({ type: e.type, keys: Object.keys(objectShape).sort() });
  }

  // The CommonJS example and the retries example.
  const account = await run(process.execPath, [path.join(out, 'account.cjs')], { cwd: project, env });
  expect({ code: account.code, stdout: account.stdout.trim(), stderr: account.stderr }).toEqual({
    code: 0,
    stdout: `account ${agency.slug}: a test key`,
    stderr: '',
  });
  const retries = await run(process.execPath, [path.join(out, 'retries.js')], { cwd: project, env });
  expect({ code: retries.code, stderr: retries.stderr }).toEqual({ code: 0, stderr: '' });
  expect(retries.stdout.trim()).toMatch(/^products \d+$/);
});
