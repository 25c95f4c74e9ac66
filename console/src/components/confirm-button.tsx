import { useId, useRef, useState } from 'react';
import { errorText } from '../lib/errors';

interface ConfirmButtonProps {
  /** The button's text ("Reverse", "Void"). */
  label: string;
  /** Its accessible name when the text alone does not say which row it acts on ("Reverse event 123"). */
  name?: string;
  /** The action destroys something: the button looks like it before it is pressed. */
  danger?: boolean;
  title: string;
  question: string;
  confirmLabel: string;
  onConfirm: () => Promise<unknown>;
}

/**
 * A destructive action asks first: a modal <dialog> (focus moves into it and stays; Escape
 * cancels) whose confirm button runs the action and shows the API's refusal in words.
 */
export function ConfirmButton({ label, name, danger, title, question, confirmLabel, onConfirm }: ConfirmButtonProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      dialog.current?.close();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <button type="button" aria-label={name} className={danger ? 'danger-outline' : undefined} onClick={() => dialog.current?.showModal()}>
        {label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId} onClose={() => setError(null)}>
        <h2 id={titleId}>{title}</h2>
        <p>{question}</p>
        {error ? (
          <p role="alert" className="alert">
            {error}
          </p>
        ) : null}
        <div className="actions">
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button type="button" className="danger" disabled={busy} onClick={() => void confirm()}>
            {confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  );
}
