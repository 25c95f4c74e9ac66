import { Type } from 'typebox';
import { isoTime } from '../../clock.js';
import { settleOrders } from '../../earning/orders.js';
import { creditsToNumber } from '../../ledger/balances.js';
import { followOrderCodes } from '../../redemptions/orders.js';
import { integer, list, money, oneOf, text, time } from '../fields.js';
import type { Resource } from '../resource.js';

export const CURRENCY = { pattern: '^[A-Z]{3}$' } as const;

export const orders: Resource = {
  table: 'orders',
  path: 'orders',
  scope: 'orders',
  singular: 'order',
  title: 'Order',
  tag: 'Orders',
  plural: 'orders',
  id: 'remote_id',
  write: 'upsert',
  // An order's ledger follows its financial_status (docs/earning.md, "Orders"), and so do the
  // redemptions whose codes it used.
  effects: {
    async written(trx, w, written) {
      await settleOrders(
        trx,
        w.shopId,
        written.map((r) => r.id),
        w.now,
        { earn: w.earn },
      );
      await followOrderCodes(
        trx,
        w.shopId,
        written.map((r) => ({
          remoteId: r.id,
          status: String(r.values.financial_status),
          placedAt: Number(r.values.placed_at),
          codes: r.values.discount_codes === null || r.values.discount_codes === undefined ? [] : (JSON.parse(String(r.values.discount_codes)) as string[]),
        })),
        w.now,
      );
    },
  },
  fields: {
    // Synced records arrive in any order, so the customer need not have been synced yet.
    customer_remote_id: integer("The ordering customer's remote_id; null for a guest checkout", 7012345678, 1, Number.MAX_SAFE_INTEGER, {
      nullable: true,
      customerIdentifier: true,
    }),
    total: money('Order total, in currency', 59.9, { required: true, sortable: true }),
    currency: text('ISO 4217 currency code', 'EUR', 3, { ...CURRENCY, required: true }),
    financial_status: oneOf(
      'Payment state, as the platform reports it. The first paid (or partially_refunded) earns by the order earning rule, once; partially_refunded ' +
        'and refunded take back a share of what it earned, in proportion to total_refunded (all of it when refunded)',
      ['paid', 'pending', 'authorized', 'partially_paid', 'partially_refunded', 'refunded', 'voided', 'cancelled'],
      { required: true },
    ),
    total_refunded: money('Amount refunded so far, in currency (cumulative); 0 when left out', 0, { default: 0 }),
    discount_codes: list(
      "Codes the order used at checkout. A code of the shop's issued redemption marks it used by this order; when the order becomes refunded, " +
        'voided or cancelled, that redemption is voided and its points return (shop setting restore_redeemed_points_on_refund). Other codes are kept and change nothing',
      ['SUMMER-7KQ2M9XH4RTC'],
      { maxLength: 255 },
      20,
    ),
    placed_at: time('When the customer placed the order; pending points are released points_pending_days after it', '2026-01-15T12:00:00.000Z', {
      required: true,
      sortable: true,
    }),
  },
  check: {
    reads: ['total', 'total_refunded'],
    // A refund share above the whole would take back more points than the order earned.
    rule: (record) =>
      Number(record.total_refunded ?? 0) > Number(record.total)
        ? [{ param: 'total_refunded', code: 'exceeds_total', message: 'total_refunded must not be more than total' }]
        : [],
  },
  // What the order did to the ledger (docs/earning.md), kept on the order by the earning rules.
  computed: {
    columns: [
      'points_earned',
      'points_reversed',
      'points_unrecovered',
      'points_pending',
      'pending_release_at',
      'credits_earned',
      'credits_reversed',
      'credits_unrecovered',
    ],
    schema: {
      points_earned: Type.Integer({ description: 'Points the order earned by the order rule (pending ones included)', examples: [59] }),
      points_reversed: Type.Integer({ description: 'Points its refunds took back, pending ones first', examples: [0] }),
      points_unrecovered: Type.Integer({ description: 'Points its refunds could not take back: the customer had spent them', examples: [0] }),
      points_pending: Type.Integer({ description: 'Earned points not spendable yet', examples: [0] }),
      pending_release_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
        description: 'When the pending points become spendable; null when none are pending',
      }),
      credits_earned: Type.Number({ description: 'Store credit the order earned', examples: [0] }),
      credits_reversed: Type.Number({ description: 'Store credit its refunds took back', examples: [0] }),
      credits_unrecovered: Type.Number({ description: 'Store credit its refunds could not take back', examples: [0] }),
    },
    async of(_db, _shopId, rows) {
      const n = (v: unknown) => Number(v ?? 0);
      return rows.map((row) => ({
        points_earned: n(row.points_earned),
        points_reversed: n(row.points_reversed),
        points_unrecovered: n(row.points_unrecovered),
        points_pending: n(row.points_pending),
        pending_release_at: row.pending_release_at === null || row.pending_release_at === undefined ? null : isoTime(Number(row.pending_release_at)),
        credits_earned: creditsToNumber(n(row.credits_earned)),
        credits_reversed: creditsToNumber(n(row.credits_reversed)),
        credits_unrecovered: creditsToNumber(n(row.credits_unrecovered)),
      }));
    },
  },
};
