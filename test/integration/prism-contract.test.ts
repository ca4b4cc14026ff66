/**
 * The service answers as its OpenAPI document says: Prism (`prism proxy --errors`, pinned
 * @stoplight/prism-cli) stands in front of a test app with the document the app serves, and
 * checks every request it forwards and every answer it gets back against the document. With
 * `--errors` a request or answer that does not match the document is answered with Prism's own
 * error (`application/problem+json`, `type` https://stoplight.io/prism/errors#…) and logged.
 *
 * Traffic through Prism: the whole of `npm run demo` (DEMO_BASE_URL points at Prism; the demo's
 * event receiver is called by the worker and its downloads go to signed storage URLs, so those
 * bypass Prism), one signed `POST /webhooks/payproc`, and `GET /verify/<certificate number>`
 * asking for JSON and for HTML. Zero violations: the demo exits 0 (it stops at any non-2xx),
 * no answer is a Prism error, and Prism's output names no violation.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestApp } from '../helpers/app';
import { useAgencyStack } from '../helpers/stack';
import { checkout, createQuotingAccount, deliverWebhook, sessionCompletedEvent } from '../helpers/purchases';
import type { Agency } from '../helpers/certificates';
import { call } from '../helpers/fixtures';
import { demoScriptEnv, ROOT, runScript } from '../helpers/run';
import { freePort } from '../helpers/ports';
import { eventually } from '../helpers/worker';

jest.setTimeout(300_000);

const PRISM = path.join(ROOT, 'node_modules', '.bin', 'prism');

const stack = useAgencyStack();
let app: TestApp;
let agency: Agency;
let dir: string;
type Prism = { url: string; child: ChildProcess; output: () => string };
let prism: Prism | undefined;
let tampered: Prism | undefined;

/** Starts `prism proxy --errors <document> <upstream>` and resolves once it listens. */
async function startPrism(document: string, upstream: string): Promise<Prism> {
  const port = await freePort();
  const child = spawn(PRISM, ['proxy', '--errors', document, upstream, '--host', '127.0.0.1', '--port', String(port)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  try {
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`prism exited with ${child.exitCode} before it listened:\n${out}`);
      return /Prism is listening/.test(out);
    }, 120_000);
  } catch (err) {
    if (child.exitCode === null) {
      process.kill(-child.pid!, 'SIGKILL');
      throw new Error(`prism did not listen within 120 s:\n${out}`);
    }
    throw err;
  }
  return { url, child, output: () => out };
}

/** Whether Prism's output shows a line matching `re` within 5 s (it logs a request's end after answering). */
async function logged(p: Prism, re: RegExp): Promise<boolean> {
  const seen = () =>
    p
      .output()
      .split('\n')
      .some((l) => re.test(l));
  return eventually(async () => seen(), 5000).catch(() => false);
}

/**
 * Prism's own error instead of the service's answer (problem+json with a prism/errors type), or
 * the violations Prism attached to a forwarded answer (`sl-violations`, e.g. warnings).
 */
function prismError(res: { headers: Headers; text: string; body?: any }): string | undefined {
  const violations = res.headers.get('sl-violations');
  if (violations) return violations;
  const type = res.headers.get('content-type') ?? '';
  if (type.includes('application/problem+json') && String(res.body?.type ?? '').includes('stoplight.io/prism/errors')) return res.text;
  return undefined;
}

beforeAll(async () => {
  ({ app, agency } = stack);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-contract-'));
  // The document the app serves, as a file for Prism.
  const doc = await call(app.baseUrl, '/openapi.json');
  if (doc.status !== 200) throw new Error(`GET /openapi.json answered ${doc.status}`);
  fs.writeFileSync(path.join(dir, 'openapi.json'), doc.text);
  prism = await startPrism(path.join(dir, 'openapi.json'), app.baseUrl);
});

async function stopPrism(p: Prism | undefined): Promise<void> {
  if (!p?.child.pid || p.child.exitCode !== null) return;
  const exited = new Promise((r) => p.child.once('exit', r));
  process.kill(-p.child.pid, 'SIGTERM');
  await exited;
}

afterAll(async () => {
  await stopPrism(prism);
  await stopPrism(tampered);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('when the demo, a signed payment webhook and /verify go through prism proxy --errors, then Prism finds 0 violations', async () => {
  const url = prism!.url;
  const run = await runScript(
    'scripts/demo.ts',
    [],
    await demoScriptEnv(app, agency, { baseUrl: url, outputDir: path.join(dir, 'demo-output') }),
  );
  const problems: string[] = [];
  if (run.code !== 0) problems.push(`demo exited ${run.code}: ${run.stderr.slice(-2000)}`);
  expect(run.stdout).toContain('✔ demo finished');

  // The payment webhook, signed as the processor signs it, for a purchase awaiting payment.
  const quoting = await createQuotingAccount(app);
  const { purchaseId, sessionId } = await checkout(app, quoting);
  const hook = await deliverWebhook({ baseUrl: url } as TestApp, sessionCompletedEvent(purchaseId, sessionId));
  if (prismError(hook)) problems.push(`POST /webhooks/payproc: ${prismError(hook)}`);
  expect({ status: hook.status, received: hook.body?.received }).toEqual({ status: 200, received: true });

  // The public verification page of one of the demo's certificates, as JSON and as HTML.
  const number = /\b(COI-[A-Z0-9-]+)\s/.exec(run.stdout)?.[1];
  expect(number).toBeDefined();
  for (const accept of ['application/json', 'text/html']) {
    const res = await call(url, `/verify/${number}`, { headers: { accept } });
    if (prismError(res)) problems.push(`GET /verify (${accept}): ${prismError(res)}`);
    expect({ accept, status: res.status, type: res.headers.get('content-type')?.split(';')[0] }).toEqual({
      accept,
      status: 200,
      type: accept,
    });
  }

  // Prism logs each violation it found (with --errors it also answered with it).
  const output = prism!.output();
  const violations = output.split('\n').filter((l) => /violation|prism\/errors#/i.test(l));
  expect({ problems, violations }).toEqual({ problems: [], violations: [] });
  // Prism did see the traffic: it proxied the demo's calls and the webhook.
  expect(output).toMatch(/POST .*\/api\/v1\/webhook_endpoints/);
  expect(output).toMatch(/POST .*\/webhooks\/payproc/);
});

test('when a request or an answer does not match the document, then this Prism answers its violation error (so the check above can fail)', async () => {
  // A request against the document: a product without its required defaultPrice.
  const bad = await call(prism!.url, '/api/v1/products', { method: 'POST', key: agency.key, body: { customerName: 'No price' } });
  expect({ status: bad.status, type: bad.body?.type, prismError: prismError(bad) !== undefined }).toEqual({
    status: 422,
    type: 'https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY',
    prismError: true,
  });
  expect(await logged(prism!, /post \/api\/v1\/products .*prism\/errors#UNPROCESSABLE_ENTITY/)).toBe(true);

  // An answer against the document: a copy whose Health schema requires a property the service never sends.
  const doc = JSON.parse(fs.readFileSync(path.join(dir, 'openapi.json'), 'utf8'));
  doc.components.schemas.Health.properties.never_sent = { type: 'string' };
  doc.components.schemas.Health.required = [...(doc.components.schemas.Health.required ?? []), 'never_sent'];
  fs.writeFileSync(path.join(dir, 'tampered.json'), JSON.stringify(doc));
  tampered = await startPrism(path.join(dir, 'tampered.json'), app.baseUrl);
  const res = await call(tampered.url, '/healthz');
  expect({ status: res.status, type: res.body?.type, prismError: prismError(res) !== undefined }).toEqual({
    status: 500,
    type: 'https://stoplight.io/prism/errors#VIOLATIONS',
    prismError: true,
  });
  expect(JSON.stringify(res.body.validation)).toContain('never_sent');
  expect(await logged(tampered, /get \/healthz .*prism\/errors#VIOLATIONS/)).toBe(true);
});
