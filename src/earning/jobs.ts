import { claimRows, transaction, updateRows } from '../db/dialect.js';
import type { DB } from '../db/tables.js';
import { posting, type Posting } from '../ledger/posting.js';
import { enqueueEvents } from '../events/outbox.js';
import { getShop } from '../shops/repository.js';
import { announceAt, runsUntil } from './campaigns.js';
import { birthdayIn, CATCH_UP_MS, nextBirthday } from './birthday.js';
import { postWithEffects } from './effects.js';
import { defaultExpiry, enabledRule, ruleGrant } from './rules.js';

// The programme's background work, in bounded transactions (at most ROWS rows each, so that
// on SQLite no transaction holds the writer for more than a few milliseconds), safe to run in
// several processes at once (claimed rows are skipped by the others).

const ROWS = 200;

const yieldToRequests = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Runs `step` in transactions until it handles fewer than ROWS rows; returns how many it handled. */
async function inBoundedSteps(db: DB, step: (trx: DB) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const handled = await transaction(db, step);
    total += handled;
    if (handled < ROWS) return total;
    await yieldToRequests();
  }
}

function byShop<T extends { shop_id: number }>(rows: readonly T[]): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const row of rows) {
    const list = out.get(Number(row.shop_id));
    if (list) list.push(row);
    else out.set(Number(row.shop_id), [row]);
  }
  return out;
}

/** Makes pending order points spendable once their release date has come; returns how many orders. */
export async function releasePendingPoints(db: DB, now: number): Promise<number> {
  return inBoundedSteps(db, async (trx) => {
    const due = await claimRows(
      trx,
      trx
        .selectFrom('orders')
        .select(['shop_id', 'remote_id', 'points_customer_remote_id', 'points_pending', 'earning_rule_id', 'campaign_id'])
        .where('points_pending', '>', 0)
        .where('pending_release_at', '<=', now)
        .orderBy('pending_release_at')
        .limit(ROWS),
      'orders',
    ).execute();
    for (const [shopId, orders] of byShop(due)) {
      const shop = (await getShop(trx, shopId))!;
      const customers = [...new Set(orders.map((o) => Number(o.points_customer_remote_id)))];
      const emails = new Map(
        (await trx.selectFrom('customers').select(['remote_id', 'email']).where('shop_id', '=', shopId).where('remote_id', 'in', customers).execute()).map(
          (c) => [Number(c.remote_id), c.email],
        ),
      );
      const postings = orders.map((o) =>
        posting(
          { remoteId: Number(o.points_customer_remote_id), email: emails.get(Number(o.points_customer_remote_id)) ?? null },
          {
            source: 'order',
            points: Number(o.points_pending),
            internalNote: `Earned by order ${Number(o.remote_id)}: released`,
            appliedAt: now,
            expiresAt: defaultExpiry(shop, now),
            earningRuleId: o.earning_rule_id === null ? null : Number(o.earning_rule_id),
            orderRemoteId: Number(o.remote_id),
            campaignId: o.campaign_id === null || o.campaign_id === undefined ? null : Number(o.campaign_id),
          },
        ),
      );
      // What the orders held pending is now theirs: the ledger moves it with the grants.
      const released = new Map<number, number>();
      for (const o of orders)
        released.set(Number(o.points_customer_remote_id), (released.get(Number(o.points_customer_remote_id)) ?? 0) - Number(o.points_pending));
      await postWithEffects(trx, shopId, postings, now, { pending: released });
      await updateRows(
        trx,
        'orders',
        ['shop_id', 'remote_id'],
        orders.map((o) => ({ shop_id: shopId, remote_id: Number(o.remote_id), points_pending: 0, pending_release_at: null, updated_at: now })),
      );
    }
    return due.length;
  });
}

/**
 * Grants the birthday rule to customers whose birthday has come (once per calendar year; a day
 * missed while the server was down is caught up within the year), and schedules the next one.
 * Returns how many customers it looked at.
 */
export async function grantBirthdays(db: DB, now: number): Promise<number> {
  return inBoundedSteps(db, async (trx) => {
    const due = await claimRows(
      trx,
      trx
        .selectFrom('customers')
        .select(['shop_id', 'remote_id', 'email', 'birthday', 'birthday_next_at', 'birthday_granted_year'])
        .where('birthday_next_at', 'is not', null)
        .where('birthday_next_at', '<=', now)
        .orderBy('birthday_next_at')
        .limit(ROWS),
      'customers',
    ).execute();
    for (const [shopId, customers] of byShop(due)) {
      const shop = (await getShop(trx, shopId))!;
      const rule = await enabledRule(trx, shopId, 'birthday');
      const postings: Posting[] = [];
      const scheduled: Record<string, unknown>[] = [];
      for (const c of customers) {
        const at = Number(c.birthday_next_at);
        const year = new Date(at).getUTCFullYear();
        let granted = c.birthday_granted_year === null || c.birthday_granted_year === undefined ? null : Number(c.birthday_granted_year);
        // -1 (a customer from before birthdays were granted) and a changed birthday are no birthday: only scheduled.
        const isBirthday = c.birthday !== null && birthdayIn(c.birthday, year) === at && (granted === null || year > granted);
        if (isBirthday && now - at < CATCH_UP_MS) {
          const grant =
            rule === undefined ? null : ruleGrant(rule, { remoteId: Number(c.remote_id), email: c.email }, now, defaultExpiry(shop, now), `Birthday ${year}`);
          if (grant !== null) postings.push(grant);
          granted = year;
        }
        const next = c.birthday === null ? null : nextBirthday(c.birthday, Math.max(now, at + 1), granted);
        scheduled.push({ shop_id: shopId, remote_id: Number(c.remote_id), birthday_next_at: next, birthday_granted_year: granted });
      }
      if (postings.length > 0) await postWithEffects(trx, shopId, postings, now);
      await updateRows(trx, 'customers', ['shop_id', 'remote_id'], scheduled);
    }
    return due.length;
  });
}

/** Shows campaigns as the API does (the records engine's description, wired by jobs.ts). */
export type ShowCampaigns = (trx: DB, shopId: number, rows: Record<string, unknown>[], now: number) => Promise<unknown[]>;

/**
 * Sends campaign.started and campaign.ended once each per campaign (docs/earning.md,
 * "Campaigns"): due campaigns are claimed (PostgreSQL: rows another process holds are skipped),
 * announced to the outbox and marked in the same transaction, so that neither a restart nor a
 * second process sends one twice. Returns how many campaigns it announced.
 */
export async function announceCampaigns(db: DB, now: number, show: ShowCampaigns): Promise<number> {
  return inBoundedSteps(db, async (trx) => {
    const due = await claimRows(
      trx,
      trx.selectFrom('campaigns').selectAll().where('announce_at', 'is not', null).where('announce_at', '<=', now).orderBy('announce_at').limit(ROWS),
      'campaigns',
    ).execute();
    for (const [shopId, rows] of byShop(due)) {
      const started: Record<string, unknown>[] = [];
      const ended: Record<string, unknown>[] = [];
      const marked = rows.map((row) => {
        const next = { ...row };
        if (Number(row.started_announced) === 0 && Number(row.starts_at) <= now && Number(row.starts_at) < runsUntil(row)) {
          next.started_announced = 1;
          started.push(next);
        }
        if (Number(next.started_announced) === 1 && Number(row.ended_announced) === 0 && runsUntil(row) <= now) {
          next.ended_announced = 1;
          ended.push(next);
        }
        return {
          shop_id: shopId,
          id: Number(row.id),
          started_announced: next.started_announced,
          ended_announced: next.ended_announced,
          announce_at: announceAt(next),
        };
      });
      if (started.length > 0) await enqueueEvents(trx, shopId, 'campaign.started', () => show(trx, shopId, started, now), now);
      if (ended.length > 0) await enqueueEvents(trx, shopId, 'campaign.ended', () => show(trx, shopId, ended, now), now);
      await updateRows(trx, 'campaigns', ['shop_id', 'id'], marked);
    }
    return due.length;
  });
}
