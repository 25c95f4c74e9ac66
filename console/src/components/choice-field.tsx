import { useId, type SelectHTMLAttributes } from 'react';

// A select and a checkbox with the same wiring as Field: a label, and the API's message for
// the field read out with it (aria-describedby) and marking it invalid.

interface SelectFieldProps extends Omit<SelectHTMLAttributes<HTMLSelectElement>, 'id'> {
  label: string;
  options: readonly { value: string; label: string }[];
  error?: string | undefined;
}

export function SelectField({ label, options, error, ...select }: SelectFieldProps) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} aria-invalid={error ? true : undefined} aria-describedby={error ? `${id}-error` : undefined} {...select}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      <FieldError id={`${id}-error`} error={error} />
    </div>
  );
}

export function CheckboxField({
  label,
  checked,
  onChange,
  error,
}: {
  label: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  error?: string | undefined;
}) {
  const id = useId();
  return (
    <div className="field checkbox">
      <span>
        <input
          id={id}
          type="checkbox"
          checked={checked}
          onChange={(e) => onChange(e.target.checked)}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${id}-error` : undefined}
        />
        <label htmlFor={id}>{label}</label>
      </span>
      <FieldError id={`${id}-error`} error={error} />
    </div>
  );
}

/**
 * A list picked from a few values: a named group of checkboxes. `all` is the value that stands
 * for every other and goes alone: checked, the others are cleared and disabled.
 */
export function ChoicesField({
  label,
  options,
  all,
  chosen,
  onChange,
  error,
}: {
  label: string;
  options: readonly { value: string; label: string }[];
  all?: string | undefined;
  chosen: readonly string[];
  onChange: (chosen: string[]) => void;
  error?: string | undefined;
}) {
  const id = useId();
  const allChosen = all !== undefined && chosen.includes(all);
  const toggle = (value: string, on: boolean) => {
    if (value === all) return onChange(on ? [value] : []);
    // Kept in the options' order, so a list reads (and compares) the same however it was clicked.
    onChange(options.map((o) => o.value).filter((v) => (v === value ? on : chosen.includes(v))));
  };
  return (
    <fieldset className="field choices" aria-describedby={error ? `${id}-error` : undefined}>
      <legend>{label}</legend>
      {options.map((o) => (
        <label key={o.value}>
          <input
            type="checkbox"
            checked={chosen.includes(o.value)}
            disabled={allChosen && o.value !== all}
            aria-invalid={error ? true : undefined}
            onChange={(e) => toggle(o.value, e.target.checked)}
          />
          {o.label}
        </label>
      ))}
      <FieldError id={`${id}-error`} error={error} />
    </fieldset>
  );
}

function FieldError({ id, error }: { id: string; error: string | undefined }) {
  return error ? (
    <p id={id} className="field-error">
      {error}
    </p>
  ) : null;
}
