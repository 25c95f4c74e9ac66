import { useState } from 'react';
import { useClient } from '../../lib/api';
import { errorText } from '../../lib/errors';
import { recordApi, type Row } from '../../lib/records';
import { newIdempotencyKey } from '@loyalty-api/client';

/** "Enable" / "Disable" a record at once, named with its row (`name`: "earning rule 3") (not destructive: the other undoes it); a refusal is said beside it. */
export function ToggleEnabled({ path, row, name, onDone }: { path: string; row: Row; name: string; onDone: () => Promise<void> }) {
  const api = recordApi(useClient(), path);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const toggle = async () => {
    setBusy(true);
    setError(null);
    try {
      await api.update(row.id, { enabled: !row.enabled }, newIdempotencyKey());
      await onDone();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" aria-label={`${row.enabled ? 'Disable' : 'Enable'} ${name}`} disabled={busy} onClick={() => void toggle()}>
        {row.enabled ? 'Disable' : 'Enable'}
      </button>
      {error ? (
        <span role="alert" className="field-error">
          {error}
        </span>
      ) : null}
    </>
  );
}
