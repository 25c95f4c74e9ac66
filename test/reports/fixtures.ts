import { expect } from 'vitest';
import { API, type TestContext } from '../helpers/app.js';

export type ReportPeriod = Record<string, number> & { period_start: string; period_end: string };

export const FLOW_KINDS = ['earned', 'redeemed', 'deducted', 'expired', 'reversed', 'clawed_back'] as const;

/** GET /reports/points, answered 200. */
export async function pointsReport(t: TestContext, from: string, to: string, interval = 'day'): Promise<ReportPeriod[]> {
  const res = await t.request('GET', `${API}/reports/points`, { query: { from, to, interval } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/** Every period reconciles and starts where the one before ended. */
export function expectReconciled(periods: readonly ReportPeriod[]): void {
  for (const unit of ['points', 'credits'] as const) {
    periods.forEach((p, i) => {
      const flows = p[`${unit}_earned`]! - FLOW_KINDS.slice(1).reduce((sum, k) => sum + p[`${unit}_${k}`]!, 0);
      expect(Math.round((p[`${unit}_outstanding_start`]! + flows) * 100), `${unit} of ${p.period_start}`).toBe(Math.round(p[`${unit}_outstanding_end`]! * 100));
      if (i > 0) expect(p[`${unit}_outstanding_start`], `${unit} start of ${p.period_start}`).toBe(periods[i - 1]![`${unit}_outstanding_end`]);
    });
  }
}

/** Each column summed over the periods. */
export function columnSums(periods: readonly ReportPeriod[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const unit of ['points', 'credits'])
    for (const k of FLOW_KINDS) out[`${unit}_${k}`] = Math.round(periods.reduce((sum, p) => sum + p[`${unit}_${k}`]! * 100, 0)) / 100;
  return out;
}
