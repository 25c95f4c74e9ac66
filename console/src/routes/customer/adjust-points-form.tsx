import { LoyaltyApiError, newIdempotencyKey } from '@loyalty-api/client';
import { useRef, useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../components/alert';
import { Field } from '../../components/field';
import { numberErrors, type FieldSpec } from '../../components/record-form';
import { fieldErrors, FormError } from '../../lib/errors';
import { formatCredits, formatPoints } from '../../lib/format';
import { useCustomerActions } from './use-customer';

const FIELDS: readonly FieldSpec[] = [
  { name: 'points_amount', label: 'Points', kind: 'integer' },
  { name: 'credits_amount', label: 'Store credit', kind: 'decimal' },
  { name: 'internal_note', label: 'Reason', kind: 'text' },
];
const LABELS = Object.fromEntries(FIELDS.map((f) => [f.name, f.label]));

/** What the form would send, or why it cannot: numbers in words, and at least one amount. */
function checked(values: Record<string, string>): FormError | null {
  const numbers = numberErrors(FIELDS, values);
  if (numbers) return numbers;
  if (values.points_amount!.trim() === '' && values.credits_amount!.trim() === '') {
    return new FormError([{ param: 'points_amount', message: 'Enter the points (or store credit) to add; a negative number takes away.' }]);
  }
  return null;
}

/** What was done, in words. */
function adjusted(data: { id: number; points_amount: number; credits_amount: number }, currency: string): string {
  const parts = [
    data.points_amount ? `${formatPoints(data.points_amount)} points` : '',
    data.credits_amount ? `${formatCredits(data.credits_amount)} ${currency} store credit` : '',
  ];
  return `Adjusted by ${parts.filter(Boolean).join(' and ')}: event ${data.id}.`;
}

/**
 * "Adjust points": a `manual` points event (points, store credit or both) whose reason is its
 * internal_note. One Idempotency-Key per filled-in form: submitting it twice (a double click,
 * Enter twice) makes one event; the key changes once the event is written.
 */
export function AdjustPointsForm({ identifier, currency }: { identifier: string; currency: string }) {
  const { adjust } = useCustomerActions(identifier);
  const key = useRef(newIdempotencyKey());
  const [values, setValues] = useState({ points_amount: '', credits_amount: '', internal_note: '' });
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const set = (name: keyof typeof values) => (e: { target: { value: string } }) => setValues((v) => ({ ...v, [name]: e.target.value }));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setDone(null);
    const local = checked(values);
    if (local) return setError(local);
    const points = values.points_amount.trim();
    const credits = values.credits_amount.trim();
    try {
      const { data } = await adjust.mutateAsync({
        ...(points === '' ? {} : { points: Number(points) }),
        ...(credits === '' ? {} : { credits: Number(credits) }),
        reason: values.internal_note.trim(),
        key: key.current,
      });
      key.current = newIdempotencyKey();
      setValues({ points_amount: '', credits_amount: '', internal_note: '' });
      setDone(adjusted(data, currency));
    } catch (e) {
      // The same form sent again while its first send runs: that first send answers for both.
      if (e instanceof LoyaltyApiError && e.code === 'idempotency_key_in_use') return;
      setError(e);
    }
  };

  const errors = fieldErrors(
    error,
    FIELDS.map((f) => f.name),
    {},
    LABELS,
  );
  return (
    <section aria-labelledby="adjust-heading">
      <h2 id="adjust-heading">Adjust points</h2>
      <form aria-labelledby="adjust-heading" onSubmit={(e) => void submit(e)} noValidate className="adjust">
        <Field
          label="Points"
          name="points"
          inputMode="numeric"
          autoComplete="off"
          value={values.points_amount}
          onChange={set('points_amount')}
          error={errors.byField.points_amount}
        />
        <Field
          label={`Store credit (${currency})`}
          name="credits"
          inputMode="decimal"
          autoComplete="off"
          placeholder="none"
          value={values.credits_amount}
          onChange={set('credits_amount')}
          error={errors.byField.credits_amount}
        />
        <Field
          label="Reason"
          name="reason"
          autoComplete="off"
          value={values.internal_note}
          onChange={set('internal_note')}
          error={errors.byField.internal_note}
        />
        <button type="submit">Adjust points</button>
      </form>
      <ErrorAlert message={errors.rest} />
      {done ? <p role="status">{done}</p> : null}
    </section>
  );
}
