import { findCustomer } from '../../customers/repository.js';
import { balancesOf, creditsToNumber, ZERO_BALANCE } from '../../ledger/balances.js';
import { Type } from 'typebox';
import { text } from '../fields.js';
import type { Resource } from '../resource.js';

export const customers: Resource = {
  table: 'customers',
  path: 'customers',
  singular: 'customer',
  title: 'Customer',
  tag: 'Customers',
  plural: 'customers',
  id: 'remote_id',
  write: 'upsert',
  fields: {
    email: text('E-mail address, unique in the shop (case-insensitive)', 'ada@example.com', 254, { format: 'email', nullable: true, unique: 'ci' }),
    first_name: text('First name', 'Ada', 255, { nullable: true }),
    last_name: text('Last name', 'Lovelace', 255, { nullable: true }),
    phone: text('Phone number', '+44 20 7946 0958', 64, { nullable: true }),
    birthday: text('Date of birth', '1815-12-10', 10, { format: 'date', nullable: true }),
  },
  // Balances are never stored on the customer: they are what unexpired lots hold right now.
  computed: {
    schema: {
      points_balance: Type.Integer({ description: 'Points available now (unexpired lots)', examples: [1250] }),
      credits_balance: Type.Number({ description: 'Store credit available now, to the hundredth', examples: [12.5] }),
    },
    async of(db, shopId, rows, now) {
      const balances = await balancesOf(db, shopId, rows.map((r) => Number(r.remote_id)), now);
      return rows.map((row) => {
        const balance = balances.get(Number(row.remote_id)) ?? ZERO_BALANCE;
        return { points_balance: balance.points, credits_balance: creditsToNumber(balance.credits) };
      });
    },
  },
  lookup: {
    param: 'customer_identifier',
    description: 'The customer\'s remote_id, or e-mail address (case-insensitive)',
    examples: ['7012345678', 'ada@example.com'],
    find: async (db, shopId, identifier) => findCustomer(db, shopId, identifier) as Promise<Record<string, unknown> | undefined>,
  },
};
