import { LoyaltyApiError, newIdempotencyKey } from '@loyalty-api/client';
import { useRef, useState, type FormEvent, type ReactNode } from 'react';
import { fieldErrors, FormError } from '../lib/errors';
import type { Body, Row } from '../lib/records';
import { ErrorAlert } from './alert';
import { CheckboxField, ChoicesField, SelectField } from './choice-field';
import { Field } from './field';

export type FormValues = Record<string, string | boolean>;

/** A field of a record's form, as the API names it. */
export interface FieldSpec {
  name: string;
  label: string;
  /** `datetime`: a UTC date and time; `choices`: a list picked from `options` (checkboxes). */
  kind: 'text' | 'integer' | 'decimal' | 'datetime' | 'select' | 'checkbox' | 'list' | 'choices';
  /** A select's or choices' values, with their words when the value alone says too little. */
  options?: readonly (string | { value: string; label: string })[];
  /** The one of a list's choices that stands for all of them and goes alone (a webhook's `*`). */
  all?: string;
  /** A list's items are sent as integers (ids). */
  integers?: boolean;
  /** A blank field sends null (the API's "none"), where it would otherwise be left out. */
  nullable?: boolean;
  /** Whether the field applies to the values chosen so far (an order rule's fields); one that does not sends null or nothing. */
  applies?: (values: FormValues) => boolean;
  placeholder?: string;
  /** Other params the API's errors name this field by (`referrer_remote_id` for "Referrer"). */
  aliases?: string[];
  initial?: string | boolean;
}

const shown = (value: unknown): string | boolean =>
  typeof value === 'boolean' ? value : Array.isArray(value) ? value.join(', ') : value === null || value === undefined ? '' : String(value);

/** A time as the API gives it, as a datetime-local input shows it in UTC (`2026-06-05T10:00`, seconds only when set). */
const utcInput = (value: unknown): string => (typeof value === 'string' && value !== '' ? new Date(value).toISOString().slice(0, 19).replace(/:00$/, '') : '');

/** The items of a list field's value (`a, b`). */
export const listItems = (value: string | boolean): string[] =>
  String(value)
    .split(/[\s,]+/)
    .filter(Boolean);

export function initialValues(fields: readonly FieldSpec[], record?: Row): FormValues {
  return Object.fromEntries(
    fields.map((f) => {
      const first = f.options?.[0];
      const fallback = f.kind === 'checkbox' ? false : f.kind === 'select' && first !== undefined ? (typeof first === 'string' ? first : first.value) : '';
      if (!record || !(f.name in record)) return [f.name, f.initial ?? fallback];
      return [f.name, f.kind === 'datetime' ? utcInput(record[f.name]) : shown(record[f.name])];
    }),
  );
}

/** What the person typed, as the API takes it; what is not a number goes as typed, and the API says what is wrong with it beside the field. */
function valueOf(field: FieldSpec, value: string | boolean): unknown {
  if (typeof value === 'boolean') return value;
  const text = value.trim();
  if (field.kind === 'list' || field.kind === 'choices') {
    const items = listItems(text);
    return field.integers ? items.map((item) => (/^\d+$/.test(item) ? Number(item) : item)) : items;
  }
  if (text === '') return field.nullable ? null : text;
  // A datetime-local input's value is the UTC time without its zone, seconds only when set.
  if (field.kind === 'datetime' && /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/.test(text)) return `${text.length === 16 ? `${text}:00` : text}Z`;
  if (field.kind === 'integer' && /^-?\d+$/.test(text)) return Number(text);
  if (field.kind === 'decimal' && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  return text;
}

/** The body of a create (every field filled in) or of an update (only what changed since `before`). */
export function bodyOf(fields: readonly FieldSpec[], values: FormValues, before?: FormValues): Body {
  const body: Body = {};
  for (const f of fields) {
    const value = values[f.name] ?? '';
    const applies = f.applies?.(values) ?? true;
    if (before) {
      if (!applies) {
        if (f.nullable && before[f.name] !== '') body[f.name] = null;
      } else if (value !== before[f.name]) body[f.name] = valueOf(f, value);
    } else if (applies && value !== '') body[f.name] = valueOf(f, value);
  }
  return body;
}

/** Numbers typed as something else, said with the field's label before anything is sent. */
export function numberErrors(fields: readonly FieldSpec[], values: FormValues): FormError | null {
  const details = fields.flatMap((f) => {
    const text = String(values[f.name] ?? '').trim();
    if (text === '' || !(f.applies?.(values) ?? true)) return [];
    if (f.kind === 'integer' && !/^-?\d+$/.test(text)) return [{ param: f.name, message: `${f.label} must be a whole number, like 50.` }];
    if (f.kind === 'decimal' && !/^-?\d+(\.\d+)?$/.test(text)) return [{ param: f.name, message: `${f.label} must be a number, like 2.50.` }];
    return [];
  });
  return details.length > 0 ? new FormError(details) : null;
}

interface RecordFormProps {
  /** The form's name ("New reward"). */
  label: string;
  fields: readonly FieldSpec[];
  /** The record being edited: the form then sends only what changed. */
  record?: Row | undefined;
  submitLabel: string;
  /** Sends the body with the form's Idempotency-Key; answers what to say once it is done. */
  onSubmit: (body: Body, key: string) => Promise<ReactNode>;
}

/**
 * A record's form: the API's validation errors beside the fields they name, the rest above the
 * button. One Idempotency-Key per filled-in form: sent twice, it makes one record; the key
 * changes once the write is done.
 */
export function RecordForm({ label, fields, record, submitLabel, onSubmit }: RecordFormProps) {
  const [values, setValues] = useState(() => initialValues(fields, record));
  const [before, setBefore] = useState(() => (record ? initialValues(fields, record) : undefined));
  const key = useRef(newIdempotencyKey());
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<ReactNode>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setDone(null);
    const local = numberErrors(fields, values);
    if (local) return setError(local);
    const body = bodyOf(fields, values, before);
    if (before && Object.keys(body).length === 0) return setDone('Nothing changed.');
    try {
      const said = await onSubmit(body, key.current);
      key.current = newIdempotencyKey();
      if (before) setBefore(values);
      else setValues(initialValues(fields));
      setDone(said);
    } catch (e) {
      // The same form sent again while its first send runs: that first send answers for both.
      if (e instanceof LoyaltyApiError && e.code === 'idempotency_key_in_use') return;
      setError(e);
    }
  };

  const aliases = Object.fromEntries(fields.flatMap((f) => (f.aliases ?? []).map((a) => [a, f.name])));
  const errors = fieldErrors(
    error,
    fields.map((f) => f.name),
    aliases,
    Object.fromEntries(fields.map((f) => [f.name, f.label])),
  );
  const set = (name: string, value: string | boolean) => setValues((v) => ({ ...v, [name]: value }));
  return (
    <form aria-label={label} className="record-form" onSubmit={(e) => void submit(e)} noValidate>
      <div className="form-grid">
        {fields
          .filter((f) => f.applies?.(values) ?? true)
          .map((f) => (
            <FormField key={f.name} field={f} value={values[f.name] ?? ''} error={errors.byField[f.name]} onChange={(v) => set(f.name, v)} />
          ))}
      </div>
      <ErrorAlert message={errors.rest} />
      <button type="submit">{submitLabel}</button>
      {done ? <div role="status">{done}</div> : null}
    </form>
  );
}

function FormField({
  field: f,
  value,
  error,
  onChange,
}: {
  field: FieldSpec;
  value: string | boolean;
  error: string | undefined;
  onChange: (v: string | boolean) => void;
}) {
  if (f.kind === 'checkbox') return <CheckboxField label={f.label} checked={value === true} onChange={onChange} error={error} />;
  const options = (f.options ?? []).map((o) => (typeof o === 'string' ? { value: o, label: o } : o));
  if (f.kind === 'select') {
    return <SelectField label={f.label} options={options} value={String(value)} onChange={(e) => onChange(e.target.value)} error={error} />;
  }
  if (f.kind === 'choices') {
    return <ChoicesField label={f.label} options={options} all={f.all} chosen={listItems(value)} onChange={(v) => onChange(v.join(', '))} error={error} />;
  }
  return (
    <Field
      label={f.label}
      name={f.name}
      autoComplete="off"
      {...(f.kind === 'datetime' ? { type: 'datetime-local', step: 1 } : {})}
      inputMode={f.kind === 'integer' ? 'numeric' : f.kind === 'decimal' ? 'decimal' : undefined}
      placeholder={f.placeholder}
      value={String(value)}
      onChange={(e) => onChange(e.target.value)}
      error={error}
    />
  );
}
