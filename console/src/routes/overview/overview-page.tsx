import { useMemo, useState } from 'react';
import { ErrorAlert } from '../../components/alert';
import { ChartFigure, type Series } from '../../components/chart';
import { ScrollTable } from '../../components/scroll-table';
import { errorText } from '../../lib/errors';
import { formatCredits, formatPoints } from '../../lib/format';
import { RANGES, useOverview, type ProgrammeReport, type Range, type ReportPeriod } from './use-overview';

/** The landing page: the ledger per day over a chosen range, outstanding points, tiers, and the programme in figures. */
export function OverviewPage() {
  const [days, setDays] = useState<Range>(30);
  const { shop, points, programme } = useOverview(days);
  const error = shop.error ?? points.error ?? programme.error;
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
      <ErrorAlert message={error ? errorText(error) : null} />
      {programme.data ? <Figures report={programme.data} /> : null}
      {points.data ? <LedgerCharts periods={points.data} /> : error ? null : <p aria-live="polite">Loading the points report…</p>}
      {programme.data ? <TierChart report={programme.data} /> : null}
    </>
  );
}

function Figures({ report: r }: { report: ProgrammeReport }) {
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
          <dd>{formatCredits(r.credits_outstanding)}</dd>
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
