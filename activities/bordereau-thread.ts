/**
 * A bordereau's files written in two worker threads with capped heaps, so a month's size never
 * shows in the worker process's memory and the two files are built at the same time:
 *
 * - the ledger thread (./bordereau-ledger-thread.ts) opens its own database connection (one) and
 *   storage client from `BordereauThreadConfig`, reads the ledger, writes the CSV and the totals,
 *   and hands each batch to the XLSX thread over a message port (two batches in hand at most);
 * - the XLSX thread (./bordereau-xlsx-thread.ts) writes the workbook into its own upload and
 *   answers its file.
 *
 * Each thread loads only its own module and what it imports: the XLSX thread no knex or pg, the
 * ledger thread no exceljs (each thread pays its own module loads at every bordereau).
 *
 * Why threads: the writer's live heap is small and the same for any month (about 30 MiB), but V8
 * sizes a heap by how fast it allocates, so in the worker's heap a month of 100 000 rows grew the
 * process's peak RSS well past what 10 000 rows did (garbage collected late, not retained). Each
 * thread's old generation is capped (`THREAD_LIMITS`): it collects sooner and never grows past
 * the cap, whatever the month, and the rest of the worker keeps its own heap. Two threads, because
 * exceljs' per-cell XML is most of the work: beside it the ledger and the CSV take the other core.
 *
 * Errors: the writers' own (the ledger, an upload) are thrown again in the caller with their
 * message, name and code; a thread that runs out of its heap rejects with
 * ERR_WORKER_OUT_OF_MEMORY; a thread that ends without answering rejects too; both threads are
 * stopped when either fails. The activity's retry policy takes it from there.
 */
import path from 'node:path';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import type { Config } from '../src/config';
import type { StorageOperation } from '../src/storage/error-counting';
import type { BordereauTotals, Cell } from '../src/reports/bordereau';
import type { BordereauFile, BordereauRecord } from '../src/reports/repository';
import type { WrittenBordereau } from './bordereau-files';

/** What the threads need to reach the database and the bucket. */
export type BordereauThreadConfig = Pick<Config, 'DATABASE_URL' | 'STORAGE_API_ENDPOINT' | 'STORAGE_BUCKET' | 'STORAGE_PROJECT_ID'>;

/**
 * Each thread's heap (MiB): an old generation several times the writer's live heap, the same for
 * every month; a young generation large enough that a batch's rows, cells and XML die young
 * instead of being promoted into the capped old generation (with V8's default, 100 000 rows took
 * twice as long).
 */
export const THREAD_LIMITS = { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 48 } as const;

/** What a thread is started with (its `workerData`). */
export interface ThreadInput {
  bordereauThread: 'ledger' | 'xlsx';
  config: BordereauThreadConfig;
  bordereau: BordereauRecord;
  range: { from: Date; to: Date };
  /** The other thread's end of their channel. */
  port: MessagePort;
}

export interface ThreadError {
  message: string;
  name: string;
  code?: string | number;
}

/** The ledger thread's answer, with the storage operations that failed in either thread (the worker counts them). */
export type ThreadAnswer = { storageFailures: StorageOperation[] } & (
  { ok: true; written: WrittenBordereau } | ({ ok: false } & ThreadError)
);

/** From the ledger thread to the XLSX thread. */
export type ToXlsx = { kind: 'batch'; rows: Cell[][] } | { kind: 'finish'; totals: BordereauTotals } | { kind: 'abort'; message: string };
/** From the XLSX thread back: each message answers the one before it. */
export type XlsxReply =
  { kind: 'written' } | { kind: 'finished'; file: BordereauFile } | { kind: 'aborted' } | ({ kind: 'failed' } & ThreadError);
export type FromXlsx = { storageFailures: StorageOperation[] } & XlsxReply;

/** An error as it crosses a thread's boundary (message, name and code). */
export const errorOf = (err: unknown): ThreadError => {
  const e = err as Error & { code?: string | number };
  return { message: e?.message ?? String(err), name: e?.name ?? 'Error', ...(e?.code !== undefined ? { code: e.code } : {}) };
};
/** The error `errorOf` sent, thrown again on this side. */
export const rebuilt = (e: ThreadError) =>
  Object.assign(new Error(e.message), { name: e.name, ...(e.code !== undefined ? { code: e.code } : {}) });

/**
 * Writes `bordereau`'s files for month `range` in two new threads (see the module) and answers
 * them; `onStorageError` hears of each storage operation that failed in them (the worker's
 * dependency-error metric).
 * @throws as the module says.
 */
export function writeBordereauFilesInThread(
  config: BordereauThreadConfig,
  bordereau: BordereauRecord,
  range: { from: Date; to: Date },
  onStorageError: (operation: StorageOperation) => void = () => undefined,
): Promise<WrittenBordereau> {
  // Each role has a module of its own, so a thread loads only its own libraries (exceljs in the
  // XLSX thread, knex and pg in the ledger thread's). Run from TypeScript sources (tests, `npm run
  // dev`), the threads load them through tsx as their parent does; the built service runs the
  // compiled files.
  const fromSource = __filename.endsWith('.ts');
  const load = (role: ThreadInput['bordereauThread']) => {
    const file = path.join(__dirname, `bordereau-${role}-thread${path.extname(__filename)}`);
    return fromSource
      ? `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register(); require(${JSON.stringify(file)});`
      : `require(${JSON.stringify(file)});`;
  };
  const { port1, port2 } = new MessageChannel();
  const start = (role: ThreadInput['bordereauThread'], port: MessagePort) => {
    const input: ThreadInput = { bordereauThread: role, config, bordereau, range, port };
    return new Worker(load(role), { eval: true, workerData: input, transferList: [port], resourceLimits: THREAD_LIMITS });
  };
  const xlsxThread = start('xlsx', port2);
  const ledgerThread = start('ledger', port1);
  return new Promise<WrittenBordereau>((resolve, reject) => {
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      void ledgerThread.terminate();
      void xlsxThread.terminate();
      reject(err);
    };
    ledgerThread.once('message', (answer: ThreadAnswer) => {
      for (const operation of answer.storageFailures) onStorageError(operation);
      if (!answer.ok) return fail(rebuilt(answer));
      settled = true;
      resolve(answer.written);
    });
    const ended = (code: number) =>
      fail(new Error(`a bordereau ${bordereau.id} writer thread ended (exit code ${code}) before the files were written`));
    ledgerThread.once('error', fail);
    ledgerThread.once('exit', ended);
    // The XLSX thread ends by itself once the ledger thread closes their channel, maybe before the
    // answer arrives here; ended early, it closed the channel, which the ledger thread reports.
    xlsxThread.once('error', fail);
    xlsxThread.once('exit', (code) => (code === 0 ? undefined : ended(code)));
  });
}
