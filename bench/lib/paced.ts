import net from 'node:net';

// An open-loop load: requests sent at a fixed rate whatever the answers' speed, each one's
// latency counted from when it was due (so a stall is not hidden by waiting for it), for a
// latency at a given throughput, which wrk (closed-loop) cannot hold.
//
// The requests go over plain sockets kept alive, one request in flight on each, written from one
// prepared buffer, and an answer is read only as far as its status and Content-Length: the
// generator shares the machine's two cores with the server it measures, and an HTTP client
// library (undici's Pool) spent 130 µs of CPU a request here, as much as half the server's own,
// and showed a p99 of 877 ms at 2,500 requests a second against a server that does nothing.
// A request due while every connection waits for an answer is sent on the first one free, its
// latency still counted from when it was due.

export interface PacedResult {
  rate: number;
  sent: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** CPU time the generator itself spent per request, µs. */
  generatorCpuUs: number;
}

interface Connection {
  socket: net.Socket;
  /** When the request in flight was due (NaN: none in flight). */
  due: number;
  received: Buffer;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/** `rate` requests a second for `seconds` (after `warmupSeconds` at the same rate, not counted). */
export async function paced(
  url: string,
  path: string,
  headers: Record<string, string>,
  rate: number,
  seconds: number,
  { connections = 8, warmupSeconds = 2 }: { connections?: number; warmupSeconds?: number } = {},
): Promise<PacedResult> {
  const { hostname, port } = new URL(url);
  const request = Buffer.from(
    `GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n${Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('')}\r\n`,
  );
  let latencies: number[] = [];
  let non2xx = 0;
  const backlog: number[] = [];
  const idle: Connection[] = [];
  let failure: Error | null = null;

  const send = (connection: Connection, due: number) => {
    connection.due = due;
    connection.socket.write(request);
  };
  const answered = (connection: Connection, status: number) => {
    latencies.push(performance.now() - connection.due);
    if (status >= 300) non2xx++;
    connection.due = NaN;
    const next = backlog.shift();
    if (next === undefined) idle.push(connection);
    else send(connection, next);
  };
  const all = await Promise.all(Array.from({ length: connections }, () => open(hostname, Number(port), answered, (error) => (failure ??= error))));
  idle.push(...all);

  const run = async (length: number) => {
    const start = performance.now();
    const total = Math.floor(rate * length);
    for (let i = 0; i < total && failure === null; i++) {
      const due = start + (i * 1000) / rate;
      // Never before it is due: a timer fires a millisecond late or so, which counts against
      // the server, as it would for any client.
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const connection = idle.pop();
      if (connection === undefined) backlog.push(due);
      else send(connection, due);
    }
    while (failure === null && (backlog.length > 0 || idle.length < connections)) await new Promise((resolve) => setTimeout(resolve, 5));
    return total;
  };

  try {
    if (warmupSeconds > 0) await run(warmupSeconds);
    latencies = [];
    non2xx = 0;
    const cpu = process.cpuUsage();
    const sent = await run(seconds);
    const used = process.cpuUsage(cpu);
    if (failure !== null) throw failure;
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
    return { rate, sent, p50Ms: at(0.5), p99Ms: at(0.99), non2xx, generatorCpuUs: (used.user + used.system) / sent };
  } finally {
    for (const connection of all) connection.socket.destroy();
  }
}

/** A kept-alive connection that calls `answered` with each answer's status once the whole answer is in. */
function open(host: string, port: number, answered: (connection: Connection, status: number) => void, failed: (error: Error) => void): Promise<Connection> {
  return new Promise<Connection>((resolve, reject) => {
    const socket = net.connect({ host, port, noDelay: true }, () => resolve(connection));
    const connection: Connection = { socket, due: NaN, received: Buffer.alloc(0) };
    socket.on('error', (error) => {
      failed(error);
      reject(error);
    });
    // A connection the server closes would leave its request unanswered and the run waiting for it.
    socket.on('close', () => failed(new Error('the server closed a connection of the open-loop load')));
    socket.on('data', (chunk: Buffer) => {
      connection.received = connection.received.length === 0 ? chunk : Buffer.concat([connection.received, chunk]);
      const end = connection.received.indexOf(HEADER_END);
      if (end < 0) return;
      const head = connection.received.toString('latin1', 0, end);
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      if (length === null) return failed(new Error(`an answer without Content-Length: ${head.split('\r\n')[0]}`));
      if (connection.received.length < end + HEADER_END.length + Number(length[1])) return;
      connection.received = Buffer.alloc(0);
      answered(connection, Number(head.slice(9, 12)));
    });
  });
}
