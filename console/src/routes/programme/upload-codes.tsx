import { LoyaltyApiError, newIdempotencyKey } from '@loyalty-api/client';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useRef, useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../components/alert';
import { useClient } from '../../lib/api';
import { errorText } from '../../lib/errors';
import { formatPoints } from '../../lib/format';
import type { Row } from '../../lib/records';

/** A file's codes, one a line (blank lines skipped), each with its line number for the errors. */
export function codesOf(text: string): { codes: string[]; lines: number[] } {
  const codes: string[] = [];
  const lines: number[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    const code = line.trim();
    if (code === '') return;
    codes.push(code);
    lines.push(index + 1);
  });
  return { codes, lines };
}

/** The API's refusal by line of the file (`codes[3]` is the file's 4th code); what names no code is said as a whole. */
function lineErrors(error: unknown, lines: number[]): { byLine: string[]; rest: string | null } {
  if (!(error instanceof LoyaltyApiError)) return { byLine: [], rest: error ? errorText(error) : null };
  const byLine = error.details.flatMap((d) => {
    const index = /^codes\[(\d+)\]/.exec(d.param ?? '')?.[1];
    const line = index === undefined ? undefined : lines[Number(index)];
    return line === undefined ? [] : [`Line ${line}: ${d.message}`];
  });
  return { byLine, rest: byLine.length === error.details.length && byLine.length > 0 ? null : errorText(error) };
}

/** "Upload codes": a reward's pool of codes from a text file, one code a line, all or nothing. */
export function UploadCodes({ reward }: { reward: Row }) {
  const client = useClient();
  const queries = useQueryClient();
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const fileId = useId();
  const key = useRef(newIdempotencyKey());
  const [file, setFile] = useState<File | null>(null);
  const [lines, setLines] = useState<number[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setDone(null);
    if (!file) return setError(new Error('Choose a file of codes, one a line.'));
    const { codes, lines } = codesOf(await file.text());
    setLines(lines);
    try {
      const { data } = await client.POST('/merchant_api/v1/rewards/{id}/codes', {
        params: { path: { id: reward.id } },
        body: { codes },
        headers: { 'Idempotency-Key': key.current },
      });
      key.current = newIdempotencyKey();
      void queries.invalidateQueries({ queryKey: ['/merchant_api/v1/rewards', 'codes', reward.id] });
      setDone(`Added ${formatPoints(data.added ?? codes.length)} codes: ${formatPoints(data.available)} available, ${formatPoints(data.issued)} issued.`);
    } catch (e) {
      if (e instanceof LoyaltyApiError && e.code === 'idempotency_key_in_use') return;
      setError(e);
    }
  };

  const errors = lineErrors(error, lines);
  return (
    <>
      <button type="button" aria-label={`Upload codes for ${String(reward.name)}`} onClick={() => dialog.current?.showModal()}>
        Upload codes
      </button>
      <dialog ref={dialog} aria-labelledby={titleId}>
        <h2 id={titleId}>Upload codes for {String(reward.name)}</h2>
        <form aria-labelledby={titleId} onSubmit={(e) => void submit(e)} noValidate className="record-form">
          <div className="field">
            <label htmlFor={fileId}>Codes file</label>
            <input
              id={fileId}
              type="file"
              accept=".txt,.csv,text/plain,text/csv"
              onChange={(e) => {
                setFile(e.target.files?.[0] ?? null);
                key.current = newIdempotencyKey();
              }}
            />
          </div>
          <p className="hint">One code a line. Codes are added all or none: a code given twice or already in the shop refuses the file.</p>
          <ErrorAlert message={errors.rest} />
          {errors.byLine.length > 0 ? (
            <ul aria-label="Errors by line" className="field-error">
              {errors.byLine.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          ) : null}
          {done ? <p role="status">{done}</p> : null}
          <div className="actions">
            <button type="button" onClick={() => dialog.current?.close()}>
              Close
            </button>
            <button type="submit">Upload codes</button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/** A reward's code stock: uploaded codes left and issued, or that its codes are generated (no pool). */
export function CodeStock({ reward }: { reward: Row }) {
  const client = useClient();
  const stock = useQuery({
    queryKey: ['/merchant_api/v1/rewards', 'codes', reward.id],
    queryFn: async ({ signal }) => (await client.GET('/merchant_api/v1/rewards/{id}/codes', { params: { path: { id: reward.id } }, signal })).data,
  });
  if (stock.error) return <span className="muted">unknown</span>;
  if (!stock.data) return <span className="muted">…</span>;
  const { available, issued } = stock.data;
  if (available === 0 && issued === 0) return <>Generated</>;
  return (
    <>
      {formatPoints(available)} left, {formatPoints(issued)} issued
    </>
  );
}
