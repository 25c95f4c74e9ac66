import type { components } from '@loyalty-api/client';
import { useQuery } from '@tanstack/react-query';
import { DeliveriesPage as Deliveries, type DeliveriesOf } from '../../components/deliveries';
import { useClient } from '../../lib/api';
import { formatTime } from '../../lib/format';

type Delivery = components['schemas']['WebhookDelivery'];

const lastAttempt = (d: Delivery): string => {
  const last = d.attempts[d.attempts.length - 1];
  if (!last) return 'none yet';
  return last.error ?? `HTTP ${last.status_code}`;
};

/** A webhook's deliveries, filtered by status, with "Retry" (send now) on every one not yet delivered. */
export function DeliveriesPage({ id }: { id: number }) {
  const client = useClient();
  const webhook = useQuery({
    queryKey: ['/merchant_api/v1/webhooks', id],
    queryFn: async ({ signal }) => (await client.GET('/merchant_api/v1/webhooks/{id}', { params: { path: { id } }, signal })).data,
  });
  const of: DeliveriesOf<Delivery> = {
    noun: 'webhook',
    back: { href: '#/webhooks', label: 'Back to webhooks' },
    statuses: [
      { value: '', label: 'All' },
      { value: 'failed', label: 'Failed' },
      { value: 'pending', label: 'Pending' },
      { value: 'delivered', label: 'Delivered' },
    ],
    columns: [{ label: 'Attempts', numeric: true }, { label: 'Last attempt' }, { label: 'Queued' }],
    cells: (d) => (
      <>
        <td className="number">{d.attempt_count}</td>
        <td>{lastAttempt(d)}</td>
        <td>{formatTime(d.created_at)}</td>
      </>
    ),
    listKey: ['deliveries', id],
    load: (query, signal) => client.GET('/merchant_api/v1/webhooks/{id}/deliveries', { params: { path: { id }, query }, signal }),
    action: {
      name: 'Retry',
      offered: (d) => d.status !== 'delivered',
      run: async (d) => {
        const { data } = await client.POST('/merchant_api/v1/webhooks/{id}/deliveries/{delivery_id}/retry', { params: { path: { id, delivery_id: d.id } } });
        return `Delivery ${data.id} is ${data.status} again: it is sent at the next run of the delivery job.`;
      },
    },
  };
  const summary = webhook.data ? (
    <p className="muted">
      {webhook.data.topics.includes('*') ? 'Every topic' : webhook.data.topics.join(', ')} → {webhook.data.url}
    </p>
  ) : null;
  return <Deliveries id={id} of={of} summary={summary} error={webhook.error} />;
}
