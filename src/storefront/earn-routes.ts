import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { claimAction } from '../earning/actions.js';
import { countsOf, waysToEarn, wayForCustomer } from '../earning/ways-to-earn.js';
import { AppError } from '../errors.js';
import { runWrite } from '../http/idempotency.js';
import { DataEnvelope } from '../http/schemas.js';
import { getShop } from '../shops/repository.js';
import { MeActionInput, MePointsEvent, MeWayToEarn } from './schemas.js';
import { storefrontErrors, STOREFRONT_ROUTE } from './scope.js';

// Ways to earn, for the shopper (docs/storefront.md): what they have done of each in its
// current period and when they may do it again, and claiming a claimable one, through the
// service the merchant's POST /customers/{customer_identifier}/actions uses.

export function registerEarnRoutes(server: FastifyInstance): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/me/ways_to_earn',
    {
      schema: {
        ...STOREFRONT_ROUTE,
        summary: 'Ways to earn, for the shopper',
        description:
          "The enabled custom_action and visit_url rules, each with what the customer has `completed` in its current period (in the shop's time zone), " +
          'whether they may do it now (`available`) and, when not, `available_at`: when the next period begins (null when never again).',
        response: { 200: DataEnvelope(Type.Array(MeWayToEarn)), ...storefrontErrors('read') },
      },
    },
    async (request) => {
      const remoteId = Number(request.customer!.remote_id);
      const [ways, counts] = await Promise.all([waysToEarn(request.db, request.shop.id), countsOf(request.db, request.shop.id, remoteId)]);
      const now = app.clock();
      return { data: ways.map((way) => wayForCustomer(way, counts.get(way.id), now, request.shop.timezone)) };
    },
  );

  app.post(
    '/me/actions',
    {
      schema: {
        ...STOREFRONT_ROUTE,
        summary: 'Claim a way to earn',
        description:
          'Claims a claimable way to earn (a visit_url rule, or a custom_action rule with `claimable`) for this customer: the same grant, limits and ' +
          'answers as POST /merchant_api/v1/customers/{customer_identifier}/actions (422 `limit_reached` with `available_at`, 422 `rule_not_found` ' +
          "for an unknown, disabled or unclaimable rule). An `Idempotency-Key` is the customer's own.",
        body: MeActionInput,
        response: {
          201: DataEnvelope(MePointsEvent),
          ...storefrontErrors('write', ['limit_reached', 'rule_not_found'], {
            422: { name: 'ClaimRefused', description: 'No such claimable rule, or the limit reached' },
          }),
        },
      },
    },
    async (request, reply) => {
      const { rule_id } = request.body;
      const remoteId = Number(request.customer!.remote_id);
      return runWrite(request, reply, async (trx) => {
        const shop = await getShop(trx, request.shop.id);
        if (shop === undefined) throw new AppError('unauthorized', 'The customer token is not valid');
        const done = await claimAction(trx, shop, remoteId, rule_id, app.clock());
        return { status: 201, body: { data: done.event } };
      });
    },
  );
}
