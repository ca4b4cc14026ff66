// Flat config. Workflow files are deterministic sandboxed code: Node built-ins and the
// service's I/O modules are banned there (the Temporal samples do the same).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

/** Outside repositories and composition roots: no database client (a type import may pass a handle on). */
const NO_DATABASE = {
  group: ['knex', 'pg', '**/db/knex'],
  message:
    'One writer per table: queries live in the domain’s repository; only composition roots create the database (a type import may pass a handle on).',
  allowTypeImports: true,
};

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
    // One writer per table: a table is read and written by its domain's repository only. Everywhere
    // in src/ and activities/ else, no value import of knex or pg or the database module (a type
    // import only where a signature passes a handle or transaction on to repository factories, as
    // activities and `transaction(trx => …)` callers do), and no query built on a handle.
    files: ['src/**/*.ts', 'activities/**/*.ts'],
    ignores: [
      // The repositories: the one place SQL is written.
      '**/repository.ts',
      '**/*-repository.ts',
      // The database module itself: the pool (knex.ts: createDb, pingDb, the Db type) and pg's errors mapped once (errors.ts).
      'src/db/**',
      // Composition roots: they create the process's database handle (createDb, pingDb) and hand it to the repositories.
      'src/container.ts',
      'src/worker.ts',
      // The bordereau ledger's worker thread: a thread shares no pool with the worker, so it opens its own connection
      // (createDb) and hands it to the reports repository; it writes no SQL.
      'activities/bordereau-ledger-thread.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [NO_DATABASE],
        },
      ],
      'no-restricted-syntax': [
        'error',
        ...[
          // db('table'), trx('table'), knex('table')
          "CallExpression[callee.name=/^(db|trx|knex)$/][arguments.0.type='Literal']",
          // deps.db('table'), this.trx('table')
          "CallExpression[callee.property.name=/^(db|trx|knex)$/][arguments.0.type='Literal']",
          // db(`table`): a table named by a template literal
          "CallExpression[callee.name=/^(db|trx|knex)$/][arguments.0.type='TemplateLiteral']",
          "CallExpression[callee.property.name=/^(db|trx|knex)$/][arguments.0.type='TemplateLiteral']",
          // db.raw(…), db.fn.now(), trx.select(…), deps.db.from(…): a query without a table call
          'MemberExpression[object.name=/^(db|trx|knex)$/][property.name=/^(raw|fn|select|from|table|into|insert|update|delete|del|schema|queryBuilder|with)$/]',
          'MemberExpression[object.property.name=/^(db|trx|knex)$/][property.name=/^(raw|fn|select|from|table|into|insert|update|delete|del|schema|queryBuilder|with)$/]',
        ].map((selector) => ({
          selector,
          message: 'One writer per table: queries live in the domain’s repository (src/<domain>/repository.ts); call its methods instead.',
        })),
      ],
    },
  },
  {
    // The portal calls services only (issue 47 item 3): the domain services the container hands it (the
    // accounts domain's teammate service, whose session store koa-session uses, and the audit service) and
    // plain types from a domain's types/schemas file. No repository module at all, not even for a type.
    files: ['src/portal/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            NO_DATABASE,
            {
              group: ['**/*repository*'],
              message:
                'The portal calls services only: use the service the container hands it (PortalDeps), and import types from the domain’s types.ts or schemas.ts.',
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
