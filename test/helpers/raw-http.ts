import net from 'node:net';

// HTTP/1.1 as bytes on a socket, for what a well-behaved client (fetch) cannot send: malformed
// headers, bodies that stall, connections held open.

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The first response in `text` (headers lower-cased), or null when there is none. */
export function parseResponse(text: string): RawResponse | null {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  return { status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(end + 4, end + 4 + length) };
}

export interface RawConnection {
  socket: net.Socket;
  /** Everything received so far. */
  received(): string;
  /** Resolves when the server has closed the connection, with everything it sent. */
  closed: Promise<string>;
}

export async function connectRaw(port: number): Promise<RawConnection> {
  const socket = net.connect(port, '127.0.0.1');
  let text = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  // A reset after the answer is still a close; what was received is kept.
  socket.on('error', () => {});
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(text)));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, received: () => text, closed };
}

/** Sends `bytes` on a new connection and waits for the server to close it. */
export async function sendRaw(port: number, bytes: string): Promise<string> {
  const connection = await connectRaw(port);
  connection.socket.write(bytes);
  return connection.closed;
}

/** Resolves with the first whole response on the connection, whether or not it closes after. */
export function firstResponse(connection: RawConnection): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const response = parseResponse(connection.received());
      if (response !== null && Buffer.byteLength(response.body) >= Number(response.headers['content-length'] ?? 0)) {
        connection.socket.off('data', onData);
        resolve(response);
      }
    };
    const onData = () => setImmediate(check);
    connection.socket.on('data', onData);
    void connection.closed.then(() => {
      check();
      reject(new Error(`closed without a whole response: ${connection.received()}`));
    });
    check();
  });
}
