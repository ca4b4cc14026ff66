/**
 * isCompleteSet: whether a purchase's certificates and zips, read at one moment, are the complete
 * current set that getCertificates may answer `issued` with.
 */
import { isCompleteSet, type StoredCertificate } from '../../src/certificates/repository';
import type { ArchiveRow } from '../../src/certificates/archives-repository';

const cert = (id: number, over: Partial<StoredCertificate> = {}): StoredCertificate => ({
  certificateId: id,
  coveredUnitId: id,
  certificateNumber: `COI-1-1-${id}-ABCDEF0123`,
  productLineId: 7,
  productName: 'Special Event Liability',
  unitIndex: id - 1,
  unitKind: 'day',
  startsAt: new Date('2027-05-01T05:00:00Z'),
  endsAt: new Date('2027-05-02T05:00:00Z'),
  timeZone: 'America/Chicago',
  localLabel: '2027-05-01',
  namedInsuredName: 'Kim Park',
  storageKey: `purchases/1/certificates/${id}.pdf`,
  sizeBytes: 100,
  sha256: 'ab',
  voidedAt: null,
  certificateHolderId: null,
  certificateHolderName: null,
  revision: 1,
  supersededAt: null,
  supersededByNumber: null,
  ...over,
});
const zip = (
  kind: 'payment' | 'product',
  ids: number[] | null,
  productLineId: number | null = kind === 'product' ? 7 : null,
): ArchiveRow => ({
  kind,
  productLineId,
  proofCode: kind === 'product' ? 'POC-X' : null,
  storageKey: `zip-${kind}-${productLineId}-${ids?.join('.')}`,
  sizeBytes: 10,
  sha256: 'cd',
  certificateIds: ids,
});

test('when every current certificate is stored and both zips hold them, then the set is complete', () => {
  expect(isCompleteSet([cert(1), cert(2)], [zip('payment', [1, 2]), zip('product', [1, 2])])).toBe(true);
});

test('when an endorsement superseded the versions and the new ones are not stored yet, then the set is not complete', () => {
  const old = [cert(1, { supersededAt: new Date() }), cert(2, { supersededAt: new Date() })];
  const next = [cert(3, { storageKey: null, revision: 2 }), cert(4, { storageKey: null, revision: 2 })];
  expect(isCompleteSet([...old, ...next], [zip('payment', [1, 2]), zip('product', [1, 2])])).toBe(false);
});

test('when the new versions are stored but the zips still hold the old ones, then the set is not complete until the zips are rebuilt', () => {
  const next = [cert(3, { revision: 2 }), cert(4, { revision: 2 })];
  expect(isCompleteSet(next, [zip('payment', [1, 2]), zip('product', [1, 2])])).toBe(false);
  expect(isCompleteSet(next, [zip('payment', [3, 4]), zip('product', [1, 2])])).toBe(false);
  expect(isCompleteSet(next, [zip('payment', [3, 4]), zip('product', [3, 4])])).toBe(true);
});

test('when a certificate was voided after the zips were built, then the zips that still hold it are current', () => {
  expect(isCompleteSet([cert(1), cert(2, { voidedAt: new Date() })], [zip('payment', [1, 2]), zip('product', [1, 2])])).toBe(true);
});

test('when every certificate is voided, then no zip is needed; a zip recorded without ids is taken as current', () => {
  expect(isCompleteSet([cert(1, { voidedAt: new Date() })], [])).toBe(true);
  expect(isCompleteSet([cert(1)], [zip('payment', null), zip('product', null)])).toBe(true);
});

test('when a product line with a certificate in force has no zip, then the set is not complete', () => {
  expect(isCompleteSet([cert(1), cert(2, { productLineId: 8 })], [zip('payment', [1, 2]), zip('product', [1])])).toBe(false);
  expect(
    isCompleteSet([cert(1), cert(2, { productLineId: 8 })], [zip('payment', [1, 2]), zip('product', [1]), zip('product', [2], 8)]),
  ).toBe(true);
});
