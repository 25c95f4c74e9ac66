import { useState } from 'react';
import { QueryError } from '../../components/alert';
import { Pager } from '../../components/pager';
import { customerName, formatCredits, formatPoints, formatTime } from '../../lib/format';
import { creditUnit, useShop } from '../../lib/shop';
import type { Customer } from '../customers/use-customers';
import { AdjustPointsForm } from './adjust-points-form';
import { CustomerData } from './customer-data';
import { EventsTable } from './events-table';
import { UpcomingExpiries, WhyThisBalance } from './lots';
import { RedemptionsTable } from './redemptions-table';
import { useCustomer } from './use-customer';

export function CustomerPage({ identifier }: { identifier: string }) {
  const [eventsPage, setEventsPage] = useState(1);
  const { customer, events, redemptions } = useCustomer(identifier, eventsPage);
  const currency = creditUnit(useShop().data);
  if (!customer.data) {
    return customer.error ? (
      <>
        <h1>Customer {identifier}</h1>
        <QueryError query={customer} what="The customer" />
      </>
    ) : (
      <p aria-live="polite">Loading customer…</p>
    );
  }
  const c = customer.data;
  return (
    <>
      <p>
        <a href="#/customers">Back to customers</a>
      </p>
      <h1>{customerName(c)}</h1>
      <p className="muted">
        {c.email ?? 'no e-mail'} · Remote ID {c.remote_id}
      </p>
      <div className="cards">
        <Balances customer={c} currency={currency} />
        <Tier customer={c} />
        <UpcomingExpiries identifier={identifier} />
      </div>
      <WhyThisBalance identifier={identifier} />
      <AdjustPointsForm identifier={identifier} currency={currency} />
      <section aria-labelledby="events-heading">
        <h2 id="events-heading">Points events</h2>
        <QueryError query={events} what="The points events" />
        {events.data ? (
          <>
            <EventsTable identifier={identifier} customer={c} events={events.data.events} redemptions={redemptions.data ?? []} />
            <Pager label="Pages of points events" page={eventsPage} more={events.data.more} onPage={setEventsPage} />
          </>
        ) : null}
      </section>
      <section aria-labelledby="redemptions-heading">
        <h2 id="redemptions-heading">Redemptions</h2>
        <QueryError query={redemptions} what="The redemptions" />
        {redemptions.data ? <RedemptionsTable identifier={identifier} redemptions={redemptions.data} /> : null}
      </section>
      <CustomerData identifier={identifier} name={customerName(c)} remoteId={c.remote_id} />
    </>
  );
}

function Balances({ customer: c, currency }: { customer: Customer; currency: string }) {
  return (
    <section aria-labelledby="balances-heading" className="card">
      <h2 id="balances-heading">Balances</h2>
      <dl>
        <dt>Points</dt>
        <dd data-testid="points-balance">{formatPoints(c.points_balance)}</dd>
        <dt>Store credit</dt>
        <dd>
          {formatCredits(c.credits_balance)} {currency}
        </dd>
        <dt>Pending points</dt>
        <dd>{formatPoints(c.points_pending)}</dd>
        <dt>Earned (lifetime)</dt>
        <dd>{formatPoints(c.points_earned_lifetime)}</dd>
        <dt>Spent (lifetime)</dt>
        <dd>{formatPoints(c.points_spent_lifetime)}</dd>
        <dt>Next expiry</dt>
        <dd>{c.next_expiry ? `${formatPoints(c.next_expiry.points)} points on ${formatTime(c.next_expiry.expires_at)}` : 'nothing expires'}</dd>
      </dl>
    </section>
  );
}

function Tier({ customer: c }: { customer: Customer }) {
  const progress = c.vip_tier_progress;
  const next = progress.next_tier;
  return (
    <section aria-labelledby="tier-heading" className="card">
      <h2 id="tier-heading">Tier</h2>
      <p>{c.vip_tier ? c.vip_tier.name : 'No tier'}</p>
      {next ? (
        <>
          <label htmlFor="tier-progress">
            {formatPoints(progress.points_earned)} of {formatPoints(next.points_threshold)} points to {next.name}
          </label>
          <progress id="tier-progress" max={next.points_threshold} value={Math.min(progress.points_earned, next.points_threshold)} />
          <p>{formatPoints(progress.points_needed)} points still to earn.</p>
        </>
      ) : (
        <p>{c.vip_tier ? 'The top tier.' : 'The shop has no tiers.'}</p>
      )}
    </section>
  );
}
