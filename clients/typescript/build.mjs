/**
 * Builds the package: `index.ts` compiled twice by the TypeScript compiler API, to ES modules
 * (`dist/esm`) and to CommonJS (`dist/cjs`), each with its `.d.ts` and the generated
 * `schema.d.ts`, and a `package.json` in each saying which it is (`"type"`), so Node and
 * TypeScript (NodeNext or Bundler) read each half as what it is; the package's `exports` points
 * `import` and `require` at them.
 *
 *   node build.mjs                       dist/ here (what `npm pack` / `npm publish` ship; prepack)
 *   node build.mjs --package-dir <dir>   a complete package in <dir> (package.json, README.md, dist/)
 *   node build.mjs --clean               removes dist/ here (postpack)
 *
 * The compiler and Node's types come from the repository's node_modules (this package's
 * devDependencies name the same versions). A type error fails the build.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import ts from 'typescript';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { 'package-dir': { type: 'string' }, clean: { type: 'boolean' } } });

if (values.clean) {
  fs.rmSync(path.join(here, 'dist'), { recursive: true, force: true });
  process.exit(0);
}

const packageDir = path.resolve(values['package-dir'] ?? here);
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

if (packageDir !== here) {
  // A package ready to pack: its manifest without the scripts that build it here.
  const {
    scripts: _scripts,
    devDependencies: _devDependencies,
    ...manifest
  } = JSON.parse(fs.readFileSync(path.join(here, 'package.json'), 'utf8'));
  fs.writeFileSync(path.join(packageDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  fs.copyFileSync(path.join(here, 'README.md'), path.join(packageDir, 'README.md'));
}
process.stdout.write(`built ${path.relative(process.cwd(), dist) || 'dist'} (esm, cjs)\n`);
