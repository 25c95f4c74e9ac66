import { spawn } from 'node:child_process';
import type { Server as HttpServer } from 'node:http';
import net from 'node:net';

// Node accepts one new connection per turn of the event loop: libuv since 1.45 calls accept()
// once each time the listening socket is reported readable, and leaves the rest of the kernel's
// queue to the next turn ("unix: don't accept() connections in a loop", libuv #3696). Under load a
// turn lasts tens of ms (measured under the overload benchmark on PostgreSQL: 20-50 turns a
// second), so 500 clients that open their connections at once wait up to 20 s, in the kernel's
// queue, before a byte of their first request is read; the server sees none of that wait, and
// no shedding can shorten it.
// Every descriptor of the listening socket that the loop watches is reported readable, and each
// takes one connection a turn. So the process watches the socket through EXTRA_DESCRIPTORS more
// of them: a process cannot duplicate a descriptor in Node (there is no dup()), but one passed
// to another process and back over an IPC channel arrives as a new one. A short-lived helper
// process does that, and exits. (Node 22.12 has `reusePort`, several sockets on the port; Node 20
// has not. The cluster's workers get a descriptor each from the primary in the same way.)

/**
 * Descriptors watched beside the listening socket's own: 17 connections taken per turn instead of
 * 1. A queue with fewer waiting costs the others one accept() each that finds nothing (EAGAIN).
 */
export const EXTRA_DESCRIPTORS = 16;

/** How long the helper may take to send the descriptors back before the server goes on without them. */
const HELPER_TIMEOUT_MS = 10_000;

/** The helper: sends every handle it gets straight back, and closes its own copy once sent. */
const HELPER = "process.on('message',(n,h)=>process.send(n,h,()=>h.close()));";

/** A listening socket's handle, as net.Server keeps it (not a public property, but the one Node's IPC sends). */
interface ListeningHandle {
  fd: number;
}

/** A helper process that sends back `count` new descriptors of `handle`'s socket (see the top). */
function duplicate(handle: ListeningHandle, count: number): { handles: Promise<unknown[]>; abort(): void } {
  const helper = spawn(process.execPath, ['-e', HELPER], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], env: { ...process.env, NODE_OPTIONS: '' } });
  const got: unknown[] = [];
  let settled = false;
  let fail: (error: Error) => void = () => {};
  const handles = new Promise<unknown[]>((resolve, reject) => {
    fail = reject;
    helper.on('message', (_n, received) => {
      // One that arrives after the end (an abort) is not kept either.
      if (settled) return (received as { close(): void }).close();
      got.push(received);
      if (got.length === count) resolve(got);
    });
    // Kept for good: a send still queued when the helper is gone fails too.
    helper.on('error', (error) => reject(error));
    helper.once('exit', (code, signal) => reject(new Error(`the helper exited (${signal ?? code}) after sending ${got.length} of ${count} descriptors`)));
    // A raw TCP handle travels as itself ('net.Native'): the helper never listens on it.
    for (let n = 0; n < count; n++) helper.send(n, handle as never);
  });
  const timer = setTimeout(() => fail(new Error(`the helper sent ${got.length} of ${count} descriptors in ${HELPER_TIMEOUT_MS} ms`)), HELPER_TIMEOUT_MS);
  const done = () => {
    settled = true;
    clearTimeout(timer);
    helper.kill();
  };
  handles.then(done, () => {
    done();
    for (const received of got) (received as { close(): void }).close();
  });
  return { handles, abort: () => fail(new Error('stopped before the helper was done')) };
}

/** What net.Server counts of its connections: not public, but what its cap and its close go by. */
interface Counted {
  _connections: number;
}

/**
 * Makes `server`, listening on TCP, take up to EXTRA_DESCRIPTORS more new connections per turn of
 * the event loop (see the top), once a helper process has sent their descriptors back (`ready`, a
 * moment after the call). The connections taken through them count as the server's own: its
 * `maxConnections` closes those past the cap as they arrive, and its close waits for them.
 * `stop` ends that: call it before closing the server, or connections keep coming in through
 * them.
 * On anything but a TCP socket of its own (a cluster's worker under round-robin gets its
 * connections one by one from the primary) it does nothing. If the helper fails, the server
 * serves on as it was, and `failed` is told why.
 */
export function acceptMorePerTurn(
  server: HttpServer,
  failed: (error: Error) => void,
  count = EXTRA_DESCRIPTORS,
): { ready: Promise<void>; stop(): Promise<void> } {
  const handle = (server as unknown as { _handle?: ListeningHandle | null })._handle;
  const counted = server as unknown as Counted;
  if (count <= 0 || typeof server.address() !== 'object' || handle == null || !(handle.fd >= 0) || typeof counted._connections !== 'number')
    return { ready: Promise.resolve(), stop: async () => {} };
  const helper = duplicate(handle, count);
  let stopped = false;
  /** Taken through `extra`: closed past the server's cap, else moved to the server's count and handed to it whole. */
  const take = (extra: net.Server, socket: net.Socket) => {
    if (typeof server.maxConnections === 'number' && counted._connections >= server.maxConnections) return void socket.destroy();
    (extra as unknown as Counted)._connections--;
    counted._connections++;
    // Where a socket that closes takes itself off the count.
    (socket as unknown as { _server: unknown })._server = server;
    server.emit('connection', socket);
  };
  const extras = helper.handles.then(
    (handles) =>
      handles.map((received) => {
        // As http.Server takes its own (allowHalfOpen, noDelay).
        const extra: net.Server = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => take(extra, socket));
        extra.on('error', failed);
        // Already listening: listen() on it again only starts watching it.
        extra.listen(received as never);
        return extra;
      }),
    (error: Error) => {
      if (!stopped) failed(error);
      return [];
    },
  );
  return {
    ready: extras.then(() => undefined),
    async stop() {
      stopped = true;
      helper.abort();
      await Promise.all((await extras).map((extra) => new Promise((resolve) => extra.close(resolve))));
    },
  };
}
