import { Type } from 'typebox';
import { undescribed } from '../core/validation.js';
import type { ErrorDetail } from '../errors.js';
import { EXPIRY_MODES, type Shop, type ShopSettings } from './repository.js';

// The shop's expiry mode and reminders (docs/ledger.md, "Expiry modes" and "Expiry reminders"):
// their fields as GET /shop shows them and PATCH /shop takes them, and the rules that tie them.

const MAX_INACTIVITY_DAYS = 36500;
const MAX_REMINDER_DAYS = 365;

const Mode = Type.Union([Type.Literal(EXPIRY_MODES[0]), Type.Literal(EXPIRY_MODES[1])], {
  description:
    "per_lot: each grant's points and credits expire at their own expires_at. inactivity: a customer's whole available balance expires " +
    'points_inactivity_days after their last grant, deduction or redemption (lots keep their own expiry too)',
  examples: ['inactivity'],
});
const InactivityDays = Type.Integer({ minimum: 1, maximum: MAX_INACTIVITY_DAYS, examples: [365] });
const ReminderDays = Type.Array(Type.Integer({ minimum: 1, maximum: MAX_REMINDER_DAYS }), {
  maxItems: 3,
  description: 'Days before an expiry that the points.expiring webhook is sent: up to 3 distinct numbers, largest first',
  examples: [[30, 7]],
});

export const ExpiryFields = {
  points_expiry_mode: Mode,
  points_inactivity_days: Type.Union([InactivityDays, Type.Null()], { description: 'Days without activity after which the balance expires (inactivity mode)' }),
  points_inactivity_since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When inactivity expiry was switched on or its period last changed: no balance falls due before a full period after it',
  }),
  expiry_reminder_days: ReminderDays,
};

export const ExpiryUpdateFields = {
  points_expiry_mode: Type.Optional(undescribed(Mode)),
  points_inactivity_days: Type.Optional(Type.Union([InactivityDays, Type.Null()])),
  expiry_reminder_days: Type.Optional(undescribed(ReminderDays)),
};

/** What is wrong with a change of the expiry settings, given the shop as it stands. */
export function expirySettingErrors(change: ShopSettings, shop: Shop): ErrorDetail[] {
  const errors: ErrorDetail[] = [];
  const mode = change.points_expiry_mode ?? shop.points_expiry_mode;
  const days = change.points_inactivity_days === undefined ? shop.points_inactivity_days : change.points_inactivity_days;
  const reminders = change.expiry_reminder_days ?? shop.expiry_reminder_days;
  if (mode === 'inactivity' && days === null) {
    errors.push({
      param: 'points_inactivity_days',
      code: 'required_for_inactivity',
      message: 'points_inactivity_days is required when points_expiry_mode is inactivity',
    });
  }
  if (change.expiry_reminder_days !== undefined && new Set(change.expiry_reminder_days).size !== change.expiry_reminder_days.length) {
    errors.push({ param: 'expiry_reminder_days', code: 'duplicate_value', message: 'expiry_reminder_days must not repeat a number' });
  }
  if (mode === 'inactivity' && days !== null) {
    reminders.forEach((d, i) => {
      if (d >= days)
        errors.push({
          param: `expiry_reminder_days[${i}]`,
          code: 'reminder_not_before_expiry',
          message: `a reminder in inactivity mode must come less than points_inactivity_days (${days}) days before the expiry, got ${d}`,
        });
    });
  }
  return errors;
}
