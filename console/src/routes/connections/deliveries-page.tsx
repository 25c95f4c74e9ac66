import type { components } from '@loyalty-api/client';
import { useQuery } from '@tanstack/react-query';
import { DeliveriesPage, type DeliveriesOf } from '../../components/deliveries';
import { useClient } from '../../lib/api';
import { formatTime } from '../../lib/format';

type Delivery = components['schemas']['ConnectionDelivery'];

/** A connection's deliveries, filtered by status, with "Replay" on a failed one whose body is kept. */
export function ConnectionDeliveriesPage({ id }: { id: number }) {
  const client = useClient();
  const connection = useQuery({
    queryKey: ['/merchant_api/v1/connections', id],
    queryFn: async ({ signal }) => (await client.GET('/merchant_api/v1/connections/{id}', { params: { path: { id } }, signal })).data,
  });
  const of: DeliveriesOf<Delivery> = {
    noun: 'connection',
    back: { href: '#/connections', label: 'Back to connections' },
    statuses: [
      { value: '', label: 'All' },
      { value: 'failed', label: 'Failed' },
      { value: 'applied', label: 'Applied' },
      { value: 'deferred', label: 'Deferred' },
      { value: 'stale', label: 'Stale' },
      { value: 'ignored', label: 'Ignored' },
    ],
    columns: [{ label: 'Reason' }, { label: 'Wrote' }, { label: 'Received' }],
    cells: (d) => (
      <>
        <td>{d.error ?? ''}</td>
        <td>{d.resource ? `${d.resource} ${d.resource_id}` : ''}</td>
        <td>{formatTime(d.received_at)}</td>
      </>
    ),
    listKey: ['connection-deliveries', id],
    load: (query, signal) => client.GET('/merchant_api/v1/connections/{id}/deliveries', { params: { path: { id }, query }, signal }),
    action: {
      name: 'Replay',
      offered: (d) => d.status === 'failed' && d.body_kept,
      run: async (d) => {
        const { data } = await client.POST('/merchant_api/v1/connections/{id}/deliveries/{delivery_id}/replay', {
          params: { path: { id, delivery_id: d.id } },
        });
        return `Delivery ${data.id} replayed: ${data.status}${data.error ? ` (${data.error})` : ''}.`;
      },
    },
  };
  const summary = connection.data ? (
    <p className="muted" style={{ overflowWrap: 'anywhere' }}>
      {connection.data.name} ({connection.data.status}) ← {connection.data.ingest_url}
    </p>
  ) : null;
  return <DeliveriesPage id={id} of={of} summary={summary} error={connection.error} />;
}
