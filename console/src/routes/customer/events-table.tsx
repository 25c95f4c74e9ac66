import { useState } from 'react';
import { ConfirmButton } from '../../components/confirm-button';
import { ScrollTable, type Column } from '../../components/scroll-table';
import { formatCredits, formatPoints, formatTime } from '../../lib/format';
import { EVENT_SOURCES, labelOf } from '../../lib/labels';
import type { Customer } from '../customers/use-customers';
import { useCustomerActions, type PointsEvent, type Redemption } from './use-customer';

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

/**
 * Why the API would refuse to reverse an event, in words; null when it would not. A reversal
 * and an expiry are never reversed, a redemption's points come back by voiding it, an order's
 * by its refund, and a grant whose points are spent cannot be taken back.
 */
export function whyNotReversible(e: PointsEvent, customer: Pick<Customer, 'points_balance' | 'credits_balance'>): string | null {
  if (e.reversed_by_event_id !== null) return null;
  if (e.reverses_event_id !== null || e.source === 'expiration') return null;
  if (e.redemption_id !== null) return 'Void the redemption to give its points back';
  if (e.order_remote_id !== null) return `Follows order ${e.order_remote_id}: refund the order instead`;
  if (e.points_amount > customer.points_balance) {
    return `Spent: the customer has ${formatPoints(Math.max(0, customer.points_balance))} of its ${formatPoints(e.points_amount)} points left`;
  }
  if (e.credits_amount > customer.credits_balance) return `Spent: the customer has ${formatCredits(Math.max(0, customer.credits_balance))} store credit left`;
  return '';
}

/** The event's own note (a redemption's names its reward, when the page has it), then what reversed it. */
function eventNote(e: PointsEvent, redemptions: readonly Redemption[]): string[] {
  const redemption = e.redemption_id === null ? undefined : redemptions.find((r) => r.id === e.redemption_id);
  const own =
    e.redemption_id === null
      ? (e.internal_note ?? e.external_note)
      : redemption
        ? `${e.reverses_event_id === null ? 'Redeemed' : 'Voided'}: ${redemption.reward.name} (code ${redemption.code})`
        : `Redemption ${e.redemption_id}`;
  // A reversal's default note says what its link says already.
  const ownShown = e.reverses_event_id !== null && own?.startsWith('Reverses points event') ? null : own;
  return [
    ownShown ?? '',
    e.reverses_event_id !== null ? `Reverses event ${e.reverses_event_id}` : '',
    e.reversed_by_event_id !== null ? `Reversed by event ${e.reversed_by_event_id}` : '',
  ].filter(Boolean);
}

/** What a reversal does to the customer's points. */
const undoes = (e: PointsEvent) => (e.points_amount < 0 ? 'given back' : 'taken back');

interface EventsTableProps {
  identifier: string;
  customer: Customer;
  events: PointsEvent[];
  redemptions: readonly Redemption[];
}

export function EventsTable({ identifier, customer, events, redemptions }: EventsTableProps) {
  const { reverse } = useCustomerActions(identifier);
  const [notice, setNotice] = useState<string | null>(null);
  if (events.length === 0) return <p>No points events yet.</p>;
  const reverseEvent = async (e: PointsEvent) => {
    setNotice(null);
    const { data } = await reverse.mutateAsync(e.id);
    setNotice(`Event ${e.id} reversed: ${formatPoints(Math.abs(data.points_amount))} points ${undoes(e)} (event ${data.id}).`);
  };
  return (
    <>
      {notice ? <p role="status">{notice}</p> : null}
      <ScrollTable label="Points events" columns={COLUMNS}>
        {events.map((e) => {
          const refusal = whyNotReversible(e, customer);
          return (
            <tr key={e.id}>
              <td>{e.id}</td>
              <td>{formatTime(e.applied_at)}</td>
              <td className="words">{labelOf(EVENT_SOURCES, e.source) + (e.custom_action_name ? `: ${e.custom_action_name}` : '')}</td>
              <td className="number">{formatPoints(e.points_amount)}</td>
              <td className="number">{formatPoints(e.customer.points_balance)}</td>
              <td>
                {eventNote(e, redemptions).map((line) => (
                  <span key={line} className="line">
                    {line}
                  </span>
                ))}
              </td>
              <td>{e.points_amount > 0 ? formatTime(e.expires_at) : '—'}</td>
              <td>
                {refusal === '' ? (
                  <ConfirmButton
                    label="Reverse"
                    name={`Reverse event ${e.id}`}
                    title={`Reverse event ${e.id}?`}
                    question={`This writes a reversal event: ${formatPoints(Math.abs(e.points_amount))} points ${undoes(e)} (${labelOf(EVENT_SOURCES, e.source)}). It cannot be undone.`}
                    confirmLabel="Reverse event"
                    onConfirm={() => reverseEvent(e)}
                  />
                ) : refusal ? (
                  <span className="muted">{refusal}</span>
                ) : null}
              </td>
            </tr>
          );
        })}
      </ScrollTable>
    </>
  );
}
