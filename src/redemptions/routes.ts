import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { pathId } from '../core/ids.js';
import { CUSTOMER_FILTER, filteredCustomer } from '../customers/filter.js';
import { registerCustomerList } from '../customers/sub-lists.js';
import { shopRowCount } from '../db/counts.js';
import type { DB } from '../db/tables.js';
import { notFound } from '../errors.js';
import { registerAction } from '../http/actions.js';
import { runWrite } from '../http/idempotency.js';
import { ListEnvelope, ListQuery, paginate } from '../http/pagination.js';
import { queryParams } from '../http/query.js';
import { DataEnvelope, errorResponses, notFoundError, PathId } from '../http/schemas.js';
import { redemptionJson, redemptionsQuery, type RedemptionRow } from './repository.js';
import { CodePool, CodesInput, MAX_CODES_PER_REQUEST, Redemption, RedemptionInput } from './schemas.js';
import { addCodes, codePool, redeem, useRedemption, voidRedemption } from './service.js';

/** The redemption as shown; undefined when the shop has none with this id. */
async function shownRedemption(trx: DB, shopId: number, id: number): Promise<Record<string, unknown> | undefined> {
  const row = await redemptionsQuery(trx, shopId).where('redemptions.id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : redemptionJson(row);
}

const TAGS = ['Redemptions'];

const IdParams = Type.Object({ id: PathId("The redemption's id", 31) });
const RewardParams = Type.Object({ id: PathId("The reward's id", 12) });

const listSpec = { idColumn: 'redemptions.id', sortable: {}, toJson: (rows: RedemptionRow[]) => rows.map(redemptionJson) };

/** Redemptions, and the code pools of rewards. */
export function registerRedemptionRoutes(server: FastifyInstance): void {
  // Request types follow from each route's schemas.
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/redemptions',
    {
      config: { scope: 'redemptions:write' },
      schema: {
        tags: TAGS,
        summary: 'Redeem a reward',
        description:
          'In one transaction: the reward must exist and be enabled (422 `reward_disabled`), the customer must be under its `limit_per_customer` ' +
          '(422 `redemption_limit_reached`; voided redemptions count too) and able to afford its `points_price` (422 `insufficient_balance`). ' +
          'A `reward_redemption` points event spends the points, first-expiring lots first, and a code is issued: the next unused code of the ' +
          "reward's uploaded pool (422 `reward_out_of_codes` when every one is issued), or, for a reward that never had a pool, a generated one " +
          '(`code_prefix` and 12 characters, unique in the shop). Sends `redemption.created`.',
        body: RedemptionInput,
        response: {
          201: DataEnvelope(Redemption),
          ...errorResponses(
            'write',
            {
              422: { name: 'RedemptionRefused', description: 'Unknown reward or customer, disabled reward, limit reached, out of codes, or not enough points' },
            },
            ['reward_disabled', 'redemption_limit_reached', 'reward_out_of_codes', 'insufficient_balance'],
          ),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      return runWrite(request, reply, async (trx) => {
        const data = await redeem(trx, request.shop.id, { rewardId: body.reward_id, customerIdentifier: body.customer_identifier }, app.clock());
        return { status: 201, body: { data } };
      });
    },
  );

  app.get(
    '/redemptions',
    {
      config: { scope: 'redemptions:read' },
      schema: {
        tags: TAGS,
        summary: 'List redemptions',
        description: "The shop's redemptions, newest last, with cursor or offset pagination; `customer_identifier` narrows to one customer.",
        querystring: ListQuery([], CUSTOMER_FILTER),
        response: { 200: ListEnvelope(Redemption), ...errorResponses('list') },
      },
    },
    async (request) => {
      const customer = await filteredCustomer(request.db, request.shop.id, queryParams(request));
      if (customer === undefined) {
        const total = () => shopRowCount(request.db, request.shop.id, 'redemptions');
        return paginate(request.db, request, redemptionsQuery(request.db, request.shop.id), { ...listSpec, total });
      }
      return paginate(request.db, request, redemptionsQuery(request.db, request.shop.id, { customerRemoteId: customer }), listSpec);
    },
  );

  app.get(
    '/redemptions/:id',
    {
      config: { scope: 'redemptions:read' },
      schema: {
        tags: TAGS,
        summary: 'Retrieve a redemption',
        params: IdParams,
        response: { 200: DataEnvelope(Redemption), ...errorResponses('read', { 404: notFoundError('redemption') }) },
      },
    },
    async (request) => {
      const { id } = request.params;
      const redemptionId = pathId(id, 'redemption');
      const row = await redemptionsQuery(request.db, request.shop.id).where('redemptions.id', '=', redemptionId).executeTakeFirst();
      if (row === undefined) throw notFound('redemption', id);
      return { data: redemptionJson(row) };
    },
  );

  registerAction(app, {
    path: '/redemptions/:id/use',
    scope: 'redemptions:write',
    singular: 'redemption',
    tags: TAGS,
    summary: 'Mark a redemption as used',
    description:
      'Records that the platform consumed the code. Only an issued redemption whose code has not expired can be marked as used (409 `redemption_not_usable`).',
    record: Redemption,
    codes: ['redemption_not_usable'],
    conflict: { name: 'RedemptionNotUsable', description: 'Not issued or its code expired' },
    read: shownRedemption,
    run: useRedemption,
  });
  registerAction(app, {
    path: '/redemptions/:id/void',
    scope: 'redemptions:write',
    singular: 'redemption',
    tags: TAGS,
    summary: 'Void a redemption',
    description:
      'Gives the points back exactly: a `reversal` event returns them into the very lots they came from, with their original expiry. ' +
      "The code is not returned to the pool and the redemption still counts towards the reward's limit per customer. " +
      'Only an issued redemption can be voided (409 `redemption_not_voidable`). Sends `redemption.voided`.',
    record: Redemption,
    codes: ['redemption_not_voidable'],
    conflict: { name: 'RedemptionNotVoidable', description: 'Already used or voided' },
    read: shownRedemption,
    run: voidRedemption,
  });

  registerCustomerList(app, {
    path: 'redemptions',
    scope: 'redemptions:read',
    tags: TAGS,
    summary: "List a customer's redemptions",
    querystring: ListQuery([]),
    item: Redemption,
    page: (request, customerRemoteId) => paginate(request.db, request, redemptionsQuery(request.db, request.shop.id, { customerRemoteId }), listSpec),
  });

  app.post(
    '/rewards/:id/codes',
    {
      config: { scope: 'rewards:write' },
      schema: {
        tags: ['Rewards'],
        summary: "Add codes to a reward's pool",
        description:
          `Adds 1 to ${MAX_CODES_PER_REQUEST} codes, all or nothing; a code given twice, or already held in the shop (in any pool, or issued), ` +
          'refuses the request (422, each clash listed). Redemptions of the reward then issue these codes, oldest upload first, each at most once.',
        params: RewardParams,
        body: CodesInput,
        response: { 201: DataEnvelope(CodePool), ...errorResponses('write', { 404: notFoundError('reward') }) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const { codes } = request.body;
      return runWrite(request, reply, async (trx, audit) => {
        const data = await addCodes(trx, request.shop.id, pathId(id, 'reward'), codes, app.clock());
        // The codes are secrets: the log says how many.
        audit.action = 'reward.codes_added';
        audit.resourceId = id;
        audit.changes = { codes_added: [null, codes.length] };
        return { status: 201, body: { data } };
      });
    },
  );

  app.get(
    '/rewards/:id/codes',
    {
      config: { scope: 'rewards:read' },
      schema: {
        tags: ['Rewards'],
        summary: "Count a reward's codes",
        description: 'How many uploaded codes are left, and how many were issued.',
        params: RewardParams,
        response: { 200: DataEnvelope(CodePool), ...errorResponses('read', { 404: notFoundError('reward') }) },
      },
    },
    async (request) => {
      const { id } = request.params;
      return { data: await codePool(request.db, request.shop.id, pathId(id, 'reward')) };
    },
  );
}
