import { isTimeZone } from '../core/time-zones.js';
import type { ErrorDetail } from '../errors.js';
import { expirySettingErrors } from './expiry-settings.js';
import type { Shop, ShopSettings } from './repository.js';

// What is wrong with a change of the shop's settings beyond its schema (ShopUpdate), given the
// shop as it stands: PATCH /shop and `loyalty shops create|update` judge a change alike.

export function shopSettingErrors(change: ShopSettings, shop: Shop): ErrorDetail[] {
  const errors = expirySettingErrors(change, shop);
  const zone = change.timezone;
  if (zone !== undefined && !isTimeZone(zone)) {
    errors.unshift({
      param: 'timezone',
      code: 'invalid_time_zone',
      message: `timezone must be an IANA time zone name such as Europe/Berlin, got ${JSON.stringify(zone)}`,
    });
  }
  const metric = change.vip_tier_metric ?? shop.vip_tier_metric;
  const currency = change.currency === undefined ? shop.currency : change.currency;
  if (metric === 'amount_spent' && currency === null) {
    const param = change.currency === null ? 'currency' : 'vip_tier_metric';
    errors.push({ param, code: 'currency_required', message: "vip_tier_metric amount_spent needs the shop's currency: set currency too" });
  }
  return errors;
}
