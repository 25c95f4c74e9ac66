import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// A noisy neighbour on the same machine, as a small shared VPS has: processes that take every
// core, and one that writes large files synchronously (each write followed by fsync), so that
// the server's own fsyncs queue behind them. Each process ends by itself after `seconds`, so a
// test or benchmark that dies leaves nothing running for long.

export interface NeighbourOptions {
  /** Processes that spin on a core (default: one per core). */
  cpuHogs?: number;
  /** A process that writes `writeMb` at a time with fsync, in a loop (default true). */
  diskWriter?: boolean;
  writeMb?: number;
  /** The longest the neighbour may run; stop() ends it sooner. */
  seconds: number;
}

export interface Neighbour {
  stop(): Promise<void>;
}

const HOG = 'const end = Date.now() + Number(process.argv[1]); let x = 0; while (Date.now() < end) x++;';

const WRITER = `
const fs = require('node:fs');
const [file, mb, ms] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
const end = Date.now() + ms;
const chunk = Buffer.alloc(mb * 1024 * 1024, 7);
while (Date.now() < end) {
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, chunk);
  fs.fsyncSync(fd);
  fs.closeSync(fd);
}
fs.rmSync(file, { force: true });`;

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
}

export function startNeighbour(options: NeighbourOptions): Neighbour {
  const ms = String(options.seconds * 1000);
  const children: ChildProcess[] = [];
  for (let i = 0; i < (options.cpuHogs ?? os.availableParallelism()); i++) children.push(spawn(process.execPath, ['-e', HOG, ms], { stdio: 'ignore' }));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-neighbour-'));
  if (options.diskWriter ?? true) {
    children.push(spawn(process.execPath, ['-e', WRITER, path.join(dir, 'written'), String(options.writeMb ?? 64), ms], { stdio: 'ignore' }));
  }
  return {
    async stop() {
      for (const child of children) child.kill('SIGKILL');
      await Promise.all(children.map(exited));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
