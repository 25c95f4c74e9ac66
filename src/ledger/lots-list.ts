import type { FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { isoTime } from '../clock.js';
import type { LotKind } from '../db/tables.js';
import type { ErrorDetail } from '../errors.js';
import { ListQuery, paginate } from '../http/pagination.js';
import { assertParams, queryParams, readParams } from '../http/query.js';
import { creditsToNumber } from './balances.js';
import { openLotsQuery, type OpenLotRow } from './lots-repository.js';
import { ALL_SOURCES } from './schemas.js';

// The list of GET /customers/{customer_identifier}/lots (read-routes.ts), "why this balance"
// (docs/ledger.md): the open lots of one customer, each with the event that granted it, whose
// remainders add up to the available balances.

const KINDS = ['points', 'credits'] as const;

const LOT_FILTERS = { kind: Type.Optional(Type.Enum([...KINDS], { description: 'Only lots of points, or of store credit' })) };

/** Offset-mode sort: `expires_at` is the order deductions consume lots in (never-expiring last, then by id). */
const SORTABLE = { expires_at: 'lots.expiry_key' } as const;

export const LotsQuery = ListQuery(Object.keys(SORTABLE), LOT_FILTERS);

export const Lot = Type.Object(
  {
    id: Type.Integer(),
    kind: Type.Enum([...KINDS]),
    amount: Type.Number({ description: 'What the grant put in: points, or store credit to the hundredth' }),
    remaining: Type.Number({ description: 'What is left of it now' }),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    points_event: Type.Object(
      {
        id: Type.Integer(),
        source: Type.Enum([...ALL_SOURCES]),
        applied_at: Type.String({ format: 'date-time' }),
        internal_note: Type.Union([Type.String(), Type.Null()]),
      },
      { additionalProperties: false, description: 'The event that granted the lot' },
    ),
  },
  { $id: 'Lot', title: 'Lot', description: 'An open lot: something left, not expired. The remainders of open lots add up to the available balances.' },
);

const amountOf = (kind: LotKind, value: number) => (kind === 'credits' ? creditsToNumber(value) : Number(value));

function lotJson(row: OpenLotRow): Static<typeof Lot> {
  const kind = row.kind;
  return {
    id: Number(row.id),
    kind,
    amount: amountOf(kind, row.amount),
    remaining: amountOf(kind, row.remaining),
    expires_at: isoTime(row.expires_at === null ? null : Number(row.expires_at)),
    created_at: isoTime(Number(row.created_at)),
    points_event: {
      id: Number(row.event_id),
      source: row.source as Static<typeof Lot>['points_event']['source'],
      applied_at: isoTime(Number(row.applied_at)),
      internal_note: row.internal_note,
    },
  };
}

const listSpec = { idColumn: 'lots.id', sortable: SORTABLE, toJson: (rows: OpenLotRow[]) => rows.map(lotJson) };

/** One page of the customer's open lots, filtered by `kind`. */
export function lotsPage(request: FastifyRequest, customerRemoteId: number, now: number) {
  const errors: ErrorDetail[] = [];
  const { kind } = readParams(queryParams(request), LOT_FILTERS, errors);
  assertParams(errors);
  return paginate(request.db, request, openLotsQuery(request.db, request.shop.id, customerRemoteId, now, kind as LotKind | undefined), listSpec);
}
