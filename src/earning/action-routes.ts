import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../errors.js';
import { CustomerParams } from '../customers/sub-lists.js';
import { runWrite } from '../http/idempotency.js';
import { DataEnvelope, errorResponses, notFoundError } from '../http/schemas.js';
import { PointsEvent } from '../ledger/schemas.js';
import { getShop } from '../shops/repository.js';
import { doAction } from './actions.js';

// The merchant says a customer did a way to earn (docs/earning.md, "Ways to earn").

const ActionInput = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'The name of an enabled custom_action or visit_url earning rule',
      examples: ['newsletter_signup'],
    }),
    distinct_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description:
          'Identifies this one action of the customer: the same distinct_id again, at any time and under any Idempotency-Key, answers 200 with the event the first granted and grants nothing',
        examples: ['newsletter-2026-03-01'],
      }),
    ),
  },
  { additionalProperties: false, examples: [{ name: 'newsletter_signup', distinct_id: 'newsletter-2026-03-01' }] },
);

export function registerActionRoutes(server: FastifyInstance): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/customers/:customer_identifier/actions',
    {
      config: { scope: 'points_events:write' },
      schema: {
        tags: ['Points events'],
        summary: 'Record an action (a way to earn)',
        description:
          'The customer did what the enabled custom_action or visit_url rule of this `name` rewards: it grants as a points event of that source, ' +
          "`custom_action_name` the rule's name and `earning_rule_id` the rule, 201 with the event. The same `distinct_id` again answers 200 with " +
          "the first event and grants nothing. Past the rule's `limit_count` per `limit_period` (in the shop's time zone): 422 `limit_reached`, " +
          'its detail carrying `available_at` (null when never again). No enabled rule of that name: 422 `rule_not_found`.',
        params: CustomerParams,
        body: ActionInput,
        response: {
          200: DataEnvelope(PointsEvent),
          201: DataEnvelope(PointsEvent),
          ...errorResponses(
            'write',
            {
              404: notFoundError('customer'),
              422: { name: 'ActionRefused', description: 'No enabled rule of that name, the limit reached, or invalid fields' },
            },
            ['limit_reached', 'rule_not_found'],
          ),
        },
      },
    },
    async (request, reply) => {
      const { customer_identifier } = request.params;
      const { name, distinct_id } = request.body;
      return runWrite(request, reply, async (trx, audit) => {
        const now = app.clock();
        const shop = await getShop(trx, request.shop.id);
        if (shop === undefined) throw new AppError('unauthorized', 'The API token is unknown or has been revoked');
        const done = await doAction(trx, shop, customer_identifier, name, distinct_id ?? null, now);
        if (done.status === 200) audit.action = 'points_event.action_repeated';
        return { status: done.status, body: { data: done.event } };
      });
    },
  );
}
