import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { freePort } from './server.js';

// A NATS server with JetStream of its own (`nats-server -js`), on a free port and a storage
// folder of its own, for the event stream's tests and benchmark: it can be killed and started
// again (the same port and storage) without touching any other server on the machine.

export interface NatsServer {
  url: string;
  /** SIGKILL: the broker goes away at once. */
  kill(): Promise<void>;
  /** Starts it again on the same port and storage. */
  start(): Promise<void>;
  /** Stops it and removes its storage. */
  close(): Promise<void>;
}

const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('data', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.setTimeout(500, () => {
      socket.destroy();
      resolve(false);
    });
  });

export async function startNats(): Promise<NatsServer> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-nats-'));
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir], { stdio: 'ignore' });
    child.once('error', () => undefined);
    for (let i = 0; i < 100; i++) {
      if (await answers(port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`nats-server -js did not answer on port ${port}: is it installed (apt-get install nats-server)?`);
  };
  const kill = async () => {
    const running = child;
    child = null;
    if (running === null || running.exitCode !== null) return;
    const exited = new Promise((r) => running.once('exit', r));
    running.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    kill,
    start,
    close: async () => {
      await kill();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The reference for the relay's rate: `count` messages of `bytes` each, with a Nats-Msg-Id, to a
 * stream of their own on `url`, through the JetStream client's publish in windows of `window`
 * awaited acknowledgements, by a process doing nothing else. Messages per second.
 */
export async function barePublishRate(url: string, count: number, bytes: number, window = 1000): Promise<number> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'BARE', subjects: ['bare.>'] });
    const js = jetstream(nc);
    const body = 'x'.repeat(bytes);
    const started = performance.now();
    for (let sent = 0; sent < count; sent += window) {
      const acks = Array.from({ length: Math.min(window, count - sent) }, (_, i) => js.publish('bare.1.event', body, { msgID: `bare_${sent + i}` }));
      await Promise.all(acks);
    }
    const rate = count / ((performance.now() - started) / 1000);
    await jsm.streams.delete('BARE');
    return rate;
  } finally {
    await nc.close();
  }
}
