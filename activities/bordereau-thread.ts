/**
 * A bordereau's files written in a worker thread of their own, with a capped heap, so a month's
 * size never shows in the worker process's memory: the thread opens its own database connection
 * (one) and storage client from `BordereauThreadConfig`, writes both files
 * (./bordereau-files.ts) and answers them, then ends.
 *
 * Why a thread: the writer's live heap is small and the same for any month (about 30 MiB), but V8
 * sizes a heap by how fast it allocates, so in a process of its own a month of 100 000 rows grew
 * the heap to several times what 10 000 rows did (garbage collected late, not retained). The
 * thread's old generation is capped at `BORDEREAU_THREAD_OLD_GENERATION_MB`: it collects sooner
 * and never grows past it, whatever the month, and the rest of the worker (certificates, other
 * activities) keeps its own heap.
 *
 * Errors: the writer's own (the ledger, an upload) are thrown again in the caller with their
 * message, name and code; a thread that runs out of its heap rejects with
 * ERR_WORKER_OUT_OF_MEMORY; a thread that ends without answering rejects too. The activity's retry
 * policy takes it from there.
 */
import path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { Config } from '../src/config';
import { createDb } from '../src/db/knex';
import { createObjectStore } from '../src/storage/object-store';
import { countStorageErrors, type StorageOperation } from '../src/storage/error-counting';
import { createReportsRepository, type BordereauRecord } from '../src/reports/repository';
import { writeBordereauFiles, type WrittenBordereau } from './bordereau-files';

/** What the thread needs to reach the database and the bucket. */
export type BordereauThreadConfig = Pick<Config, 'DATABASE_URL' | 'STORAGE_API_ENDPOINT' | 'STORAGE_BUCKET' | 'STORAGE_PROJECT_ID'>;

/** The thread's old-generation heap cap (MiB): several times the writer's live heap, and the same for every month. */
export const BORDEREAU_THREAD_OLD_GENERATION_MB = 96;
/**
 * The thread's young generation (MiB): a batch's rows, cells and XML die young there instead of
 * being promoted into the capped old generation (with the default, 100 000 rows took twice as long).
 */
export const BORDEREAU_THREAD_YOUNG_GENERATION_MB = 48;

interface ThreadInput {
  bordereauThread: true;
  config: BordereauThreadConfig;
  bordereau: BordereauRecord;
  range: { from: Date; to: Date };
}

/** The thread's answer, with the storage operations that failed on the way (the worker counts them in its metrics). */
type ThreadAnswer = { storageFailures: StorageOperation[] } & (
  { ok: true; written: WrittenBordereau } | { ok: false; message: string; name: string; code?: string | number }
);

/**
 * Writes `bordereau`'s files for month `range` in a new thread (see the module) and answers them;
 * `onStorageError` hears of each storage operation that failed in the thread (the worker's
 * dependency-error metric).
 * @throws as the module says.
 */
export function writeBordereauFilesInThread(
  config: BordereauThreadConfig,
  bordereau: BordereauRecord,
  range: { from: Date; to: Date },
  onStorageError: (operation: StorageOperation) => void = () => undefined,
): Promise<WrittenBordereau> {
  // Run from TypeScript sources (tests, `npm run dev`), the thread loads them through tsx as its
  // parent does; the built service runs the compiled file.
  const fromSource = __filename.endsWith('.ts');
  const load = fromSource
    ? `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register(); require(${JSON.stringify(__filename)});`
    : `require(${JSON.stringify(path.resolve(__filename))});`;
  const input: ThreadInput = { bordereauThread: true, config, bordereau, range };
  return new Promise((resolve, reject) => {
    let answered = false;
    const thread = new Worker(load, {
      eval: true,
      workerData: input,
      resourceLimits: {
        maxOldGenerationSizeMb: BORDEREAU_THREAD_OLD_GENERATION_MB,
        maxYoungGenerationSizeMb: BORDEREAU_THREAD_YOUNG_GENERATION_MB,
      },
    });
    thread.once('message', (answer: ThreadAnswer) => {
      answered = true;
      for (const operation of answer.storageFailures) onStorageError(operation);
      if (answer.ok) resolve(answer.written);
      else
        reject(
          Object.assign(new Error(answer.message), { name: answer.name, ...(answer.code !== undefined ? { code: answer.code } : {}) }),
        );
    });
    thread.once('error', (err) => {
      answered = true;
      reject(err);
    });
    thread.once('exit', (code) => {
      if (!answered) reject(new Error(`the bordereau ${bordereau.id} writer thread ended (exit code ${code}) without answering`));
    });
  });
}

/** The thread's body: one database connection, the bucket, both files, the answer. */
async function threadMain(input: ThreadInput): Promise<void> {
  const db = createDb({ DATABASE_URL: input.config.DATABASE_URL, DATABASE_POOL_MAX: 1 });
  const storageFailures: StorageOperation[] = [];
  const store = countStorageErrors(createObjectStore(input.config), (operation) => storageFailures.push(operation));
  let answer: ThreadAnswer;
  try {
    const written = await writeBordereauFiles({ reports: createReportsRepository(db), store }, input.bordereau, input.range);
    answer = { ok: true, written, storageFailures };
  } catch (err) {
    const e = err as Error & { code?: string | number };
    answer = {
      ok: false,
      storageFailures,
      message: e?.message ?? String(err),
      name: e?.name ?? 'Error',
      ...(e?.code !== undefined ? { code: e.code } : {}),
    };
  } finally {
    await db.destroy().catch(() => undefined);
  }
  parentPort!.postMessage(answer);
}

if (!isMainThread && (workerData as Partial<ThreadInput> | null)?.bordereauThread === true) void threadMain(workerData as ThreadInput);
