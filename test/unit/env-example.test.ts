/**
 * `.env.example` lists every variable the service reads: the keys of the config (as loadConfig
 * answers them for an empty environment, so a key the schema drops stays covered) each appear as
 * `KEY=` (or `# KEY=`) in the file, and the file names no key the config does not know.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config';

const example = fs.readFileSync(path.resolve(__dirname, '..', '..', '.env.example'), 'utf8');
const listed = new Set([...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!));
const schemaSource = fs.readFileSync(path.resolve(__dirname, '..', '..', 'src', 'config.ts'), 'utf8');
/** Every key of the config schema, optional ones included (loadConfig leaves unset optionals out). */
const declared = new Set([...schemaSource.matchAll(/^ {2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!));

test('when .env.example is read, then it lists every variable of the config and no other', () => {
  for (const key of Object.keys(loadConfig({}))) expect(declared).toContain(key);
  expect([...declared].filter((k) => !listed.has(k))).toEqual([]);
  expect([...listed].filter((k) => !declared.has(k))).toEqual([]);
});
