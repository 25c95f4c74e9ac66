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

const LocalDate = (description: string) => Type.String({ format: 'date', description });

const PointsReportQuery = Type.Object({
  from: LocalDate('First day'),
  to: LocalDate('Last day (inclusive)'),
  interval: Type.Optional(Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month')], { default: 'day' })),
});

// The columns are described once, on the schema (the document has a size budget).
export const PointsReportPeriod = Type.Object(
  {
    period_start: Type.String({ format: 'date' }),
    period_end: Type.String({ format: 'date' }),
    ...Object.fromEntries(FLOW_KINDS.map((k) => [`points_${k}`, Type.Integer()])),
    points_outstanding_start: Type.Integer(),
    points_outstanding_end: Type.Integer(),
    points_pending_end: Type.Integer(),
    ...Object.fromEntries(FLOW_KINDS.map((k) => [`credits_${k}`, Type.Number()])),
    credits_outstanding_start: Type.Number(),
    credits_outstanding_end: Type.Number(),
  },
  {
    $id: 'PointsReportPeriod',
    title: 'Points report period',
    description:
      'Local days, inclusive. Flows: signed sums of each kind of event (docs/reports.md); outstanding_end = outstanding_start + earned − the others.',
  },
);

/** Reads from, to and interval: 400 naming each bad one. */
function reportRange(params: URLSearchParams): { from: number; to: number; interval: Interval } {
  const errors: ErrorDetail[] = [];
  const read = readParams(params, PointsReportQuery.properties, errors);
  const day = (name: 'from' | 'to') => {
    const text = read[name];
    const value = typeof text === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(text) ? dateDay(text) : NaN;
    if (!Number.isInteger(value) || new Date(value * 86_400_000).toISOString().slice(0, 10) !== text) {
      errors.push({
        param: name,
        code: text === undefined ? 'missing' : 'invalid_value',
        message: `${name} must be a date YYYY-MM-DD${text === undefined ? '' : `, got ${JSON.stringify(text)}`}`,
      });
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
      config: { scope: 'reports:read' },
      schema: {
        tags: TAGS,
        summary: 'Points and credits per period',
        description: "Per local day, week (from Monday) or month of the shop's timezone: at most 366, 106 or 120 periods.",
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
      config: { scope: 'reports:read' },
      schema: {
        tags: TAGS,
        summary: 'The programme in figures',
        response: { 200: DataEnvelope(ProgrammeReport), ...errorResponses('read') },
      },
    },
    async (request) => ({ data: await programmeReport(request.db, request.shop.id, app.clock()) }),
  );
}
