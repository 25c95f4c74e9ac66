import { useState } from 'react';
import { ErrorAlert } from '../../components/alert';
import { Pager } from '../../components/pager';
import { ScrollTable, type Column } from '../../components/scroll-table';
import { errorText } from '../../lib/errors';
import { formatCredits, formatDate, formatPoints, formatTime } from '../../lib/format';
import { EVENT_SOURCES, labelOf } from '../../lib/labels';
import { useLots, type Lot } from './use-customer';

const PAGE = 50;
/** The lots read for "Upcoming expiries": the first ones to expire. */
const EXPIRY_LOTS = 250;
const EXPIRY_DATES = 5;

const COLUMNS: Column[] = [
  { label: 'Granted' },
  { label: 'By' },
  { label: 'Kind' },
  { label: 'Granted amount', numeric: true },
  { label: 'Remaining', numeric: true },
  { label: 'Expires' },
];

const amount = (lot: Lot, value: number) => (lot.kind === 'credits' ? formatCredits(value) : formatPoints(value));
const grantedBy = (lot: Lot) =>
  `Event ${lot.points_event.id} (${labelOf(EVENT_SOURCES, lot.points_event.source)})${lot.points_event.internal_note ? `: ${lot.points_event.internal_note}` : ''}`;

/** "Why this balance": every open lot, in the order deductions use them; their remainders add up to the balances. */
export function WhyThisBalance({ identifier }: { identifier: string }) {
  const [page, setPage] = useState(1);
  const lots = useLots(identifier, page, PAGE);
  return (
    <section aria-labelledby="why-heading">
      <h2 id="why-heading">Why this balance</h2>
      <p className="muted">
        Each grant still holding something, in the order deductions use them (earliest expiry first). What remains adds up to the balances.
      </p>
      <ErrorAlert message={lots.error ? errorText(lots.error) : null} />
      {lots.data && lots.data.lots.length === 0 ? <p>No open lots: the balances are zero.</p> : null}
      {lots.data && lots.data.lots.length > 0 ? (
        <>
          <ScrollTable label="Open lots" columns={COLUMNS}>
            {lots.data.lots.map((lot) => (
              <tr key={lot.id}>
                <td>{formatTime(lot.points_event.applied_at)}</td>
                <td>{grantedBy(lot)}</td>
                <td>{lot.kind === 'credits' ? 'Store credit' : 'Points'}</td>
                <td className="number">{amount(lot, lot.amount)}</td>
                <td className="number">{amount(lot, lot.remaining)}</td>
                <td>{formatTime(lot.expires_at)}</td>
              </tr>
            ))}
          </ScrollTable>
          <Pager label="Pages of lots" page={page} more={lots.data.more} onPage={setPage} />
        </>
      ) : null}
    </section>
  );
}

/** What expires on each of the next few UTC days, from the first lots to expire. */
export function UpcomingExpiries({ identifier }: { identifier: string }) {
  const lots = useLots(identifier, 1, EXPIRY_LOTS);
  const byDate = new Map<string, { points: number; credits: number }>();
  for (const lot of lots.data?.lots ?? []) {
    if (lot.expires_at === null) continue;
    const date = formatDate(lot.expires_at);
    const sums = byDate.get(date) ?? { points: 0, credits: 0 };
    // Credits in hundredths while summed, so no float drift shows.
    sums[lot.kind] += lot.kind === 'credits' ? Math.round(lot.remaining * 100) : lot.remaining;
    byDate.set(date, sums);
  }
  const dates = [...byDate].slice(0, EXPIRY_DATES);
  return (
    <section aria-labelledby="expiries-heading" className="card">
      <h2 id="expiries-heading">Upcoming expiries</h2>
      <ErrorAlert message={lots.error ? errorText(lots.error) : null} />
      {lots.data && dates.length === 0 ? <p>Nothing the customer holds expires.</p> : null}
      {dates.length > 0 ? (
        <ul className="expiries">
          {dates.map(([date, sums]) => (
            <li key={date}>
              {[sums.points ? `${formatPoints(sums.points)} points` : '', sums.credits ? `${formatCredits(sums.credits / 100)} store credit` : '']
                .filter(Boolean)
                .join(' and ')}{' '}
              on {date}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
