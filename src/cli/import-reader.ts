import { parentPort, Worker, workerData } from 'node:worker_threads';
import type { Config } from '../config.js';
import { checkRows, readFile, type CheckedBatch, type Format } from '../records/import.js';
import { resourceNamed } from '../records/resources/index.js';

// `loyalty import` reads and checks the file in a thread of its own while the main thread
// writes: parsing and validation (half of an import's CPU) overlap the database's work on a
// second core. The reader runs at most AHEAD batches ahead of the writer, so memory stays
// bounded whatever the file's size. One is enough: the reader checks a batch of customers in
// about a third of the time the writer takes to write one (it was idle 60% of an import of
// 1,000,000), and each batch held ahead is one more in both heaps.

const AHEAD = 1;

/**
 * The reader's heap: it holds a few batches at a time, and V8 left to its defaults grows a
 * second heap as large as the writer's (an import of 200,000 customers peaked at 345 MB RSS;
 * with these, 295 MB).
 */
const LIMITS = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 64 };

interface Job {
  table: string;
  file: string;
  format: Format;
  config: Config;
}

type Message = { batch: CheckedBatch; bytes: number } | { done: true };

/** The checked batches of a file (checkRows), read and checked in a worker thread. */
export async function* checkedInThread(job: Job, onBytes?: (n: number) => void): AsyncGenerator<CheckedBatch> {
  const worker = new Worker(new URL(import.meta.url), { workerData: job, resourceLimits: LIMITS });
  const inbox: (Message | { error: unknown })[] = [];
  let wake: (() => void) | undefined;
  const deliver = (message: Message | { error: unknown }) => {
    inbox.push(message);
    wake?.();
  };
  worker.on('message', deliver);
  worker.on('error', (error) => deliver({ error }));
  worker.on('exit', (code) => deliver(code === 0 ? { done: true } : { error: new Error(`the import's reader stopped with exit code ${code}`) }));
  try {
    for (;;) {
      while (inbox.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      const message = inbox.shift()!;
      if ('error' in message) throw message.error;
      if ('done' in message) return;
      onBytes?.(message.bytes);
      // The reader checks the next batch while this one is written.
      worker.postMessage('next');
      yield message.batch;
    }
  } finally {
    await worker.terminate();
  }
}

/** The worker: checks the file's rows and posts them a batch at a time, at most AHEAD unwritten. */
async function read(job: Job): Promise<void> {
  const port = parentPort!;
  const r = resourceNamed(job.table)!;
  let credit = AHEAD;
  let resume: (() => void) | undefined;
  port.on('message', () => {
    credit++;
    resume?.();
  });
  let bytes = 0;
  for await (const batch of checkRows(
    r,
    readFile(r, job.file, job.format, (n) => (bytes += n)),
    job.config,
  )) {
    while (credit === 0) await new Promise<void>((resolve) => (resume = resolve));
    credit--;
    port.postMessage({ batch, bytes } satisfies Message);
    bytes = 0;
  }
  port.postMessage({ done: true } satisfies Message);
  port.close();
}

if (parentPort !== null && (workerData as Job | undefined)?.file !== undefined) await read(workerData as Job);
