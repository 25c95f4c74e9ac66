import type { components } from '@loyalty-api/client';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { ErrorAlert } from '../../components/alert';
import { Pager } from '../../components/pager';
import { ScrollTable, type Column } from '../../components/scroll-table';
import { useClient } from '../../lib/api';
import { errorText } from '../../lib/errors';
import { formatTime } from '../../lib/format';
import { PAGE_SIZE, useCursorList } from '../../lib/records';

type Delivery = components['schemas']['ConnectionDelivery'];
type Status = Delivery['status'];

const STATUSES: { value: Status | ''; label: string }[] = [
  { value: '', label: 'All' },
  { value: 'failed', label: 'Failed' },
  { value: 'applied', label: 'Applied' },
  { value: 'deferred', label: 'Deferred' },
  { value: 'stale', label: 'Stale' },
  { value: 'ignored', label: 'Ignored' },
];

const COLUMNS: Column[] = [
  { label: 'Delivery' },
  { label: 'Topic' },
  { label: 'Status' },
  { label: 'Reason' },
  { label: 'Wrote' },
  { label: 'Received' },
  { label: 'Actions' },
];

/** A connection's deliveries, filtered by status, with "Replay" on a failed one whose body is kept. */
export function ConnectionDeliveriesPage({ id }: { id: number }) {
  const client = useClient();
  const statusId = useId();
  const [status, setStatus] = useState<Status | ''>('');
  const connection = useQuery({
    queryKey: ['/merchant_api/v1/connections', id],
    queryFn: async ({ signal }) => (await client.GET('/merchant_api/v1/connections/{id}', { params: { path: { id } }, signal })).data,
  });
  return (
    <>
      <p>
        <a href="#/connections">Back to connections</a>
      </p>
      <h1>Deliveries of connection {id}</h1>
      <ErrorAlert message={connection.error ? errorText(connection.error) : null} />
      {connection.data ? (
        <p className="muted" style={{ overflowWrap: 'anywhere' }}>
          {connection.data.name} ({connection.data.status}) ← {connection.data.ingest_url}
        </p>
      ) : null}
      <div className="toolbar">
        <label htmlFor={statusId}>Status</label>
        <select id={statusId} value={status} onChange={(e) => setStatus(e.target.value as Status | '')}>
          {STATUSES.map((s) => (
            <option key={s.value} value={s.value}>
              {s.label}
            </option>
          ))}
        </select>
      </div>
      <DeliveryList key={status} connectionId={id} status={status} />
    </>
  );
}

function DeliveryList({ connectionId, status }: { connectionId: number; status: Status | '' }) {
  const client = useClient();
  const queries = useQueryClient();
  const [said, setSaid] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const list = useCursorList(['connection-deliveries', connectionId, status], (since, signal) =>
    client.GET('/merchant_api/v1/connections/{id}/deliveries', {
      params: {
        path: { id: connectionId },
        query: { 'pagination[since_id]': since, 'pagination[limit]': PAGE_SIZE, ...(status === '' ? {} : { status }) },
      },
      signal,
    }),
  );
  const replay = async (delivery: Delivery) => {
    setSaid(null);
    setError(null);
    try {
      const { data } = await client.POST('/merchant_api/v1/connections/{id}/deliveries/{delivery_id}/replay', {
        params: { path: { id: connectionId, delivery_id: delivery.id } },
      });
      setSaid(`Delivery ${data.id} replayed: ${data.status}${data.error ? ` (${data.error})` : ''}.`);
    } catch (e) {
      setError(errorText(e));
    } finally {
      await queries.invalidateQueries({ queryKey: ['connection-deliveries', connectionId] });
    }
  };
  const rows = list.query.data?.data;
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
        <ScrollTable label="Deliveries" columns={COLUMNS}>
          {rows.map((d) => (
            <tr key={d.id}>
              <td>{d.id}</td>
              <td>{d.topic}</td>
              <td>{d.status}</td>
              <td>{d.error ?? ''}</td>
              <td>{d.resource ? `${d.resource} ${d.resource_id}` : ''}</td>
              <td>{formatTime(d.received_at)}</td>
              <td className="actions">
                {d.status === 'failed' && d.body_kept ? (
                  <button type="button" onClick={() => void replay(d)} aria-label={`Replay delivery ${d.id}`}>
                    Replay
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
