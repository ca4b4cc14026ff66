/** The recording processor proxy (scripts/harness/processor-proxy.ts), where the benches read it too. */
export * from '../../scripts/harness/processor-proxy';
