import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../db/tables.js';
import { ListEnvelope, ListQuery, paginate } from '../http/pagination.js';
import { DataEnvelope } from '../http/schemas.js';
import { runWrite } from '../http/idempotency.js';
import { balancesAt } from '../ledger/balances.js';
import { derive } from '../records/resource.js';
import { referrals } from '../records/resources/referrals.js';
import { redemptionJson, redemptionsQuery, type RedemptionRow } from '../redemptions/repository.js';
import { Redemption } from '../redemptions/schemas.js';
import { redeem } from '../redemptions/service.js';
import { createReferral } from '../referrals/service.js';
import { MeRedemptionInput, MeReferralInput, MeReward } from './schemas.js';
import { storefrontErrors, STOREFRONT_ROUTE } from './scope.js';

// What a shopper does with their points and their friends: rewards they can afford, redeeming
// one, their redemptions, and referring a friend. Each goes through the service the merchant's
// route uses (redeem, createReferral), with the customer the token names.

/** The enabled rewards with what this customer can do with each. */
async function rewardsFor(db: DB, shopId: number, remoteId: number, available: number) {
  const rows = await db
    .selectFrom('rewards')
    .leftJoin(
      (eb) =>
        eb
          .selectFrom('redemptions')
          .select(['reward_id', sql<number>`count(*)`.as('n')])
          .where('shop_id', '=', shopId)
          .where('customer_remote_id', '=', remoteId)
          .groupBy('reward_id')
          .as('mine'),
      (join) => join.onRef('mine.reward_id', '=', 'rewards.id'),
    )
    .select(['rewards.id', 'rewards.name', 'rewards.kind', 'rewards.value', 'rewards.points_price', 'rewards.limit_per_customer', 'mine.n'])
    .where('rewards.shop_id', '=', shopId)
    .where('rewards.enabled', '=', 1)
    .orderBy('rewards.points_price')
    .orderBy('rewards.id')
    .execute();
  return rows.map((r) => {
    const price = Number(r.points_price);
    return {
      id: Number(r.id),
      name: r.name,
      kind: r.kind,
      value: Number(r.value) / 100,
      points_price: price,
      affordable: available >= price,
      points_needed: Math.max(0, price - available),
      redemptions_left: r.limit_per_customer === null ? null : Math.max(0, Number(r.limit_per_customer) - Number(r.n ?? 0)),
    };
  });
}

const redemptionList = { idColumn: 'redemptions.id', sortable: {}, toJson: (rows: RedemptionRow[]) => rows.map(redemptionJson) };

export function registerSpendRoutes(server: FastifyInstance): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/me/rewards',
    {
      schema: {
        ...STOREFRONT_ROUTE,
        summary: 'Rewards the shopper can redeem',
        description: 'The enabled rewards, cheapest first, each with whether the customer can afford it and how many redemptions its limit leaves them.',
        response: { 200: DataEnvelope(Type.Array(MeReward)), ...storefrontErrors('read') },
      },
    },
    async (request) => {
      const customer = request.customer!;
      const [balances] = await balancesAt(request.db, request.shop.id, [customer as Parameters<typeof balancesAt>[2][number]], app.clock());
      return { data: await rewardsFor(request.db, request.shop.id, Number(customer.remote_id), balances!.points) };
    },
  );

  app.post(
    '/me/redemptions',
    {
      schema: {
        ...STOREFRONT_ROUTE,
        summary: 'Redeem a reward',
        description:
          'As POST /merchant_api/v1/redemptions for this customer: the same checks, codes, errors and webhooks. ' +
          "An `Idempotency-Key` is the customer's own: a retry replays the first answer and spends nothing more.",
        body: MeRedemptionInput,
        response: {
          201: DataEnvelope(Redemption),
          ...storefrontErrors('write', ['reward_disabled', 'redemption_limit_reached', 'reward_out_of_codes', 'insufficient_balance'], {
            422: { name: 'RedemptionRefused', description: 'Unknown reward or customer, disabled reward, limit reached, out of codes, or not enough points' },
          }),
        },
      },
    },
    async (request, reply) => {
      const { reward_id } = request.body;
      const customer = String(request.customer!.remote_id);
      return runWrite(request, reply, async (trx) => ({
        status: 201,
        body: { data: await redeem(trx, request.shop.id, { rewardId: reward_id, customerIdentifier: customer }, app.clock()) },
      }));
    },
  );

  app.get(
    '/me/redemptions',
    {
      schema: {
        ...STOREFRONT_ROUTE,
        summary: "The shopper's redemptions",
        description: 'With their codes, oldest first, with cursor or offset pagination; `sort[order_direction]=desc` for the newest first.',
        querystring: ListQuery([]),
        response: { 200: ListEnvelope(Redemption), ...storefrontErrors('list') },
      },
    },
    async (request) =>
      paginate(request.db, request, redemptionsQuery(request.db, request.shop.id, { customerRemoteId: Number(request.customer!.remote_id) }), redemptionList),
  );

  app.post(
    '/me/referrals',
    {
      schema: {
        ...STOREFRONT_ROUTE,
        summary: 'Refer a friend',
        description:
          'As POST /merchant_api/v1/referrals with this customer as the referrer: the same checks (`self_referral`, `already_customer`, `already_referred`).',
        body: MeReferralInput,
        response: {
          201: DataEnvelope(derive(referrals).record),
          ...storefrontErrors('write', ['self_referral', 'already_customer', 'already_referred'], {
            422: { name: 'ReferralRefused', description: 'Unknown referrer, self-referral, already a customer, already referred, or invalid fields' },
          }),
        },
      },
    },
    async (request, reply) => {
      const { referred_email } = request.body;
      const referrerRemoteId = Number(request.customer!.remote_id);
      return runWrite(request, reply, async (trx) => ({
        status: 201,
        body: { data: await createReferral(trx, request.shop.id, { referrerRemoteId, referredEmail: referred_email }, app.clock()) },
      }));
    },
  );
}
