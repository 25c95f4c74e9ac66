import { errorText } from '../lib/errors';

/** An error in words, announced when it appears. */
export function ErrorAlert({ message }: { message: string | null }) {
  if (!message) return null;
  return (
    <p role="alert" className="alert">
      {message}
    </p>
  );
}

/** A read that failed, in words, with "Retry" to read it again (the page around it stays). */
export function QueryError({ query, what }: { query: { error: unknown; refetch: () => unknown; isFetching?: boolean }; what?: string }) {
  if (!query.error) return null;
  return (
    <div role="alert" className="alert retry">
      <p>
        {what ? `${what} could not be loaded: ` : ''}
        {errorText(query.error)}
      </p>
      <button type="button" disabled={query.isFetching} onClick={() => void query.refetch()}>
        Retry
      </button>
    </div>
  );
}
