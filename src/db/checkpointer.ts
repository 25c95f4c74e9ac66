import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';

// SQLite in WAL mode appends each commit to the -wal file; a checkpoint copies those pages back
// into the database file and syncs it. By default the connection that commits runs the
// checkpoint itself, inside its COMMIT, once the WAL holds 1000 pages: a request's answer then
// waits for the copy and for the database file's fsync, and beside a process that writes large
// files with fsync that one fsync took 70-90 ms (strace). With 1000-grant batches it fell on every
// fourth batch, and the batches' p99 beside such a neighbour was 315-392 ms with it against
// 206-229 ms with no checkpoint at all (the neighbour benchmark's one-client mix, the same minutes).
//
// So the server checkpoints from a thread of its own, on a connection of its own: a PASSIVE
// checkpoint, which never blocks the writer nor waits for it (SQLite lets the writer append while
// a checkpoint copies). It runs at its first look, then when the database changed since the last
// one (data_version), at most every CHECKPOINT_INTERVAL_MS. The writer checkpoints in its own
// commits only once the WAL holds WRITER_CHECKPOINT_PAGES: under writes so steady that the WAL is
// never wholly copied between two of them, as SQLite starts it over only then. If the thread
// stops, the writer checkpoints as SQLite does by itself.

/** How often the thread looks whether the database changed, and checkpoints it when it did. */
const CHECKPOINT_INTERVAL_MS = 500;
/** The WAL's size, in pages, past which the writer checkpoints as it commits (SQLite's own is 1000). */
const WRITER_CHECKPOINT_PAGES = 10_000;
/** SQLite's default, which the writer goes back to when the thread stops by itself. */
const SQLITE_DEFAULT_CHECKPOINT_PAGES = 1000;

// CommonJS, run by the worker as given: it needs nothing compiled, from source or from dist/.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('synchronous = FULL');
// Null: the first look checkpoints what the WAL holds already (a server started after a crash).
let seen = null;
const timer = setInterval(() => {
  const version = db.pragma('data_version', { simple: true });
  if (version === seen) return;
  seen = version;
  const [{ busy, log, checkpointed }] = db.pragma('wal_checkpoint(PASSIVE)');
  parentPort.postMessage({ busy, log, checkpointed });
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});`;

/** A checkpoint the thread made: SQLite's answer (busy: another checkpoint ran; pages in the WAL; pages copied). */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

export interface Checkpointer {
  /** Ends the thread once its current checkpoint is done; its connection is closed by then. */
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  intervalMs?: number;
  /** Called after each checkpoint the thread made (the tests watch it). */
  onCheckpoint?: (result: CheckpointResult) => void;
  /** Called when the thread stopped by itself (it could not open the file, or SQLite failed). */
  onError?: (error: Error) => void;
}

/**
 * Checkpoints `file` from a thread of its own, and leaves `writer` (the connection that commits)
 * to checkpoint only past WRITER_CHECKPOINT_PAGES, or as before once the thread is gone.
 */
export function checkpointInBackground(writer: BetterSqlite3.Database, file: string, options: CheckpointerOptions = {}): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD, { eval: true, workerData: { driver, file, intervalMs: options.intervalMs ?? CHECKPOINT_INTERVAL_MS } });
  // The thread never keeps the process alive: a server that closes its database stops it first.
  worker.unref();
  writer.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
  let stopping = false;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('message', (result: CheckpointResult) => options.onCheckpoint?.(result));
  worker.on('error', (error) => {
    if (stopping) return;
    // The writer checkpoints as it commits again, as it would with no thread at all.
    if (writer.open) writer.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_CHECKPOINT_PAGES}`);
    options.onError?.(error);
  });
  return {
    async stop() {
      stopping = true;
      worker.postMessage('stop');
      await exited;
    },
  };
}
