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

const TIER_METRICS = [
  { value: 'points_earned', label: 'Points earned' },
  { value: 'amount_spent', label: "Amount spent (in the shop's currency)" },
  { value: 'orders_count', label: 'Orders paid' },
] as const satisfies readonly { value: NonNullable<ShopUpdate['vip_tier_metric']>; label: string }[];

const EXPIRY_MODES = [
  { value: 'per_lot', label: 'Each grant after its own days (per lot)' },
  { value: 'inactivity', label: 'The whole balance after a period without activity' },
] as const satisfies readonly { value: NonNullable<ShopUpdate['points_expiry_mode']>; label: string }[];

// What PATCH /shop takes, named as the API names it (docs/earning.md, docs/ledger.md).
const FIELDS = [
  { name: 'name', label: 'Shop name', kind: 'text' },
  { name: 'timezone', label: 'Time zone', kind: 'text', placeholder: 'Europe/Berlin' },
  { name: 'currency', label: 'Currency', kind: 'text', nullable: true, placeholder: 'EUR (tiers by amount spent need it)' },
  { name: 'points_expiry_mode', label: 'Points expire', kind: 'select', options: EXPIRY_MODES },
  { name: 'points_expiry_days', label: 'Points expire after (days)', kind: 'integer', nullable: true, placeholder: 'never' },
  { name: 'points_inactivity_days', label: 'Inactivity period (days)', kind: 'integer', nullable: true, placeholder: 'for expiry after inactivity' },
  { name: 'expiry_reminder_days', label: 'Expiry reminders (days before)', kind: 'list', integers: true, placeholder: '30, 7 (up to 3; empty: none)' },
  { name: 'per_event_expiry', label: 'Points events may set their own expiry', kind: 'checkbox' },
  { name: 'points_pending_days', label: 'Points pending for (days)', kind: 'integer' },
  { name: 'vip_tier_metric', label: 'VIP tier metric', kind: 'select', options: TIER_METRICS },
  { name: 'vip_tier_window', label: 'VIP tier window', kind: 'select', options: TIER_WINDOWS },
  { name: 'vip_tier_retention_days', label: 'Keep a tier after a drop (days)', kind: 'integer', nullable: true, placeholder: 'no: move at once' },
  { name: 'restore_redeemed_points_on_refund', label: 'A refunded order gives back the points of the reward it used', kind: 'checkbox' },
] as const satisfies readonly (FieldSpec & { name: keyof ShopUpdate })[];

// Every setting PATCH /shop takes is on the form: one the API adds fails the build until it is here.
const _everySetting: [Exclude<keyof ShopUpdate, (typeof FIELDS)[number]['name']>] extends [never] ? true : never = true;

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
      ) : shop.error ? null : (
        <p aria-live="polite">Loading settings…</p>
      )}
      <p className="hint">
        Expiry and pending days apply to points granted from now on; switching to expiry after inactivity, or changing its period, lets no balance expire before
        one full period from now; a new tier metric, window or currency re-tiers customers in the background; a new time zone moves the days of reports.
      </p>
    </>
  );
}
