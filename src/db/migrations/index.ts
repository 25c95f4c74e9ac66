import type { Migration } from 'kysely';
import * as m001 from './001_foundation.js';
import * as m002 from './002_ledger.js';
import * as m003 from './003_records.js';
import * as m004 from './004_webhooks.js';
import * as m005 from './005_stored_balances.js';
import * as m006 from './006_event_links.js';
import * as m007 from './007_redemptions.js';
import * as m008 from './008_shop_counts.js';
import * as m009 from './009_earning.js';
import * as m010 from './010_referrals.js';
import * as m011 from './011_tiers.js';
import * as m012 from './012_redactions.js';
import * as m013 from './013_tier_windows.js';
import * as m014 from './014_storefront_keys.js';
import * as m015 from './015_reports.js';
import * as m017 from './017_webhook_delivery_groups.js';
import * as m018 from './018_access.js';
import * as m019 from './019_campaigns.js';
import * as m020 from './020_expiry_modes.js';
import * as m021 from './021_tier_metrics.js';
import * as m022 from './022_expiry_reminders_pruned.js';
import * as m023 from './023_lots_versions.js';
import * as m024 from './024_connections.js';
import * as m025 from './025_ways_to_earn.js';
import * as m026 from './026_distribution_by_shop.js';
import * as m027 from './027_customer_search.js';
import * as m028 from './028_stream_leases.js';

// Every migration, in order. A migration is never edited once it has landed: add a new one.
export const migrations: Record<string, Migration> = {
  '001_foundation': m001,
  '002_ledger': m002,
  '003_records': m003,
  '004_webhooks': m004,
  '005_stored_balances': m005,
  '006_event_links': m006,
  '007_redemptions': m007,
  '008_shop_counts': m008,
  '009_earning': m009,
  '010_referrals': m010,
  '011_tiers': m011,
  '012_redactions': m012,
  '013_tier_windows': m013,
  '014_storefront_keys': m014,
  '015_reports': m015,
  '017_webhook_delivery_groups': m017,
  '018_access': m018,
  '019_campaigns': m019,
  '020_expiry_modes': m020,
  '021_tier_metrics': m021,
  '022_expiry_reminders_pruned': m022,
  '023_lots_versions': m023,
  '024_connections': m024,
  '025_ways_to_earn': m025,
  '026_distribution_by_shop': m026,
  '027_customer_search': m027,
  '028_stream_leases': m028,
};
