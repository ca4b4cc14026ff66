/**
 * The docs a newcomer reads (README.md and docs/*.md) against the code: every `npm run <script>`
 * they quote is a script of package.json, every `npm run ops -- <verb>` a command scripts/ops.ts
 * dispatches, every environment variable they present as a setting is one the service or the
 * project's own scripts read, and their relative links (README's to docs/ first) point at files
 * and headings that exist. The config keys are read as test/unit/env-example.test.ts reads them
 * (the schema's two-space keys of src/config.ts, the `KEY=` lines of .env.example), and the
 * scripts as test/unit/alerts.test.ts reads them for the runbook.
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const read = (rel: string) => fs.readFileSync(path.join(ROOT, rel), 'utf8');

/** README.md and every docs/*.md, by path from the repository's root. */
const DOCS = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const docs = DOCS.map((file) => ({ file, text: read(file) }));

const SCRIPTS = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);

/** The verbs scripts/ops.ts dispatches: each `command === '<verb>'` (or `!==`) its main() compares. */
const OPS_VERBS = [...new Set([...read('scripts/ops.ts').matchAll(/\bcommand [!=]== '([a-z][a-z-]*)'/g)].map((m) => m[1]!))];

/** UPPER_SNAKE names of settings, for the env variable checks. */
const NAME = '[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*';

/** Keys of the config schema (src/config.ts) and of .env.example, as env-example.test.ts reads them. */
const CONFIG_KEYS = new Set([
  ...[...read('src/config.ts').matchAll(/^ {2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!),
  ...[...read('.env.example').matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!),
]);

/** Code files of the project (not node_modules, not generated output). */
function codeFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') out.push(...codeFiles(rel));
    } else if (/\.(ts|mts|cts|js|mjs|cjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/** Variables the project's own processes, scripts and tests read from their environment (`env.X`, `env['X']`). */
const READ_BY_CODE = new Set(
  ['src', 'scripts', 'test', 'workflows', 'activities']
    .flatMap(codeFiles)
    .concat(fs.readdirSync(ROOT).filter((f) => /^jest.*\.(js|mjs)$/.test(f)))
    .filter((file) => file !== path.relative(ROOT, __filename))
    .flatMap((file) => [...read(file).matchAll(new RegExp(`\\benv(?:\\.(${NAME})\\b|\\[\\s*['"\`](${NAME})['"\`]\\s*\\])`, 'g'))])
    .map((m) => (m[1] ?? m[2])!),
);

/** Read by software the service runs on, not by the project's code: the Google client library, glibc, the Go runtime. */
const EXTERNAL = new Set(['GOOGLE_APPLICATION_CREDENTIALS', 'MALLOC_ARENA_MAX', 'GOGC', 'GOMEMLIMIT', 'GODEBUG']);

/** The text outside fenced code blocks, and the lines inside them. */
function split(text: string): { prose: string; code: string[] } {
  const prose: string[] = [];
  const code: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else (fenced ? code : prose).push(line);
  }
  return { prose: prose.join('\n'), code };
}

/**
 * The UPPER_SNAKE variables a document presents as settings: `VAR=…` in an inline code span or
 * before a command in a code block (`VAR=1 npm test`; a shell variable on a line of its own, such as
 * `BASE=http://…`, is not a setting), the names in the first cell of a table row and in the lead of
 * a list item (`- \`VAR\`: …`), a name given with its value (`` `VAR` (300) ``, `` `VAR`, 10 by
 * default ``) and a name the reader is told to set (`set \`VAR\``). Not the inputs of a snippet the
 * doc shows, which its own code reads from `process.env`.
 */
function settingsIn(text: string): string[] {
  const { prose, code } = split(text);
  const found: string[] = [];
  for (const [, span] of prose.matchAll(/`([^`\n]+)`/g))
    for (const m of span!.matchAll(new RegExp(`(?:^|\\s)(${NAME})=`, 'g'))) found.push(m[1]!);
  for (const line of code) {
    const prefix = new RegExp(`^\\s*(?:\\$\\s+)?((?:${NAME}=\\S*\\s+)+)(?:npm|npx|node|tsx|temporal)\\b`).exec(line);
    if (prefix) for (const m of prefix[1]!.matchAll(new RegExp(`(${NAME})=`, 'g'))) found.push(m[1]!);
  }
  const lead = (part: string) => [...part.matchAll(new RegExp(`\`(${NAME})\``, 'g'))].map((m) => m[1]!);
  for (const line of prose.split('\n')) {
    const cell = /^\|([^|]*)\|/.exec(line);
    if (cell) found.push(...lead(cell[1]!).filter((n) => n.includes('_')));
    const item = /^\s*- (`[^:]*?):/.exec(line);
    if (item) found.push(...lead(item[1]!).filter((n) => n.includes('_')));
  }
  for (const m of prose.matchAll(new RegExp(`\`(${NAME})\`,?\\s+\\(?(?:default:?\\s+)?\\d`, 'g')))
    if (m[1]!.includes('_')) found.push(m[1]!);
  for (const m of prose.matchAll(new RegExp(`\\b[Ss]et\\s+\`(${NAME})\``, 'g'))) found.push(m[1]!);
  // Inputs of a snippet the doc itself shows (`const { PURCHASE } = process.env` in its code) are not settings.
  const snippet = code.join('\n');
  const ownInputs = new Set([
    ...[...snippet.matchAll(/\{([^}]*)\}\s*=\s*process\.env\b/g)].flatMap((m) => m[1]!.split(',').map((n) => n.trim())),
    ...[...snippet.matchAll(new RegExp(`process\\.env\\.(${NAME})\\b`, 'g'))].map((m) => m[1]!),
  ]);
  return found.filter((name) => !ownInputs.has(name));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/** The anchors of a Markdown file's headings (a repeated heading gets -1, -2, … as on GitHub). */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of split(read(file)).prose.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The relative links and images of a document that are broken: a missing file or a heading the target lacks. */
function brokenLinks(file: string, text: string): string[] {
  const broken: string[] = [];
  for (const [, target] of split(text).prose.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue; // http:, https:, mailto:
    const [rel, anchor] = target!.split('#') as [string, string | undefined];
    const resolved = rel ? path.normalize(path.join(path.dirname(file), rel)) : file;
    if (!fs.existsSync(path.join(ROOT, resolved))) broken.push(`${file}: ${target} (no file ${resolved})`);
    else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor))
      broken.push(`${file}: ${target} (no heading #${anchor})`);
  }
  return broken;
}

describe('the docs against the code', () => {
  test('when package.json and scripts/ops.ts are read, then the scripts and ops verbs the checks rely on are found', () => {
    expect(SCRIPTS).toEqual(expect.arrayContaining(['dev', 'test', 'ops']));
    expect(OPS_VERBS).toEqual(expect.arrayContaining(['stuck', 'find', 'audit', 'reconcile', 'setup-namespace', 'reissue', 'recover']));
  });

  test('when README.md is read, then it states the two commands, npm run dev and npm test, and both are package.json scripts', () => {
    const readme = read('README.md');
    expect(readme).toMatch(/^npm run dev {2,}# .+$/m);
    expect(readme).toMatch(/^npm test {2,}# .+$/m);
    expect(SCRIPTS).toEqual(expect.arrayContaining(['dev', 'test']));
  });

  test('when a doc quotes `npm run <script>`, then package.json has that script', () => {
    const quoted = docs.flatMap(({ file, text }) =>
      [...text.matchAll(/\bnpm\s+run\s+(?:(?:-s|--silent)\s+)?([A-Za-z0-9][\w:.-]*)/g)].map((m) => ({ file, script: m[1]! })),
    );
    expect(quoted.length).toBeGreaterThan(20);
    expect(quoted.filter((q) => !SCRIPTS.includes(q.script)).map((q) => `${q.file}: npm run ${q.script}`)).toEqual([]);
  });

  test('when a doc quotes `npm run ops -- <verb>`, then scripts/ops.ts dispatches that verb', () => {
    const quoted = docs.flatMap(({ file, text }) =>
      [...text.matchAll(/\bnpm\s+run\s+(?:(?:-s|--silent)\s+)?ops\s+--\s+([a-z][a-z-]*)/g)].map((m) => ({ file, verb: m[1]! })),
    );
    expect(quoted.length).toBeGreaterThan(5);
    expect(quoted.filter((q) => !OPS_VERBS.includes(q.verb)).map((q) => `${q.file}: npm run ops -- ${q.verb}`)).toEqual([]);
  });

  test('when a doc presents an environment variable as a setting, then src/config.ts, .env.example or the project’s scripts read it', () => {
    const presented = docs.flatMap(({ file, text }) => settingsIn(text).map((name) => ({ file, name })));
    expect(presented.length).toBeGreaterThan(20);
    const unknown = presented.filter(({ name }) => !CONFIG_KEYS.has(name) && !READ_BY_CODE.has(name) && !EXTERNAL.has(name));
    expect([...new Set(unknown.map(({ file, name }) => `${file}: ${name}`))]).toEqual([]);
  });

  test('when README.md links to docs/, then every linked file exists and every linked heading is in it', () => {
    const readme = read('README.md');
    const toDocs = [...readme.matchAll(/\]\((docs\/[^)\s]*)\)/g)].map((m) => m[1]!);
    expect(toDocs.length).toBeGreaterThan(5);
    expect(brokenLinks('README.md', readme)).toEqual([]);
  });

  test('when a doc under docs/ links to a relative path, then the file and the heading exist', () => {
    expect(docs.filter(({ file }) => file.startsWith('docs/')).flatMap(({ file, text }) => brokenLinks(file, text))).toEqual([]);
  });
});
