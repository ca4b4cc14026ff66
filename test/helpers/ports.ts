/** Test helper: a TCP port for a listener that must be told its port in advance (scripts/harness/ports.ts). */
export * from '../../scripts/harness/ports';
