import { integer, oneOf, text } from '../fields.js';
import type { Resource } from '../resource.js';

export const referrals: Resource = {
  table: 'referrals',
  path: 'referrals',
  singular: 'referral',
  title: 'Referral',
  tag: 'Referrals',
  plural: 'referrals',
  id: 'id',
  write: 'crud',
  fields: {
    referrer_remote_id: integer('The referring customer\'s remote_id', 7012345678, 1, Number.MAX_SAFE_INTEGER, {
      required: true,
      references: { table: 'customers', column: 'remote_id', code: 'customer_not_found', message: 'No customer of this shop has this remote_id' },
    }),
    referred_email: text('E-mail address of the invited friend', 'grace@example.com', 254, { required: true, format: 'email' }),
    status: oneOf('pending until the friend orders; then completed (or cancelled)', ['pending', 'completed', 'cancelled'], { default: 'pending' }),
  },
};
