/**
 * The ledger thread of a bordereau (started by ./bordereau-thread.ts with a `ThreadInput`): one
 * database connection and a storage client of its own, the ledger read once through
 * `writeBordereauFiles`, the CSV written here, each batch's typed cells handed to the XLSX thread
 * over the port, and the outcome (`ThreadAnswer`) posted to the parent. Loads no exceljs.
 */
import { isMainThread, type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { createDb } from '../src/db/knex';
import { createObjectStore } from '../src/storage/object-store';
import { countStorageErrors, type StorageOperation } from '../src/storage/error-counting';
import type { Cell } from '../src/reports/bordereau';
import { createReportsRepository } from '../src/reports/repository';
import { writeBordereauFiles, type BordereauFileWriter } from './bordereau-files';
import { errorOf, rebuilt, type FromXlsx, type ThreadAnswer, type ThreadInput, type ToXlsx } from './bordereau-thread';

/** The XLSX thread, as the ledger thread sees it: each call answered over the port, in order. */
function remoteXlsxWriter(port: MessagePort, storageFailures: StorageOperation[]): BordereauFileWriter<Cell[]> {
  const waiting: Array<{ resolve: (m: FromXlsx) => void; reject: (e: Error) => void }> = [];
  port.on('message', (m: FromXlsx) => {
    storageFailures.push(...m.storageFailures);
    const w = waiting.shift();
    if (m.kind === 'failed') w?.reject(rebuilt(m));
    else w?.resolve(m);
  });
  let closed = false;
  port.on('close', () => {
    closed = true;
    for (const w of waiting.splice(0)) w.reject(new Error('the XLSX thread ended before it answered'));
  });
  const ask = (m: ToXlsx) =>
    new Promise<FromXlsx>((resolve, reject) => {
      if (closed) return reject(new Error('the XLSX thread ended before it answered'));
      waiting.push({ resolve, reject });
      port.postMessage(m);
    });
  return {
    async write(rows) {
      await ask({ kind: 'batch', rows });
    },
    async finish(totals) {
      const m = await ask({ kind: 'finish', totals });
      if (m.kind !== 'finished') throw new Error(`the XLSX thread answered ${m.kind} to finish`);
      return m.file;
    },
    async abort(err) {
      await ask({ kind: 'abort', message: err.message });
    },
  };
}

/** The ledger thread: one database connection, the bucket, the CSV, the XLSX thread; answers the caller. */
async function ledgerThread(input: ThreadInput): Promise<void> {
  const db = createDb({ DATABASE_URL: input.config.DATABASE_URL, DATABASE_POOL_MAX: 1 });
  const storageFailures: StorageOperation[] = [];
  const store = countStorageErrors(createObjectStore(input.config), (operation) => storageFailures.push(operation));
  let answer: ThreadAnswer;
  try {
    const written = await writeBordereauFiles(
      { reports: createReportsRepository(db), store },
      input.bordereau,
      input.range,
      remoteXlsxWriter(input.port, storageFailures),
    );
    answer = { ok: true, written, storageFailures };
  } catch (err) {
    answer = { ok: false, storageFailures, ...errorOf(err) };
  } finally {
    input.port.close();
    await db.destroy().catch(() => undefined);
  }
  parentPort!.postMessage(answer);
}

if (!isMainThread && (workerData as Partial<ThreadInput> | null)?.bordereauThread === 'ledger')
  void ledgerThread(workerData as ThreadInput);
