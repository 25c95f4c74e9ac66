import { integer, text } from '../fields.js';
import type { Resource } from '../resource.js';
import { INT32_MAX } from './rewards.js';

export const vipTiers: Resource = {
  table: 'vip_tiers',
  path: 'vip_tiers',
  singular: 'VIP tier',
  title: 'VipTier',
  tag: 'VIP tiers',
  plural: 'VIP tiers',
  id: 'id',
  write: 'crud',
  fields: {
    name: text('Name shown to customers, unique in the shop', 'Gold', 255, { required: true, sortable: true, unique: 'exact' }),
    points_threshold: integer('Points earned to reach the tier, unique in the shop', 1000, 0, INT32_MAX, { required: true, sortable: true, unique: 'exact' }),
  },
};
