/**
 * countStorageErrors (src/storage/error-counting.ts): failed storage calls are counted by
 * operation, answers of a working storage are not, and results and errors pass through.
 */
import { PassThrough } from 'node:stream';
import { countStorageErrors, type StorageOperation } from '../../src/storage/error-counting';
import { ObjectConflictError, type ObjectStore } from '../../src/storage/object-store';
import { countDependencyError, createApiMetrics } from '../../src/metrics/registry';

const outage = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4443'), { code: 'ECONNREFUSED' });

function fakeStore(overrides: Partial<ObjectStore>): ObjectStore {
  const unused = () => Promise.reject(new Error('not used'));
  return {
    bucket: 'b',
    putIfAbsent: unused,
    stat: unused,
    exists: unused,
    list: unused,
    openRead: () => new PassThrough(),
    signedReadUrl: unused,
    signedUploadUrl: unused,
    deletePrefix: unused,
    moveAside: unused,
    ...overrides,
  } as ObjectStore;
}

test('when storage calls fail, then each failure is counted under its operation and the error is rethrown', async () => {
  const counted: StorageOperation[] = [];
  const store = countStorageErrors(
    fakeStore({
      putIfAbsent: () => Promise.reject(outage()),
      exists: () => Promise.reject(outage()),
      moveAside: () => Promise.reject(outage()),
    }),
    (op) => counted.push(op),
  );
  await expect(store.putIfAbsent('k', Buffer.from('x'), { contentType: 'application/pdf' } as never)).rejects.toThrow('ECONNREFUSED');
  await expect(store.exists(['k'])).rejects.toThrow('ECONNREFUSED');
  await expect(store.exists(['k'])).rejects.toThrow('ECONNREFUSED');
  await expect(store.moveAside('k', 'quarantine/k')).rejects.toThrow('ECONNREFUSED');
  expect(counted).toEqual(['putIfAbsent', 'exists', 'exists', 'moveAside']);
});

test('when storage answers (success, missing object, conflicting bytes), then nothing is counted and the answer passes through', async () => {
  const counted: StorageOperation[] = [];
  const store = countStorageErrors(
    fakeStore({
      stat: () => Promise.resolve(null),
      list: () => Promise.resolve(['a', 'b']),
      putIfAbsent: () => Promise.reject(new ObjectConflictError('k', 'aa', 'bb')),
    }),
    (op) => counted.push(op),
  );
  expect(await store.stat('k')).toBeNull();
  expect(await store.list('p')).toEqual(['a', 'b']);
  await expect(store.putIfAbsent('k', Buffer.from('x'), {} as never)).rejects.toBeInstanceOf(ObjectConflictError);
  expect(store.bucket).toBe('b');
  expect(counted).toEqual([]);
});

test('when a read stream errors, then an outage counts and a missing object (404) does not', async () => {
  const counted: StorageOperation[] = [];
  const streams: PassThrough[] = [];
  const store = countStorageErrors(
    fakeStore({
      openRead: () => {
        const s = new PassThrough();
        streams.push(s);
        return s;
      },
    }),
    (op) => counted.push(op),
  );
  const a = store.openRead('a');
  const b = store.openRead('b');
  a.on('error', () => undefined);
  b.on('error', () => undefined);
  streams[0]!.destroy(outage());
  streams[1]!.destroy(Object.assign(new Error('No such object'), { code: 404 }));
  await new Promise((r) => setImmediate(r));
  expect(counted).toEqual(['openRead']);
});

test('when the API signs a URL and storage is down, then the API registry counts it under storage, and a missing object does not count', async () => {
  const metrics = createApiMetrics();
  const store = countStorageErrors(
    fakeStore({
      signedReadUrl: () => Promise.reject(outage()),
      stat: () => Promise.reject(Object.assign(new Error('No such object'), { code: 404 })),
    }),
    countDependencyError(metrics, 'storage'),
  );
  await expect(store.signedReadUrl('k', { expiresInSeconds: 60 })).rejects.toThrow('ECONNREFUSED');
  await expect(store.stat('k')).rejects.toThrow('No such object');
  expect(await metrics.registry.metrics()).toContain(
    'dependency_errors_total{dependency="storage",mode="shared",operation="signedReadUrl"} 1',
  );
  expect(await metrics.registry.metrics()).not.toContain('operation="stat"');
});
