import type { operations } from '@loyalty-api/client';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { ErrorAlert } from '../../components/alert';
import { RecordForm, type FieldSpec } from '../../components/record-form';
import { useClient } from '../../lib/api';
import { errorText } from '../../lib/errors';

type ShopUpdate = NonNullable<operations['updateShop']['requestBody']>['content']['application/json'];

const TIER_WINDOWS = [
  { value: 'lifetime', label: 'Lifetime' },
  { value: 'calendar_year', label: 'This calendar year' },
  { value: 'rolling_12_months', label: 'The last 12 months' },
] as const satisfies readonly { value: NonNullable<ShopUpdate['vip_tier_window']>; label: string }[];

// What PATCH /shop takes, named as the API names it.
const FIELDS: FieldSpec[] = [
  { name: 'name', label: 'Shop name', kind: 'text' },
  { name: 'timezone', label: 'Time zone', kind: 'text', placeholder: 'Europe/Berlin' },
  { name: 'points_expiry_days', label: 'Points expire after (days)', kind: 'integer', nullable: true, placeholder: 'never' },
  { name: 'per_event_expiry', label: 'Points events may set their own expiry', kind: 'checkbox' },
  { name: 'points_pending_days', label: 'Points pending for (days)', kind: 'integer' },
  { name: 'vip_tier_window', label: 'VIP tiers count points earned over', kind: 'select', options: TIER_WINDOWS },
];

/** The shop's name as last read or saved here (the settings page keeps it), else the sign-in's. */
export function useShopName(signedIn: string): string {
  // Reads the cache only: the settings page is what fetches and updates it.
  const shop = useQuery<{ name: string }>({ queryKey: ['shop'], enabled: false });
  return shop.data?.name ?? signedIn;
}

/** The shop's settings: one form, sending only what changed. */
export function ShopSettings() {
  const client = useClient();
  const queries = useQueryClient();
  const shop = useQuery({ queryKey: ['shop'], queryFn: async ({ signal }) => (await client.GET('/merchant_api/v1/shop', { signal })).data });
  return (
    <>
      <h1>Shop settings</h1>
      <ErrorAlert message={shop.error ? errorText(shop.error) : null} />
      {shop.data ? (
        <RecordForm
          label="Shop settings"
          fields={FIELDS}
          record={shop.data}
          submitLabel="Save settings"
          onSubmit={async (body, key) => {
            const { data } = await client.PATCH('/merchant_api/v1/shop', { body: body as ShopUpdate, headers: { 'Idempotency-Key': key } });
            queries.setQueryData(['shop'], data);
            return 'Settings saved.';
          }}
        />
      ) : (
        <p aria-live="polite">Loading settings…</p>
      )}
      <p className="hint">
        Expiry and pending days apply to points granted from now on; a new tier window re-tiers customers in the background; a new time zone moves the days of
        reports.
      </p>
    </>
  );
}
