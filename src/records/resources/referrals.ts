import { integer, oneOf, text, time } from '../fields.js';
import type { Resource } from '../resource.js';

export const referrals: Resource = {
  table: 'referrals',
  path: 'referrals',
  scope: 'referrals',
  singular: 'referral',
  title: 'Referral',
  tag: 'Referrals',
  plural: 'referrals',
  id: 'id',
  write: 'programme',
  description:
    'A customer inviting a friend (docs/earning.md, "Referrals"): made with POST /referrals, completed by the friend\'s first paid order or ' +
    'POST /referrals/{id}/complete (the referral earning rules reward both sides), or cancelled with POST /referrals/{id}/cancel.',
  fields: {
    referrer_remote_id: integer("The referring customer's remote_id", 7012345678, 1, Number.MAX_SAFE_INTEGER, {
      required: true,
      customerIdentifier: true,
      references: { table: 'customers', column: 'remote_id', code: 'customer_not_found', message: 'No customer of this shop has this remote_id' },
    }),
    referred_email: text('E-mail address of the invited friend', 'grace@example.com', 254, { required: true, format: 'email' }),
    status: oneOf(
      "pending until the friend's first paid order (or POST /referrals/{id}/complete) completes it, or it is cancelled",
      ['pending', 'completed', 'cancelled'],
      {
        default: 'pending',
        readOnly: true,
      },
    ),
    referral_code: text("The referrer's referral_code, when the referral was made with it", 'K7QM2XH4RTCP', 12, { nullable: true, readOnly: true }),
    referred_remote_id: integer("The friend's customer, once the referral completed", 7012345679, 1, Number.MAX_SAFE_INTEGER, {
      nullable: true,
      readOnly: true,
    }),
    completed_at: time('When it completed', '2026-02-01T10:00:00.000Z', { nullable: true, readOnly: true }),
    cancelled_at: time('When it was cancelled', '2026-02-01T10:00:00.000Z', { nullable: true, readOnly: true }),
  },
};
