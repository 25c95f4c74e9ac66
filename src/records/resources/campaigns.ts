import { Type } from 'typebox';
import type { ErrorDetail } from '../../errors.js';
import { validationError } from '../../errors.js';
import { campaignStatus, scheduleAnnouncements, unknownTierIds } from '../../earning/campaigns.js';
import { integer, list, money, text, time } from '../fields.js';
import type { Resource } from '../resource.js';
import { INT32_MAX } from './rewards.js';

const set = (value: unknown) => value !== null && value !== undefined;

export const campaigns: Resource = {
  table: 'campaigns',
  scope: 'campaigns',
  path: 'campaigns',
  singular: 'campaign',
  title: 'Campaign',
  tag: 'Campaigns',
  plural: 'campaigns',
  id: 'id',
  write: 'crud',
  description:
    'A multiplier and/or bonus points on what orders earn while the campaign runs (docs/earning.md, "Campaigns"): from starts_at (inclusive) ' +
    'to ends_at (exclusive), or to its cancellation. An order placed meanwhile earns floor(base × VIP multiplier × multiplier) + bonus_points ' +
    'under the one running campaign for its customer that gives the most (none stacks; a tie goes to the lowest id), and its points event links campaign_id. ' +
    'campaign.started and campaign.ended are announced once each; a campaign cancelled before it started announces neither.',
  // A campaign written (its times, possibly) is due to announce anew; its tiers must exist.
  effects: {
    async written(trx, w, records) {
      for (const record of records) {
        const ids = JSON.parse(String(record.values.vip_tier_ids ?? '[]')) as number[];
        const unknown = await unknownTierIds(trx, w.shopId, ids);
        if (unknown.length > 0)
          throw validationError([{ param: 'vip_tier_ids', code: 'vip_tier_not_found', message: `No VIP tier with id ${unknown.join(', ')} in this shop` }]);
      }
      await scheduleAnnouncements(
        trx,
        w.shopId,
        records.map((r) => r.id),
      );
    },
  },
  fields: {
    name: text('Name, for the merchant', 'Double points weekend', 255, { required: true, sortable: true }),
    starts_at: time('When it starts: orders placed at this instant or later earn under it', '2026-06-05T00:00:00Z', { required: true, sortable: true }),
    ends_at: time('When it ends: orders placed at this instant or later no longer earn under it', '2026-06-08T00:00:00Z', { required: true, sortable: true }),
    multiplier: money("What the order earning rule earns (after the VIP tier's multiplier) is multiplied by this, rounded down once; null for none", 2, {
      nullable: true,
      minimum: 1,
      maximum: 10,
    }),
    bonus_points: integer('Points added to what each order earns under it; null for none', 50, 1, INT32_MAX, { nullable: true }),
    vip_tier_ids: list('The VIP tiers whose members it is for; empty for every customer', [], { minimum: 1, maximum: Number.MAX_SAFE_INTEGER }, 100, {
      default: [],
    }),
    cancelled_at: time('When it was cancelled (POST /campaigns/{id}/cancel); null if it was not', '2026-06-06T09:30:00Z', { nullable: true, readOnly: true }),
  },
  check: {
    reads: ['starts_at', 'ends_at', 'multiplier', 'bonus_points'],
    rule(record) {
      const errors: ErrorDetail[] = [];
      if (Number(record.ends_at) <= Number(record.starts_at))
        errors.push({ param: 'ends_at', code: 'invalid_range', message: 'ends_at must be after starts_at' });
      // Stored shape: multiplier in hundredths.
      if (!(set(record.multiplier) && Number(record.multiplier) > 100) && !set(record.bonus_points))
        errors.push({ param: 'multiplier', code: 'missing', message: 'a campaign needs a multiplier above 1 or bonus_points, or both' });
      return errors;
    },
  },
  computed: {
    columns: ['cancelled_at'],
    schema: {
      status: Type.Union([Type.Literal('scheduled'), Type.Literal('active'), Type.Literal('ended'), Type.Literal('cancelled')], {
        description: 'scheduled before starts_at, active from starts_at until ends_at, ended from ends_at; cancelled once cancelled',
        examples: ['active'],
      }),
    },
    async of(_db, _shopId, rows, now) {
      return rows.map((row) => ({ status: campaignStatus(row as never, now) }));
    },
  },
};
