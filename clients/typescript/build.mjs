/**
 * Builds the package: `index.ts` compiled twice by the TypeScript compiler API, to ES modules
 * (`dist/esm`) and to CommonJS (`dist/cjs`), each with its `.d.ts` and the generated
 * `schema.d.ts`, and a `package.json` in each saying which it is (`"type"`), so Node and
 * TypeScript (NodeNext or Bundler) read each half as what it is; the package's `exports` points
 * `import` and `require` at them.
 *
 *   node build.mjs --pack <destination>  the package's tarball in <destination>: built and packed
 *                                        in a scratch directory (removed after), so nothing is
 *                                        written into the repository (`npm run package -- <dir>`)
 *   node build.mjs --package-dir <dir>   a complete package in <dir> (package.json, README.md, dist/)
 *   node build.mjs --refuse-pack         what `npm pack` in this folder runs (prepack): it stops
 *                                        with a pointer to --pack, before npm writes dist/ or a
 *                                        tarball here
 *
 * The compiler and Node's types come from the repository's node_modules (this package's
 * devDependencies name the same versions). A type error fails the build. Paths are resolved from
 * where the command was typed (`INIT_CWD` under `npm run`).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import ts from 'typescript';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: { 'package-dir': { type: 'string' }, pack: { type: 'string' }, 'refuse-pack': { type: 'boolean' } },
});
// Under `npm run package`, npm starts this in the package's folder and says where it was typed.
const cwd = process.env.npm_lifecycle_event === 'package' && process.env.INIT_CWD ? process.env.INIT_CWD : process.cwd();

if (values['refuse-pack']) {
  process.stderr.write(
    'npm pack here would write dist/ and the tarball into the repository: run `npm run package -- <destination>` ' +
      '(or `node build.mjs --pack <destination>`), which builds and packs in a scratch directory\n',
  );
  process.exit(1);
}
if (!values.pack && !values['package-dir']) {
  process.stderr.write('usage: node build.mjs --pack <destination> | --package-dir <dir>\n');
  process.exit(2);
}
if (values.pack && values['package-dir']) {
  process.stderr.write('--pack and --package-dir are exclusive\n');
  process.exit(2);
}

const scratch = values.pack ? fs.mkdtempSync(path.join(os.tmpdir(), 'insurance-coi-client-')) : undefined;
const packageDir = scratch ?? path.resolve(cwd, values['package-dir']);
if (packageDir === here || packageDir.startsWith(`${here}${path.sep}`)) {
  process.stderr.write('the package is built outside this folder: name another --package-dir\n');
  process.exit(2);
}
const dist = path.join(packageDir, 'dist');
fs.rmSync(dist, { recursive: true, force: true });

const common = {
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2023.d.ts'],
  types: ['node'],
  strict: true,
  noUncheckedIndexedAccess: true,
  declaration: true,
  esModuleInterop: true,
  skipLibCheck: true,
  noEmitOnError: true,
  forceConsistentCasingInFileNames: true,
  rootDir: here,
  newLine: ts.NewLineKind.LineFeed,
};
const builds = [
  // ES modules: `import` of the package (Node ESM, bundlers).
  { dir: 'esm', type: 'module', options: { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler } },
  // CommonJS: `require` of the package. NodeNext here emits CommonJS (this folder's package.json has no "type").
  { dir: 'cjs', type: 'commonjs', options: { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext } },
];

for (const build of builds) {
  const outDir = path.join(dist, build.dir);
  const options = { ...common, ...build.options, outDir };
  const host = ts.createCompilerHost(options);
  host.getCurrentDirectory = () => here;
  const program = ts.createProgram({ rootNames: [path.join(here, 'index.ts')], options, host });
  const result = program.emit();
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
  if (diagnostics.length || result.emitSkipped) {
    process.stderr.write(
      ts.formatDiagnosticsWithColorAndContext(diagnostics, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => here,
        getNewLine: () => '\n',
      }),
    );
    process.stderr.write(`build (${build.dir}) failed\n`);
    process.exit(1);
  }
  // The generated types are a .d.ts already: tsc does not copy it, index.d.ts imports it.
  fs.copyFileSync(path.join(here, 'schema.d.ts'), path.join(outDir, 'schema.d.ts'));
  fs.writeFileSync(path.join(outDir, 'package.json'), `${JSON.stringify({ type: build.type }, null, 2)}\n`);
}

// A package ready to pack: its manifest without the scripts that build it here.
const {
  scripts: _scripts,
  devDependencies: _devDependencies,
  ...manifest
} = JSON.parse(fs.readFileSync(path.join(here, 'package.json'), 'utf8'));
fs.writeFileSync(path.join(packageDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
fs.copyFileSync(path.join(here, 'README.md'), path.join(packageDir, 'README.md'));

if (scratch) {
  try {
    const destination = path.resolve(cwd, values.pack);
    fs.mkdirSync(destination, { recursive: true });
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const [packed] = JSON.parse(
      execFileSync(npm, ['pack', scratch, '--json', '--ignore-scripts', `--pack-destination=${destination}`], {
        cwd: os.tmpdir(),
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    process.stdout.write(`${path.join(destination, packed.filename)}\n`);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
} else {
  process.stdout.write(`built ${path.relative(cwd, packageDir) || '.'} (esm, cjs)\n`);
}
