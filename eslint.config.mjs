// Flat config. Workflow files are deterministic sandboxed code: Node built-ins and the
// service's I/O modules are banned there (the Temporal samples do the same).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'var/', '.tools/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    files: ['scripts/**', 'test/**'],
    // Tests read arbitrary JSON bodies; `any` there keeps assertions readable.
    rules: { 'no-console': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // CommonJS modules (loaded by both ES modules and CommonJS code) import with require().
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'crypto', 'http', 'https', 'net', 'child_process', 'os'],
              message: 'Workflow code must be deterministic: no Node built-ins.',
            },
            {
              group: ['../src/*', '../activities/*', 'knex', 'pg', 'stripe', 'puppeteer-core', '@google-cloud/*'],
              message: 'Workflows see activities only through `import type` and proxyActivities.',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    // Services decide; repositories persist: a service reaches the database only through its domain's repository.
    files: ['src/**/service.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['knex', 'pg', '../db/knex', '../../src/db/knex'],
              message: 'A service reads and writes tables through its domain’s repository, never knex itself (one writer per table).',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    // The benches and the API harness are tooling: they read the harness, never the test suites' helpers.
    files: ['scripts/bench/**/*.ts', 'scripts/harness/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/test/*', '**/test/**'],
              message: 'Benches and the harness import scripts/harness (what the tests share with them), never test/.',
            },
          ],
        },
      ],
    },
  },
);
