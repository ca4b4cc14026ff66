/** The API harness's certificate agency (scripts/harness/certificates.ts), where the benches read it too. */
export * from '../../scripts/harness/certificates';
