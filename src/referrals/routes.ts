import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { showError } from '../core/validation.js';
import { validationError } from '../errors.js';
import { registerAction } from '../http/actions.js';
import { runWrite } from '../http/idempotency.js';
import { DataEnvelope, errorResponses } from '../http/schemas.js';
import { isJsonObject } from '../core/validation.js';
import { attachedErrors } from '../http/validation.js';
import { customerExists } from '../customers/repository.js';
import type { DB } from '../db/tables.js';
import { derive } from '../records/resource.js';
import { shownRecord } from '../records/repository.js';
import { identifierErrors, identifierSchema, resolveIdentifiers } from '../records/customer-identifier.js';
import { referrals } from '../records/resources/referrals.js';
import { cancelReferral, completeReferral, createReferral } from './service.js';

const TAGS = ['Referrals'];
const REFERRER = 'referrer_remote_id';

const ReferralInput = Type.Object(
  {
    referrer_remote_id: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description: "The referring customer's remote_id (or give customer_identifier, or referral_code)",
        examples: [7012345678],
      }),
    ),
    customer_identifier: Type.Optional(identifierSchema(REFERRER, referrals.fields[REFERRER]!)),
    referral_code: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "The referring customer's referral_code (or give referrer_remote_id or customer_identifier)",
        examples: ['K7QM2XH4RTCP'],
      }),
    ),
    referred_email: Type.String({
      minLength: 1,
      maxLength: 254,
      format: 'email',
      description: 'E-mail address of the invited friend',
      examples: ['grace@example.com'],
    }),
  },
  { additionalProperties: false, examples: [{ referral_code: 'K7QM2XH4RTCP', referred_email: 'grace@example.com' }] },
);

/** What both actions on a pending referral share. */
const PENDING_ACTION = {
  scope: 'referrals:write',
  singular: 'referral',
  tags: TAGS,
  codes: ['referral_not_pending'],
  conflict: { name: 'ReferralNotPending', description: 'Not pending' },
  read: (trx: DB, shopId: number, id: number, now: number) => shownRecord(trx, shopId, referrals, id, now),
} as const;

/** POST /referrals, and completing or cancelling one (reads are the generic record routes). */
export function registerReferralRoutes(server: FastifyInstance): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const Referral = derive(referrals).record;

  app.post(
    '/referrals',
    {
      config: { scope: 'referrals:write' },
      // The body's errors and an unknown referrer are reported in one 422.
      attachValidation: true,
      schema: {
        tags: TAGS,
        summary: 'Create a referral',
        description:
          "A customer, named by `referrer_remote_id`, `customer_identifier` (remote_id or e-mail) or `referral_code`, refers a friend's e-mail. Refused when the friend is the referrer (422 `self_referral`: " +
          'e-mails compared case-insensitively, dots and +tags of Gmail addresses ignored), the friend already has a paid order (422 `already_customer`), ' +
          "or the e-mail already has a pending or completed referral (422 `already_referred`). The referral completes on the friend's first paid order.",
        body: ReferralInput,
        response: {
          201: DataEnvelope(Referral),
          ...errorResponses(
            'write',
            { 422: { name: 'ReferralRefused', description: 'Unknown referrer, self-referral, already a customer, already referred, or invalid fields' } },
            ['self_referral', 'already_customer', 'already_referred'],
          ),
        },
      },
    },
    async (request, reply) => {
      const errors = attachedErrors(request).map((e) => showError(e));
      const body = (isJsonObject(request.body) ? request.body : {}) as Partial<Static<typeof ReferralInput>>;
      const { referrer_remote_id, referral_code, referred_email } = body;
      const failed = new Set(errors.map((e) => e.param));
      errors.push(...identifierErrors(referrals.fields, body, failed, false));
      const byReferrer = referrer_remote_id !== undefined || body.customer_identifier !== undefined;
      if (!failed.has(REFERRER) && !failed.has('referral_code') && byReferrer === (referral_code !== undefined)) {
        errors.push({ param: REFERRER, code: 'missing', message: 'give exactly one of referrer_remote_id (or customer_identifier) and referral_code' });
      }
      // A customer_identifier names the referrer by its remote_id.
      const valid = Object.fromEntries(Object.entries(body).filter(([name]) => !failed.has(name)));
      const resolved = await resolveIdentifiers(app.db, request.shop.id, referrals.fields, [valid]);
      errors.push(...(resolved.errors.get(0) ?? []));
      if (errors.length > 0) {
        if (typeof referrer_remote_id === 'number' && !failed.has(REFERRER) && !(await customerExists(app.db, request.shop.id, referrer_remote_id))) {
          errors.push({ param: REFERRER, code: 'customer_not_found', message: 'No customer of this shop has this remote_id' });
        }
        throw validationError(errors.sort((a, b) => a.param.localeCompare(b.param)));
      }
      return runWrite(request, reply, async (trx) => {
        const data = await createReferral(
          trx,
          request.shop.id,
          { referrerRemoteId: resolved.bodies[0]![REFERRER] as number | undefined, referralCode: referral_code, referredEmail: referred_email! },
          app.clock(),
        );
        return { status: 201, body: { data } };
      });
    },
  );

  registerAction(app, {
    ...PENDING_ACTION,
    record: Referral,
    path: '/referrals/:id/complete',
    summary: 'Complete a referral',
    description:
      "Completes a pending referral by hand (the friend's first paid order does it by itself): the referral earning rules reward the referrer and, " +
      'when the friend is a customer, the friend; sends `referral.completed`. Only a pending referral can be completed (409 `referral_not_pending`).',
    run: completeReferral,
  });
  registerAction(app, {
    ...PENDING_ACTION,
    record: Referral,
    path: '/referrals/:id/cancel',
    summary: 'Cancel a referral',
    description: 'Cancels a pending referral; the friend may then be referred again. Only a pending referral can be cancelled (409 `referral_not_pending`).',
    run: cancelReferral,
  });
}
