import type { components } from '@loyalty-api/client';
import { useQuery } from '@tanstack/react-query';
import { ConfirmButton } from '../../components/confirm-button';
import type { FieldSpec } from '../../components/record-form';
import { RecordSection, type RecordKind } from '../../components/record-section';
import { useClient } from '../../lib/api';
import { errorText } from '../../lib/errors';
import { formatCredits, formatPoints, formatTime } from '../../lib/format';
import { CAMPAIGN_STATUSES, labelOf } from '../../lib/labels';
import { recordApi, type Row } from '../../lib/records';

// Campaigns (docs/earning.md): a multiplier and/or bonus points on what orders earn
// between two times, for everyone or some VIP tiers. The status is the API's, derived from the
// times and a cancellation.

type Campaign = components['schemas']['Campaign'];
type Tier = Pick<components['schemas']['VipTier'], 'id' | 'name'>;

const PATH = '/merchant_api/v1/campaigns';

/** What a campaign adds to an order's points, in words. */
function gives(c: Row): string {
  const parts = [
    c.multiplier === null ? null : `× ${formatCredits(Number(c.multiplier))}`,
    c.bonus_points === null ? null : `+ ${formatPoints(Number(c.bonus_points))} points`,
  ];
  return parts.filter(Boolean).join(' ') || '—';
}

/** Whom a campaign is for: every customer, or the members of its tiers (by name when the tiers are known). */
function members(c: Row, tiers: readonly Tier[] | null): string {
  const ids = c.vip_tier_ids as Campaign['vip_tier_ids'];
  if (ids.length === 0) return 'Everyone';
  return ids.map((id) => tiers?.find((t) => t.id === id)?.name ?? `Tier ${id}`).join(', ');
}

/** The form's fields; the tiers are checkboxes by name, or their ids typed when this token may not read them. */
function campaignFields(tiers: readonly Tier[] | null): FieldSpec[] {
  const tierField: FieldSpec = tiers
    ? {
        name: 'vip_tier_ids',
        label: 'For VIP tiers (none: everyone)',
        kind: 'choices',
        integers: true,
        options: tiers.map((t) => ({ value: String(t.id), label: t.name })),
      }
    : { name: 'vip_tier_ids', label: 'For VIP tier IDs (empty: everyone)', kind: 'list', integers: true, placeholder: '3, 4' };
  return [
    { name: 'name', label: 'Name', kind: 'text' },
    { name: 'starts_at', label: 'Starts at (UTC)', kind: 'datetime' },
    { name: 'ends_at', label: 'Ends at (UTC)', kind: 'datetime' },
    { name: 'multiplier', label: 'Multiplier', kind: 'decimal', nullable: true, placeholder: '1.00 to 10.00, or none' },
    { name: 'bonus_points', label: 'Bonus points', kind: 'integer', nullable: true, placeholder: 'none' },
    ...(tiers?.length === 0 ? [] : [tierField]),
  ];
}

function campaignKind(tiers: readonly Tier[] | null): RecordKind {
  const fields = campaignFields(tiers);
  return {
    path: PATH,
    title: 'Campaigns',
    singular: 'campaign',
    empty: 'No campaigns yet: orders earn what the earning rules and VIP tiers give.',
    columns: [
      { label: 'ID', cell: (c) => c.id },
      { label: 'Name', cell: (c) => String(c.name) },
      { label: 'Status', cell: (c) => labelOf(CAMPAIGN_STATUSES, c.status) },
      { label: 'Starts', cell: (c) => formatTime(String(c.starts_at)) },
      { label: 'Ends', cell: (c) => formatTime(String(c.ends_at)) },
      { label: 'Gives', cell: gives },
      { label: 'For', cell: (c) => members(c, tiers) },
    ],
    fields,
    editFields: fields,
    actions: (c, refresh) => (c.status === 'scheduled' || c.status === 'active' ? <CancelCampaign campaign={c} refresh={refresh} /> : null),
  };
}

function CancelCampaign({ campaign, refresh }: { campaign: Row; refresh: () => Promise<void> }) {
  const api = recordApi(useClient(), PATH);
  return (
    <ConfirmButton
      label="Cancel campaign"
      name={`Cancel campaign ${String(campaign.name)}`}
      danger
      title={`Cancel campaign ${campaign.id}?`}
      question={`Orders placed from now on no longer earn under “${String(campaign.name)}”; what orders already earned stays. This cannot be undone.`}
      confirmLabel="Cancel the campaign"
      onConfirm={() => api.action(campaign.id, 'cancel').finally(refresh)}
    />
  );
}

/** The campaigns page; the shop's VIP tiers are read first, to offer them by name. */
export function CampaignsSection() {
  const client = useClient();
  const tiers = useQuery({
    queryKey: ['/merchant_api/v1/vip_tiers', 'all'],
    queryFn: async ({ signal }) => {
      const all: Tier[] = [];
      for await (const tier of client.paginate('/merchant_api/v1/vip_tiers', { signal })) all.push({ id: tier.id, name: tier.name });
      return all;
    },
  });
  if (tiers.isPending) return <p aria-live="polite">Loading campaigns…</p>;
  return (
    <RecordSection
      key={tiers.data ? 'tiers' : 'ids'}
      kind={campaignKind(tiers.data ?? null)}
      intro={tiers.error ? <p className="hint">VIP tiers go by their IDs here: {errorText(tiers.error)}</p> : null}
    />
  );
}
