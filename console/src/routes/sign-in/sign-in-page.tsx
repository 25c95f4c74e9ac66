import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../components/alert';
import { Field } from '../../components/field';

/** "API token" and "Sign in"; the parent checks the token against the API (GET /shop). */
export function SignInPage({ onSignIn, error }: { onSignIn: (token: string) => Promise<void>; error: string | null }) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    try {
      await onSignIn(token.trim());
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="sign-in">
      <h1>Loyalty console</h1>
      <form aria-label="Sign in" onSubmit={(e) => void submit(e)} noValidate>
        <Field
          label="API token"
          name="token"
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={token}
          onChange={(e) => setToken(e.target.value)}
          required
        />
        <ErrorAlert message={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <p className="hint">
        A shop's API token (<code>loyalty tokens create --shop N</code>), or open the address <code>loyalty console-link --shop N</code> prints. The token is
        kept in this tab only.
      </p>
    </main>
  );
}
