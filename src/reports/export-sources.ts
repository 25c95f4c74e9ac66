import type { SelectQueryBuilder } from 'kysely';
import type { TProperties, TSchema } from 'typebox';
import { CUSTOMER_FILTER, filteredCustomer } from '../customers/filter.js';
import type { DB } from '../db/tables.js';
import type { ErrorDetail } from '../errors.js';
import { assertParams, readParams } from '../http/query.js';
import { eventJson } from '../ledger/event-json.js';
import { eventsQuery, type EventRow } from '../ledger/events-repository.js';
import { EVENT_FILTERS, parseEventFilters } from '../ledger/filters.js';
import { PointsEvent } from '../ledger/schemas.js';
import { derive, recordsJson, type Resource, type Row } from '../records/resource.js';
import { selectRecords } from '../records/repository.js';
import { customers } from '../records/resources/customers.js';
import { orders } from '../records/resources/orders.js';
import { redemptionJson, redemptionsQuery, type RedemptionRow } from '../redemptions/repository.js';
import { Redemption } from '../redemptions/schemas.js';

// What each export holds: the list endpoint's rows, filters and JSON, walked by ID
// (export-csv.ts). One description per exported list, as the list routes have.

export interface ExportSource {
  /** The record's schema: its properties name the columns. */
  record: TSchema;
  /** The list endpoint's filters. */
  filters: TProperties;
  /** The ID column, qualified as the query needs it. */
  idColumn: string;
  /** The filtered rows of the shop, unordered (the walk adds the order and the pages). */
  query(db: DB, shopId: number, params: URLSearchParams): Promise<SelectQueryBuilder<any, any, any>>;
  toJson(db: DB, shopId: number, rows: any[], now: number): Promise<object[]> | object[];
}

function recordSource(r: Resource): ExportSource {
  const filters = Object.fromEntries(Object.entries(r.filters ?? {}).map(([name, f]) => [name, f.schema]));
  return {
    record: derive(r).record,
    filters,
    idColumn: r.id,
    async query(db, shopId, params) {
      const errors: ErrorDetail[] = [];
      const wanted = Object.entries(readParams(params, filters, errors)).filter(([, value]) => value !== undefined);
      assertParams(errors);
      return wanted.reduce((query, [name, value]) => r.filters![name]!.apply(query, value!), selectRecords(db, shopId, r));
    },
    toJson: (db, shopId, rows: Row[], now) => recordsJson(db, shopId, r, rows, now),
  };
}

export const EXPORTS = {
  customers: recordSource(customers),
  points_events: {
    record: PointsEvent,
    filters: { ...EVENT_FILTERS, ...CUSTOMER_FILTER },
    idColumn: 'points_events.id',
    async query(db, shopId, params) {
      const filters = parseEventFilters(params);
      const customer = await filteredCustomer(db, shopId, params);
      if (customer !== undefined) filters.customerRemoteId = customer;
      return eventsQuery(db, shopId, filters);
    },
    toJson: (_db, _shopId, rows: EventRow[]) => rows.map((row) => eventJson(row, row.email, row.reversed_by_event_id)),
  },
  orders: recordSource(orders),
  redemptions: {
    record: Redemption,
    filters: CUSTOMER_FILTER,
    idColumn: 'redemptions.id',
    async query(db, shopId, params) {
      const customer = await filteredCustomer(db, shopId, params);
      return redemptionsQuery(db, shopId, customer === undefined ? {} : { customerRemoteId: customer });
    },
    toJson: (_db, _shopId, rows: RedemptionRow[]) => rows.map(redemptionJson),
  },
} satisfies Record<string, ExportSource>;

export type ExportName = keyof typeof EXPORTS;
export const EXPORT_NAMES = Object.keys(EXPORTS) as ExportName[];
