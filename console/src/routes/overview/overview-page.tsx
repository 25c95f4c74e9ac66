import { Fragment, useMemo, useState } from 'react';
import { QueryError } from '../../components/alert';
import { ChartFigure, type Series } from '../../components/chart';
import { ScrollTable } from '../../components/scroll-table';
import { formatCredits, formatPoints } from '../../lib/format';
import { creditUnit } from '../../lib/shop';
import { RANGES, useOverview, type ProgrammeReport, type Range, type ReportPeriod } from './use-overview';

/** The landing page: the ledger per day over a chosen range, outstanding points, tiers, and the programme in figures. */
export function OverviewPage() {
  const [days, setDays] = useState<Range>(30);
  const { shop, points, previous, programme } = useOverview(days);
  const failed = [shop, points, previous, programme].find((q) => q.error);
  return (
    <>
      <h1>Overview</h1>
      <div className="toolbar">
        <label htmlFor="overview-range">Period</label>
        <select id="overview-range" value={days} onChange={(e) => setDays(Number(e.target.value) as Range)}>
          {RANGES.map((d) => (
            <option key={d} value={d}>
              Last {d} days
            </option>
          ))}
        </select>
      </div>
      {failed ? <QueryError query={failed} /> : null}
      {points.data && previous.data ? <PeriodFigures days={days} current={points.data} previous={previous.data} /> : null}
      {programme.data ? <Figures report={programme.data} currency={creditUnit(shop.data)} /> : null}
      {points.data ? <LedgerCharts periods={points.data} /> : failed ? null : <p aria-live="polite">Loading the points report…</p>}
      {programme.data ? <TierChart report={programme.data} /> : null}
    </>
  );
}

const sum = (periods: readonly ReportPeriod[], key: 'points_earned' | 'points_redeemed' | 'points_expired') => periods.reduce((n, p) => n + p[key], 0);
const percent = new Intl.NumberFormat('en-GB', { style: 'percent', maximumFractionDigits: 1 });
const signed = new Intl.NumberFormat('en-GB', { style: 'percent', maximumFractionDigits: 0, signDisplay: 'exceptZero' });

/** A figure beside the previous period's: "+12% on the previous 30 days", or that there was none. */
function versus(now: number, before: number, days: number): string {
  if (before === 0) return now === 0 ? `as in the previous ${days} days` : `none in the previous ${days} days`;
  return `${signed.format((now - before) / before)} on the previous ${days} days (${formatPoints(before)})`;
}

/** The period in figures, each beside the period before it; the redemption rate is points redeemed per point earned. */
function PeriodFigures({ days, current, previous }: { days: number; current: ReportPeriod[]; previous: ReportPeriod[] }) {
  const rows = FLOWS.map((f) => ({ label: f.label, now: sum(current, f.key), before: sum(previous, f.key) }));
  const rate = (periods: ReportPeriod[]) => (sum(periods, 'points_earned') === 0 ? null : sum(periods, 'points_redeemed') / sum(periods, 'points_earned'));
  const [rateNow, rateBefore] = [rate(current), rate(previous)];
  return (
    <section aria-labelledby="period-heading" className="card period">
      <h2 id="period-heading">Last {days} days</h2>
      <dl>
        {rows.map((r) => (
          <Fragment key={r.label}>
            <dt>Points {r.label.toLowerCase()}</dt>
            <dd>
              {formatPoints(r.now)} <span className="muted">{versus(r.now, r.before, days)}</span>
            </dd>
          </Fragment>
        ))}
        <dt>Redemption rate</dt>
        <dd data-testid="redemption-rate">
          {rateNow === null ? 'no points earned' : percent.format(rateNow)}{' '}
          <span className="muted">
            {rateBefore === null ? `none in the previous ${days} days` : `${percent.format(rateBefore)} in the previous ${days} days`}
          </span>
        </dd>
      </dl>
    </section>
  );
}

function Figures({ report: r, currency }: { report: ProgrammeReport; currency: string }) {
  return (
    <div className="cards">
      <section aria-labelledby="programme-heading" className="card">
        <h2 id="programme-heading">Programme</h2>
        <dl>
          <dt>Customers</dt>
          <dd>{formatPoints(r.customers)}</dd>
          <dt>Customers with points</dt>
          <dd>{formatPoints(r.customers_with_points)}</dd>
          <dt>Points outstanding</dt>
          <dd data-testid="points-outstanding">{formatPoints(r.points_outstanding)}</dd>
          <dt>Points pending</dt>
          <dd>{formatPoints(r.points_pending)}</dd>
          <dt>Store credit outstanding</dt>
          <dd>
            {formatCredits(r.credits_outstanding)} {currency}
          </dd>
          <dt>Redemptions (last 30 days)</dt>
          <dd>{formatPoints(r.redemptions_last_30_days)}</dd>
        </dl>
      </section>
      <section aria-labelledby="top-rewards-heading" className="card">
        <h2 id="top-rewards-heading">Top rewards (last 30 days)</h2>
        {r.top_rewards.length === 0 ? (
          <p>No redemptions in the last 30 days.</p>
        ) : (
          <ol>
            {r.top_rewards.map((t) => (
              <li key={t.reward.id}>
                {t.reward.name}: {formatPoints(t.redemptions)}
              </li>
            ))}
          </ol>
        )}
      </section>
    </div>
  );
}

const FLOWS = [
  { key: 'points_earned', label: 'Earned', colour: '#1d4ed8' },
  { key: 'points_redeemed', label: 'Redeemed', colour: '#b45309' },
  { key: 'points_expired', label: 'Expired', colour: '#6b7280' },
] as const;

function LedgerCharts({ periods }: { periods: ReportPeriod[] }) {
  const labels = useMemo(() => periods.map((p) => p.period_start), [periods]);
  const flows = useMemo<Series[]>(() => FLOWS.map((f) => ({ label: f.label, colour: f.colour, values: periods.map((p) => p[f.key]) })), [periods]);
  const outstanding = useMemo<Series[]>(() => [{ label: 'Outstanding', colour: '#047857', values: periods.map((p) => p.points_outstanding_end) }], [periods]);
  return (
    <>
      <ChartFigure
        title="Points earned, redeemed and expired per day"
        type="bar"
        labels={labels}
        series={flows}
        table={<SeriesTable label="Points earned, redeemed and expired per day" labels={labels} series={flows} />}
      />
      <ChartFigure
        title="Outstanding points"
        type="line"
        labels={labels}
        series={outstanding}
        table={<SeriesTable label="Outstanding points at the end of each day" labels={labels} series={outstanding} />}
      />
    </>
  );
}

function TierChart({ report }: { report: ProgrammeReport }) {
  const labels = useMemo(() => report.members_by_tier.map((m) => m.vip_tier?.name ?? 'No tier'), [report]);
  const series = useMemo<Series[]>(() => [{ label: 'Customers', colour: '#7c3aed', values: report.members_by_tier.map((m) => m.customers) }], [report]);
  return (
    <ChartFigure
      title="Members by tier"
      type="bar"
      labels={labels}
      series={series}
      table={<SeriesTable label="Members by tier" first="Tier" labels={labels} series={series} />}
    />
  );
}

/** A chart's figures as a table: one row per label, one column per series. */
function SeriesTable({ label, first = 'Day', labels, series }: { label: string; first?: string; labels: string[]; series: Series[] }) {
  return (
    <ScrollTable label={label} columns={[{ label: first }, ...series.map((s) => ({ label: s.label, numeric: true }))]}>
      {labels.map((l, i) => (
        <tr key={i}>
          <td>{l}</td>
          {series.map((s) => (
            <td key={s.label} className="number">
              {formatPoints(s.values[i]!)}
            </td>
          ))}
        </tr>
      ))}
    </ScrollTable>
  );
}
