/**
 * A bordereau's files written in two worker threads with capped heaps, so a month's size never
 * shows in the worker process's memory and the two files are built at the same time:
 *
 * - the ledger thread opens its own database connection (one) and storage client from
 *   `BordereauThreadConfig`, reads the ledger, writes the CSV and the totals, and hands each batch
 *   to the XLSX thread over a message port (one batch in hand at a time);
 * - the XLSX thread writes the workbook into its own upload and answers its file.
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
import { isMainThread, MessageChannel, type MessagePort, parentPort, Worker, workerData } from 'node:worker_threads';
import type { Config } from '../src/config';
import { createDb } from '../src/db/knex';
import { createObjectStore } from '../src/storage/object-store';
import { countStorageErrors, type StorageOperation } from '../src/storage/error-counting';
import type { BordereauTotals, Cell } from '../src/reports/bordereau';
import { createReportsRepository, type BordereauFile, type BordereauRecord } from '../src/reports/repository';
import { createXlsxWriter, writeBordereauFiles, type BordereauFileWriter, type WrittenBordereau } from './bordereau-files';

/** What the threads need to reach the database and the bucket. */
export type BordereauThreadConfig = Pick<Config, 'DATABASE_URL' | 'STORAGE_API_ENDPOINT' | 'STORAGE_BUCKET' | 'STORAGE_PROJECT_ID'>;

/**
 * Each thread's heap (MiB): an old generation several times the writer's live heap, the same for
 * every month; a young generation large enough that a batch's rows, cells and XML die young
 * instead of being promoted into the capped old generation (with V8's default, 100 000 rows took
 * twice as long).
 */
export const THREAD_LIMITS = { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 48 } as const;

interface ThreadInput {
  bordereauThread: 'ledger' | 'xlsx';
  config: BordereauThreadConfig;
  bordereau: BordereauRecord;
  range: { from: Date; to: Date };
  /** The other thread's end of their channel. */
  port: MessagePort;
}

interface ThreadError {
  message: string;
  name: string;
  code?: string | number;
}

/** The ledger thread's answer, with the storage operations that failed in either thread (the worker counts them). */
type ThreadAnswer = { storageFailures: StorageOperation[] } & ({ ok: true; written: WrittenBordereau } | ({ ok: false } & ThreadError));

/** From the ledger thread to the XLSX thread. */
type ToXlsx = { kind: 'batch'; rows: Cell[][] } | { kind: 'finish'; totals: BordereauTotals } | { kind: 'abort'; message: string };
/** From the XLSX thread back: each message answers the one before it. */
type XlsxReply = { kind: 'written' } | { kind: 'finished'; file: BordereauFile } | { kind: 'aborted' } | ({ kind: 'failed' } & ThreadError);
type FromXlsx = { storageFailures: StorageOperation[] } & XlsxReply;

const errorOf = (err: unknown): ThreadError => {
  const e = err as Error & { code?: string | number };
  return { message: e?.message ?? String(err), name: e?.name ?? 'Error', ...(e?.code !== undefined ? { code: e.code } : {}) };
};
const rebuilt = (e: ThreadError) =>
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
  // Run from TypeScript sources (tests, `npm run dev`), the threads load them through tsx as their
  // parent does; the built service runs the compiled file.
  const fromSource = __filename.endsWith('.ts');
  const load = fromSource
    ? `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register(); require(${JSON.stringify(__filename)});`
    : `require(${JSON.stringify(path.resolve(__filename))});`;
  const { port1, port2 } = new MessageChannel();
  const start = (role: ThreadInput['bordereauThread'], port: MessagePort) => {
    const input: ThreadInput = { bordereauThread: role, config, bordereau, range, port };
    return new Worker(load, { eval: true, workerData: input, transferList: [port], resourceLimits: THREAD_LIMITS });
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

/** The XLSX thread: the workbook into its own upload, batch by batch as the ledger thread hands them over. */
function xlsxThread(input: ThreadInput): void {
  const storageFailures: StorageOperation[] = [];
  const store = countStorageErrors(createObjectStore(input.config), (operation) => storageFailures.push(operation));
  const writer = createXlsxWriter(store, input.bordereau, input.range);
  const reply = (m: XlsxReply) => input.port.postMessage({ ...m, storageFailures: storageFailures.splice(0) });
  // One message at a time, in order: a batch is written (and its upload has taken it) before the next.
  let previous: Promise<unknown> = Promise.resolve();
  input.port.on('message', (m: ToXlsx) => {
    const handle = async (): Promise<XlsxReply> => {
      if (m.kind === 'batch') await writer.write(m.rows);
      else if (m.kind === 'finish') return { kind: 'finished', file: await writer.finish(m.totals) };
      else await writer.abort(new Error(m.message));
      return { kind: m.kind === 'batch' ? 'written' : 'aborted' };
    };
    previous = previous.then(handle).then(reply, (err: unknown) => reply({ kind: 'failed', ...errorOf(err) }));
  });
  // The thread ends when the ledger thread closes the channel (nothing else keeps it alive).
  input.port.on('close', () => input.port.unref());
}

if (!isMainThread) {
  const input = workerData as Partial<ThreadInput> | null;
  if (input?.bordereauThread === 'ledger') void ledgerThread(input as ThreadInput);
  else if (input?.bordereauThread === 'xlsx') xlsxThread(input as ThreadInput);
}
