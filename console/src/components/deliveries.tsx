import { useQueryClient } from '@tanstack/react-query';
import { useId, useState, type ReactNode } from 'react';
import { errorText } from '../lib/errors';
import { PAGE_SIZE, useCursorList, type CursorPage } from '../lib/records';
import { ErrorAlert } from './alert';
import { Pager } from './pager';
import { ScrollTable, type Column } from './scroll-table';

// A list of deliveries, a webhook's (sent) or a connection's (received): filtered by status, a
// page at a time, with one action on the rows it applies to (Retry, Replay).

interface Delivery {
  id: number;
  topic: string;
  status: string;
}

export interface DeliveriesOf<D extends Delivery> {
  /** What they are deliveries of, in the title: "webhook", "connection". */
  noun: string;
  back: { href: string; label: string };
  statuses: readonly { value: D['status'] | ''; label: string }[];
  /** The columns between Status and Actions, and a row's cells for them. */
  columns: Column[];
  cells(delivery: D): ReactNode;
  /** The lists' query key: every page of every filter, reloaded after the action. */
  listKey: readonly unknown[];
  load(query: { 'pagination[since_id]': number; 'pagination[limit]': number; status?: D['status'] }, signal: AbortSignal): Promise<CursorPage<D>>;
  action: { name: string; offered(delivery: D): boolean; run(delivery: D): Promise<string> };
}

/** The page of one webhook's or connection's deliveries; `summary` says what it is (or failed to load). */
export function DeliveriesPage<D extends Delivery>({ id, of, summary, error }: { id: number; of: DeliveriesOf<D>; summary: ReactNode; error: unknown }) {
  const statusId = useId();
  const [status, setStatus] = useState<D['status'] | ''>('');
  return (
    <>
      <p>
        <a href={of.back.href}>{of.back.label}</a>
      </p>
      <h1>
        Deliveries of {of.noun} {id}
      </h1>
      <ErrorAlert message={error ? errorText(error) : null} />
      {summary}
      <div className="toolbar">
        <label htmlFor={statusId}>Status</label>
        <select id={statusId} value={status} onChange={(e) => setStatus(e.target.value as D['status'] | '')}>
          {of.statuses.map((s) => (
            <option key={s.value} value={s.value}>
              {s.label}
            </option>
          ))}
        </select>
      </div>
      {/* A new filter starts again from the first page. */}
      <DeliveryList key={status} of={of} status={status} />
    </>
  );
}

function DeliveryList<D extends Delivery>({ of, status }: { of: DeliveriesOf<D>; status: D['status'] | '' }) {
  const queries = useQueryClient();
  const [said, setSaid] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const list = useCursorList([...of.listKey, status], (since, signal) =>
    of.load({ 'pagination[since_id]': since, 'pagination[limit]': PAGE_SIZE, ...(status === '' ? {} : { status }) }, signal),
  );
  const act = async (delivery: D) => {
    setSaid(null);
    setError(null);
    try {
      setSaid(await of.action.run(delivery));
    } catch (e) {
      setError(errorText(e));
    } finally {
      await queries.invalidateQueries({ queryKey: [...of.listKey] });
    }
  };
  const rows = list.query.data?.data;
  const columns: Column[] = [{ label: 'Delivery' }, { label: 'Topic' }, { label: 'Status' }, ...of.columns, { label: 'Actions' }];
  return (
    <>
      <ErrorAlert message={error ?? (list.query.error ? errorText(list.query.error) : null)} />
      {said ? <p role="status">{said}</p> : null}
      {!rows ? (
        list.query.error ? null : (
          <p aria-live="polite">Loading deliveries…</p>
        )
      ) : rows.length === 0 ? (
        <p role="status">{status === '' ? 'No deliveries yet.' : `No ${status} deliveries.`}</p>
      ) : (
        <ScrollTable label="Deliveries" columns={columns}>
          {rows.map((d) => (
            <tr key={d.id}>
              <td>{d.id}</td>
              <td>{d.topic}</td>
              <td>{d.status}</td>
              {of.cells(d)}
              <td className="actions">
                {of.action.offered(d) ? (
                  <button type="button" aria-label={`${of.action.name} delivery ${d.id}`} onClick={() => void act(d)}>
                    {of.action.name}
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </ScrollTable>
      )}
      {list.page > 1 || list.more ? <Pager label="Pages of deliveries" page={list.page} more={list.more} onPage={list.onPage} /> : null}
    </>
  );
}
