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

type Delivery = components['schemas']['WebhookDelivery'];
type Status = Delivery['status'];

const STATUSES: { value: Status | ''; label: string }[] = [
  { value: '', label: 'All' },
  { value: 'failed', label: 'Failed' },
  { value: 'pending', label: 'Pending' },
  { value: 'delivered', label: 'Delivered' },
];

const COLUMNS: Column[] = [
  { label: 'Delivery' },
  { label: 'Topic' },
  { label: 'Status' },
  { label: 'Attempts', numeric: true },
  { label: 'Last attempt' },
  { label: 'Queued' },
  { label: 'Actions' },
];

const lastAttempt = (d: Delivery): string => {
  const last = d.attempts[d.attempts.length - 1];
  if (!last) return 'none yet';
  return last.error ?? `HTTP ${last.status_code}`;
};

/** A webhook's deliveries, filtered by status, with "Retry" (send now) on every one not yet delivered. */
export function DeliveriesPage({ id }: { id: number }) {
  const client = useClient();
  const statusId = useId();
  const [status, setStatus] = useState<Status | ''>('');
  const webhook = useQuery({
    queryKey: ['/merchant_api/v1/webhooks', id],
    queryFn: async ({ signal }) => (await client.GET('/merchant_api/v1/webhooks/{id}', { params: { path: { id } }, signal })).data,
  });
  return (
    <>
      <p>
        <a href="#/webhooks">Back to webhooks</a>
      </p>
      <h1>Deliveries of webhook {id}</h1>
      <ErrorAlert message={webhook.error ? errorText(webhook.error) : null} />
      {webhook.data ? (
        <p className="muted">
          {webhook.data.topics.includes('*') ? 'Every topic' : webhook.data.topics.join(', ')} → {webhook.data.url}
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
      {/* A new filter starts again from the first page. */}
      <DeliveryList key={status} webhookId={id} status={status} />
    </>
  );
}

function DeliveryList({ webhookId, status }: { webhookId: number; status: Status | '' }) {
  const client = useClient();
  const queries = useQueryClient();
  const [said, setSaid] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const key = ['deliveries', webhookId, status];
  const list = useCursorList(key, (since, signal) =>
    client.GET('/merchant_api/v1/webhooks/{id}/deliveries', {
      params: {
        path: { id: webhookId },
        query: { 'pagination[since_id]': since, 'pagination[limit]': PAGE_SIZE, ...(status === '' ? {} : { status }) },
      },
      signal,
    }),
  );
  const retry = async (delivery: Delivery) => {
    setSaid(null);
    setError(null);
    try {
      const { data } = await client.POST('/merchant_api/v1/webhooks/{id}/deliveries/{delivery_id}/retry', {
        params: { path: { id: webhookId, delivery_id: delivery.id } },
      });
      setSaid(`Delivery ${data.id} is ${data.status} again: it is sent at the next run of the delivery job.`);
    } catch (e) {
      setError(errorText(e));
    } finally {
      await queries.invalidateQueries({ queryKey: ['deliveries', webhookId] });
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
              <td className="number">{d.attempt_count}</td>
              <td>{lastAttempt(d)}</td>
              <td>{formatTime(d.created_at)}</td>
              <td className="actions">
                {d.status !== 'delivered' ? (
                  <button type="button" aria-label={`Retry delivery ${d.id}`} onClick={() => void retry(d)}>
                    Retry
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
