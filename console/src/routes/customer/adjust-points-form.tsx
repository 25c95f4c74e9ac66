import { LoyaltyApiError, newIdempotencyKey } from '@loyalty-api/client';
import { useRef, useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../components/alert';
import { Field } from '../../components/field';
import { fieldErrors } from '../../lib/errors';
import { useCustomerActions } from './use-customer';

const FIELDS = ['points_amount', 'internal_note'] as const;

/**
 * "Adjust points": a `manual` points event whose reason is its internal_note. One
 * Idempotency-Key per filled-in form: submitting it twice (a double click, Enter twice) makes
 * one event; the key changes once the event is written.
 */
export function AdjustPointsForm({ identifier }: { identifier: string }) {
  const { adjust } = useCustomerActions(identifier);
  const key = useRef(newIdempotencyKey());
  const [points, setPoints] = useState('');
  const [reason, setReason] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setDone(null);
    const amount = /^\s*-?\d+\s*$/.test(points) ? Number(points) : points;
    try {
      const { data } = await adjust.mutateAsync({ points: amount, reason: reason.trim(), key: key.current });
      key.current = newIdempotencyKey();
      setPoints('');
      setReason('');
      setDone(`Adjusted by ${data.points_amount} points: event ${data.id}.`);
    } catch (e) {
      // The same form sent again while its first send runs: that first send answers for both.
      if (e instanceof LoyaltyApiError && e.code === 'idempotency_key_in_use') return;
      setError(e);
    }
  };

  const errors = fieldErrors(error, FIELDS);
  return (
    <section aria-labelledby="adjust-heading">
      <h2 id="adjust-heading">Adjust points</h2>
      <form aria-labelledby="adjust-heading" onSubmit={(e) => void submit(e)} noValidate className="adjust">
        <Field
          label="Points"
          name="points"
          inputMode="numeric"
          autoComplete="off"
          value={points}
          onChange={(e) => setPoints(e.target.value)}
          error={errors.byField.points_amount}
        />
        <Field
          label="Reason"
          name="reason"
          autoComplete="off"
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          error={errors.byField.internal_note}
        />
        <button type="submit">Adjust points</button>
      </form>
      <ErrorAlert message={errors.rest} />
      {done ? <p role="status">{done}</p> : null}
    </section>
  );
}
