/** The API harness's fixtures (scripts/harness/fixtures.ts), where the benches and scripts read them too. */
export * from '../../scripts/harness/fixtures';
