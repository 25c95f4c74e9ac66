import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { dateDay } from '../core/time-zones.js';
import { type ErrorDetail } from '../errors.js';
import { assertParams, queryParams, readParams } from '../http/query.js';
import { DataEnvelope, errorResponses } from '../http/schemas.js';
import { FLOW_KINDS } from '../ledger/totals.js';
import { ProgrammeReport, programmeReport } from './programme.js';
import { MAX_PERIODS, periodJson, periodsOf, pointsReport, type Interval } from './points-report.js';

const TAGS = ['Reports'];

const LocalDate = (description: string) => Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description, examples: ['2026-01-01'] });

const PointsReportQuery = Type.Object({
  from: LocalDate('First day of the report (inclusive), local to the shop\'s timezone'),
  to: LocalDate('Last day of the report (inclusive), local to the shop\'s timezone'),
  interval: Type.Optional(Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month')], { description: 'Length of each period (weeks start on Monday); default day' })),
});

const points = (description: string) => Type.Integer({ description });
const credits = (description: string) => Type.Number({ description, multipleOf: 0.01 });
const FLOW_DOCS: Record<(typeof FLOW_KINDS)[number], string> = {
  earned: 'granted (any source but those below; a pending grant when released)',
  redeemed: 'taken by reward redemptions',
  deducted: 'taken by every other deduction',
  expired: 'written off as expired',
  reversed: 'taken back by reversals (negative when reversals gave back more, as a void does)',
  clawed_back: 'taken back from available balances by refunds of orders',
};

export const PointsReportPeriod = Type.Object(
  {
    period_start: Type.String({ format: 'date', description: 'First local day of the period' }),
    period_end: Type.String({ format: 'date', description: 'Last local day of the period (inclusive)' }),
    ...Object.fromEntries(FLOW_KINDS.map((k) => [`points_${k}`, points(`Points ${FLOW_DOCS[k]}`)])),
    points_outstanding_start: points('Available (stored) points of every customer when the period starts'),
    points_outstanding_end: points('… and when it ends: start + earned − redeemed − deducted − expired − reversed − clawed_back'),
    points_pending_end: points('Pending points of every customer when the period ends'),
    ...Object.fromEntries(FLOW_KINDS.map((k) => [`credits_${k}`, credits(`Credits ${FLOW_DOCS[k]}`)])),
    credits_outstanding_start: credits('Store credit of every customer when the period starts'),
    credits_outstanding_end: credits('… and when it ends'),
  },
  { $id: 'PointsReportPeriod', title: 'Points report period' },
);

/** Reads from, to and interval: 400 naming each bad one. */
function reportRange(params: URLSearchParams): { from: number; to: number; interval: Interval } {
  const errors: ErrorDetail[] = [];
  const read = readParams(params, PointsReportQuery.properties, errors);
  const day = (name: 'from' | 'to') => {
    const text = read[name];
    const value = typeof text === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(text) ? dateDay(text) : NaN;
    if (!Number.isInteger(value) || new Date(value * 86_400_000).toISOString().slice(0, 10) !== text) {
      errors.push({ param: name, code: text === undefined ? 'missing' : 'invalid_value', message: `${name} must be a date YYYY-MM-DD${text === undefined ? '' : `, got ${JSON.stringify(text)}`}` });
    }
    return value;
  };
  const from = day('from');
  const to = day('to');
  const interval = (read.interval ?? 'day') as Interval;
  assertParams(errors);
  if (to < from) errors.push({ param: 'to', code: 'invalid_value', message: 'to must not be before from' });
  // A month is at most 31 days: a range that long has too many periods of any interval.
  else if (to - from >= MAX_PERIODS[interval] * 31 || periodsOf(from, to, interval).length > MAX_PERIODS[interval]) {
    errors.push({ param: 'to', code: 'invalid_value', message: `A report has at most ${MAX_PERIODS[interval]} periods of a ${interval}` });
  }
  assertParams(errors);
  return { from, to, interval };
}

/** The reports: the ledger per period, the programme in figures. */
export function registerReportRoutes(server: FastifyInstance): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/reports/points',
    {
      schema: {
        tags: TAGS,
        summary: 'Points and credits per period',
        description:
          'The ledger per local day, week or month of the shop\'s timezone (at most 366 days, 106 weeks or 120 months): each column sums one kind of ' +
          'event by applied_at, each period reconciles exactly and starts where the one before ended, and the last one ends at the sum of the customers\' balances.',
        querystring: PointsReportQuery,
        response: { 200: Type.Object({ data: Type.Array(PointsReportPeriod) }), ...errorResponses('list') },
      },
    },
    async (request) => {
      const { from, to, interval } = reportRange(queryParams(request));
      // The columns of each kind are made from FLOW_KINDS, as the schema's are.
      return { data: (await pointsReport(request.db, request.shop.id, from, to, interval)).map(periodJson) as Static<typeof PointsReportPeriod>[] };
    },
  );

  app.get(
    '/reports/programme',
    {
      schema: {
        tags: TAGS,
        summary: 'The programme in figures',
        description: 'Customers, balances, tiers and redemptions of the last 30 days, from counters kept as they change: the same cost whatever the shop\'s size.',
        response: { 200: DataEnvelope(ProgrammeReport), ...errorResponses('read') },
      },
    },
    async (request) => ({ data: await programmeReport(request.db, request.shop.id, app.clock()) }),
  );
}
