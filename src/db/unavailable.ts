// Which database failures mean "the database cannot serve this now, retry soon" rather than a
// bug: the server went away or is restarting, its connection was cut, or the disk is full. The
// HTTP layer answers them 503 with Retry-After (http/error-handler.ts); nothing was written,
// since the transaction they interrupted did not commit (or, when a commit's answer was lost,
// the retry with the same Idempotency-Key replays what it stored).

export type Unavailability = 'unreachable' | 'disk_full';

// PostgreSQL SQLSTATEs: class 08 (connection exception); 57P01-57P03 (the server is shutting
// down, crashed or starting up: what pg_terminate_backend and a restart send); 53100 disk_full;
// 53300 too_many_connections.
const PG_DISK_FULL = '53100';
const PG_UNREACHABLE = new Set(['57P01', '57P02', '57P03', '53300']);

// The socket's own failures, as Node names them.
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

// node-postgres reports a lost or never-made connection only by its message.
const PG_CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
];

function classify(error: { code?: unknown; message?: unknown }): Unavailability | null {
  const code = typeof error.code === 'string' ? error.code : '';
  if (code === 'SQLITE_FULL' || code === PG_DISK_FULL) return 'disk_full';
  // SQLITE_IOERR_*: the file system failed a read or write (ENOSPC on the WAL shows as one too);
  // SQLITE_BUSY: another process held the file past busy_timeout.
  if (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_BUSY') return 'unreachable';
  if (code.startsWith('08') && code.length === 5) return 'unreachable';
  if (PG_UNREACHABLE.has(code) || NETWORK_CODES.has(code)) return 'unreachable';
  const message = typeof error.message === 'string' ? error.message : '';
  return PG_CONNECTION_MESSAGES.some((m) => message.startsWith(m)) ? 'unreachable' : null;
}

/** Why the database cannot serve now, when that is what the error says; null for any other error. */
export function unavailability(error: unknown): Unavailability | null {
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    const found = classify(e as { code?: unknown; message?: unknown });
    if (found !== null) return found;
  }
  return null;
}
