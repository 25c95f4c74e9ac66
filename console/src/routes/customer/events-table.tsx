import { ConfirmButton } from '../../components/confirm-button';
import { ScrollTable, type Column } from '../../components/scroll-table';
import { formatPoints, formatTime } from '../../lib/format';
import { useCustomerActions, type PointsEvent } from './use-customer';

const COLUMNS: Column[] = [
  { label: 'Event' },
  { label: 'Applied' },
  { label: 'Source' },
  { label: 'Points', numeric: true },
  { label: 'Balance after', numeric: true },
  { label: 'Note' },
  { label: 'Expires' },
  { label: 'Actions' },
];

// What the API never reverses: a reversal itself and the sweep's expirations. A redemption's
// points come back by voiding it (below), which also voids its code.
const reversible = (e: PointsEvent) => e.reversed_by_event_id === null && e.reverses_event_id === null && e.source !== 'expiration' && e.redemption_id === null;

function eventNote(e: PointsEvent): string {
  if (e.reversed_by_event_id !== null) return `Reversed by event ${e.reversed_by_event_id}`;
  if (e.reverses_event_id !== null) return `Reverses event ${e.reverses_event_id}`;
  return e.internal_note ?? e.external_note ?? '';
}

export function EventsTable({ identifier, events }: { identifier: string; events: PointsEvent[] }) {
  const { reverse } = useCustomerActions(identifier);
  if (events.length === 0) return <p>No points events yet.</p>;
  return (
    <ScrollTable label="Points events" columns={COLUMNS}>
      {events.map((e) => (
        <tr key={e.id}>
          <td>{e.id}</td>
          <td>{formatTime(e.applied_at)}</td>
          <td>{e.custom_action_name ? `${e.source}: ${e.custom_action_name}` : e.source}</td>
          <td className="number">{formatPoints(e.points_amount)}</td>
          <td className="number">{formatPoints(e.customer.points_balance)}</td>
          <td>{eventNote(e)}</td>
          <td>{e.points_amount > 0 ? formatTime(e.expires_at) : '—'}</td>
          <td>
            {reversible(e) ? (
              <ConfirmButton
                label="Reverse"
                title={`Reverse event ${e.id}?`}
                question={`This writes a reversal event that undoes ${formatPoints(e.points_amount)} points (${e.source}). It cannot be undone.`}
                confirmLabel="Reverse event"
                onConfirm={() => reverse.mutateAsync(e.id)}
              />
            ) : null}
          </td>
        </tr>
      ))}
    </ScrollTable>
  );
}
