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

  it('waits, once stopped, for the connections taken through its descriptors to close', async () => {
    const server = await listening();
    const { ready, stop } = acceptMorePerTurn(server, () => {});
    await ready;
    const { port } = server.address() as net.AddressInfo;
    // Enough idle keep-alive connections that some came in through the extra descriptors.
    const sockets = await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        const socket = net.connect(port, '127.0.0.1');
        await once(socket, 'connect');
        return socket;
      }),
    );
    let stopped = false;
    const stopping = stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stopped).toBe(false);
    for (const socket of sockets) socket.destroy();
    await stopping;
    expect(stopped).toBe(true);
    server.close();
  });
});
