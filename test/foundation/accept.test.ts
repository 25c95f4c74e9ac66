import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { acceptMorePerTurn, EXTRA_DESCRIPTORS } from '../../src/http/accept.js';

// Node takes one new connection per turn of the event loop from each descriptor of a listening
// socket (http/accept.ts): 500 clients that connect at once to a busy server wait seconds to be
// read. Here clients connect all at once, and the test counts the connections the server took in
// each turn of its (this process's) event loop: one at most on the socket alone, up to 17 with
// the descriptors that acceptMorePerTurn adds. No timing is measured: only turns.

const CLIENTS = 40;

interface Taken {
  /** Connections taken in each turn that took any, in order. */
  perTurn: number[];
  /** What each client read back. */
  answers: string[];
}

/** CLIENTS clients connect at once and each sends a GET; counts the connections taken in each turn until all are in. */
async function connectAllAtOnce(server: http.Server): Promise<Taken> {
  const { port } = server.address() as net.AddressInfo;
  let taken = 0;
  const onConnection = () => taken++;
  server.on('connection', onConnection);
  const perTurn: number[] = [];
  const sockets = Array.from({ length: CLIENTS }, () => net.connect(port, '127.0.0.1'));
  const answers = Promise.all(
    sockets.map(async (socket) => {
      await once(socket, 'connect');
      socket.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      let text = '';
      for await (const chunk of socket) text += chunk;
      return text;
    }),
  );
  // One turn a check: the connections taken since the last one (in the poll phase before it).
  await new Promise<void>((resolve) => {
    let seen = 0;
    const check = () => {
      if (taken > seen) perTurn.push(taken - seen);
      seen = taken;
      if (taken >= CLIENTS) resolve();
      // A turn that takes its time, as a busy server's does, so that connections wait for it.
      else {
        const until = performance.now() + 2;
        while (performance.now() < until);
        setImmediate(check);
      }
    };
    setImmediate(check);
  });
  server.off('connection', onConnection);
  return { perTurn, answers: await answers };
}

function listening(): Promise<http.Server> {
  const server = http.createServer((_request, response) => response.end('served'));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const served = (answers: string[]) => answers.filter((text) => text.startsWith('HTTP/1.1 200') && text.endsWith('served')).length;

describe('accepting connections', () => {
  it('takes one new connection per turn on the listening socket alone', async () => {
    const server = await listening();
    try {
      const { perTurn, answers } = await connectAllAtOnce(server);
      expect(Math.max(...perTurn)).toBe(1);
      expect(served(answers)).toBe(CLIENTS);
    } finally {
      server.close();
    }
  });

  it('takes up to 17 a turn through 16 more descriptors, serves them all, and stops taking any once stopped', async () => {
    const server = await listening();
    const { port } = server.address() as net.AddressInfo;
    const failures: Error[] = [];
    const { ready, stop } = acceptMorePerTurn(server, (error) => failures.push(error));
    await ready;
    try {
      const { perTurn, answers } = await connectAllAtOnce(server);
      expect(failures).toEqual([]);
      expect(Math.max(...perTurn)).toBeGreaterThan(1);
      expect(Math.max(...perTurn)).toBeLessThanOrEqual(1 + EXTRA_DESCRIPTORS);
      expect(perTurn.length).toBeLessThan(CLIENTS);
      // Handed to the HTTP server whole: every one is answered by its handler.
      expect(served(answers)).toBe(CLIENTS);
    } finally {
      await stop();
      server.close();
    }
    // With the server's own descriptor closed as well, nothing listens on the port any more.
    const refused = await new Promise<string>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve('connected')));
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
  });

  it("counts what it takes as the server's own: the server's cap closes those past it, and its close waits for the rest", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = 0;
    const server = http.createServer((_request, response) => {
      holding++;
      void held.then(() => response.end('served'));
    });
    server.maxConnections = 5;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const { ready, stop } = acceptMorePerTurn(server, () => {});
    await ready;
    // All at once: most are taken through the extra descriptors, 17 in the first turn.
    const clients = Array.from({ length: CLIENTS }, () => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => (text += chunk));
      socket.on('error', () => {});
      // Closed past the cap, the client may see a reset first: either way it ends with 'close'.
      return { closed: new Promise<string>((resolve) => socket.on('close', () => resolve(text))) };
    });
    let closedEarly = 0;
    for (const client of clients) void client.closed.then(() => closedEarly++);
    for (let waited = 0; (holding < 5 || closedEarly < CLIENTS - 5) && waited < 10_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(holding).toBe(5);
    expect(closedEarly).toBe(CLIENTS - 5);
    let closed = false;
    await stop();
    server.close(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Five requests are still being handled: the server waits for them.
    expect(closed).toBe(false);
    release();
    const answers = await Promise.all(clients.map((client) => client.closed));
    expect(served(answers)).toBe(5);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(true);
  });
});
