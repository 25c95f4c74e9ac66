import { allocateIds, lockIds } from '../db/dialect.js';
import { PerTransaction } from '../db/per-transaction.js';
import { prepareQuery } from '../db/prepared.js';
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { DB, ShopsTable } from '../db/tables.js';
import { parseStoredScopes, storedScopes, type Scope } from './scopes.js';
import { generateToken, hashToken, tokenHint } from './tokens.js';

/** The windows a shop's VIP tiers may be judged by (ledger/earned-window.ts sums them). */
export const TIER_WINDOWS = ['lifetime', 'calendar_year', 'rolling_12_months'] as const;
export type TierWindow = (typeof TIER_WINDOWS)[number];

/** How a shop's points expire (docs/ledger.md, "Expiry modes"). */
export const EXPIRY_MODES = ['per_lot', 'inactivity'] as const;
export type ExpiryMode = (typeof EXPIRY_MODES)[number];

/** What VIP tiers are judged by (tiers/metric.ts keeps the order sums). */
export const TIER_METRICS = ['points_earned', 'amount_spent', 'orders_count'] as const;
export type TierMetric = (typeof TIER_METRICS)[number];

export interface Shop {
  id: number;
  name: string;
  per_event_expiry: boolean;
  points_expiry_days: number | null;
  points_pending_days: number;
  vip_tier_window: TierWindow;
  vip_tier_metric: TierMetric;
  vip_tier_retention_days: number | null;
  /** The ISO 4217 currency amount_spent counts. */
  currency: string | null;
  /** Moved on with every change of metric or currency (customers.order_window_key). */
  vip_tier_basis: number;
  restore_redeemed_points_on_refund: boolean;
  /** The IANA time zone of the shop's reports. */
  timezone: string;
  points_expiry_mode: ExpiryMode;
  points_inactivity_days: number | null;
  /** When inactivity expiry was switched on or its period changed (null in per_lot mode). */
  points_inactivity_since: number | null;
  expiry_reminder_days: number[];
  created_at: number;
  updated_at: number;
}

export interface ShopSettings {
  name?: string;
  per_event_expiry?: boolean;
  points_expiry_days?: number | null;
  points_pending_days?: number;
  vip_tier_window?: TierWindow;
  vip_tier_metric?: TierMetric;
  vip_tier_retention_days?: number | null;
  currency?: string | null;
  restore_redeemed_points_on_refund?: boolean;
  timezone?: string;
  points_expiry_mode?: ExpiryMode;
  points_inactivity_days?: number | null;
  expiry_reminder_days?: number[];
}

/**
 * The expiry settings' columns a change writes. Inactivity expiry switched on, or its period
 * changed, starts a grace: nothing falls due before a full period from now.
 */
function expiryChanges(settings: ShopSettings, before: Shop | undefined, now: number): Updateable<ShopsTable> {
  const changes: Updateable<ShopsTable> = {};
  if (settings.expiry_reminder_days !== undefined) changes.expiry_reminder_days = JSON.stringify([...settings.expiry_reminder_days].sort((a, b) => b - a));
  if (settings.points_inactivity_days !== undefined) changes.points_inactivity_days = settings.points_inactivity_days;
  if (settings.points_expiry_mode !== undefined) changes.points_expiry_mode = settings.points_expiry_mode;
  const mode = settings.points_expiry_mode ?? before?.points_expiry_mode;
  const days = settings.points_inactivity_days === undefined ? before?.points_inactivity_days : settings.points_inactivity_days;
  if (mode !== 'inactivity') changes.points_inactivity_since = null;
  else if (before?.points_expiry_mode !== 'inactivity' || days !== before.points_inactivity_days) changes.points_inactivity_since = now;
  return changes;
}

export interface TokenRow {
  id: number;
  shop_id: number;
  name: string;
  hint: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  scopes: Scope[];
  expires_at: number | null;
}

/** The token a request came with, as the audit log and the scope check need it. */
export interface TokenIdentity {
  id: number;
  name: string;
  scopes: readonly Scope[];
  /** When it stops working; null: never. */
  expires_at: number | null;
}

/** What a live token stands for: its shop, and itself. */
export interface Authenticated {
  shop: Shop;
  token: TokenIdentity;
}

export interface TokenOptions {
  /** Defaults to `admin`. */
  scopes?: readonly Scope[];
  /** When the token stops working; null or left out: never. */
  expiresAt?: number | null;
}

function toShop(row: Selectable<ShopsTable>): Shop {
  return {
    id: Number(row.id),
    name: row.name,
    per_event_expiry: row.per_event_expiry === 1,
    points_expiry_days: row.points_expiry_days,
    points_pending_days: Number(row.points_pending_days),
    vip_tier_window: row.vip_tier_window as TierWindow,
    vip_tier_metric: row.vip_tier_metric as TierMetric,
    vip_tier_retention_days: row.vip_tier_retention_days === null || row.vip_tier_retention_days === undefined ? null : Number(row.vip_tier_retention_days),
    currency: row.currency ?? null,
    vip_tier_basis: Number(row.vip_tier_basis),
    restore_redeemed_points_on_refund: Number(row.restore_redeemed_points_on_refund) === 1,
    timezone: row.timezone,
    points_expiry_mode: row.points_expiry_mode as ExpiryMode,
    points_inactivity_days: row.points_inactivity_days ?? null,
    points_inactivity_since: row.points_inactivity_since === null || row.points_inactivity_since === undefined ? null : Number(row.points_inactivity_since),
    expiry_reminder_days: JSON.parse(row.expiry_reminder_days) as number[],
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}

export async function createShop(db: DB, settings: ShopSettings & { name: string }, now: number): Promise<Shop> {
  const values = {
    name: settings.name,
    per_event_expiry: settings.per_event_expiry ? 1 : 0,
    points_expiry_days: settings.points_expiry_days ?? null,
    points_pending_days: settings.points_pending_days ?? 0,
    vip_tier_window: settings.vip_tier_window ?? 'lifetime',
    vip_tier_metric: settings.vip_tier_metric ?? 'points_earned',
    vip_tier_retention_days: settings.vip_tier_retention_days ?? null,
    currency: settings.currency ?? null,
    restore_redeemed_points_on_refund: settings.restore_redeemed_points_on_refund === false ? 0 : 1,
    timezone: settings.timezone ?? 'UTC',
    created_at: now,
    updated_at: now,
  };
  // shops is the one table not led by shop_id; SQLite gives it a rowid id, PostgreSQL an identity.
  const row = await db
    .insertInto('shops')
    .values(values as Insertable<ShopsTable>)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toShop(row);
}

const shopRow = prepareQuery<{ shopId: number }, Selectable<ShopsTable>>((db, p) => db.selectFrom('shops').selectAll().where('id', '=', p.value('shopId')));

/** The shop, read once per transaction (updateShop keeps what it wrote): a write reads it in several places. */
const shops = new PerTransaction<number, Shop | undefined>(async (db, shopId) => {
  const [row] = await shopRow(db, { shopId });
  return row && toShop(row);
});

export function getShop(db: DB, shopId: number): Promise<Shop | undefined> {
  return shops.get(db, shopId);
}

export async function listShops(db: DB): Promise<Shop[]> {
  const rows = await db.selectFrom('shops').selectAll().orderBy('id').execute();
  return rows.map(toShop);
}

export async function countShops(db: DB): Promise<number> {
  const row = await db
    .selectFrom('shops')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * `rekeyDays` keys the report's local days anew when the time zone changes (ledger/totals.ts;
 * passed in, since shops/ sits under the ledger).
 */
export async function updateShop(
  db: DB,
  shopId: number,
  settings: ShopSettings,
  now: number,
  rekeyDays: (db: DB, shopId: number) => Promise<void>,
): Promise<Shop | undefined> {
  const changes: Updateable<ShopsTable> = { updated_at: now };
  if (settings.name !== undefined) changes.name = settings.name;
  if (settings.per_event_expiry !== undefined) changes.per_event_expiry = settings.per_event_expiry ? 1 : 0;
  if (settings.points_expiry_days !== undefined) changes.points_expiry_days = settings.points_expiry_days;
  if (settings.points_pending_days !== undefined) changes.points_pending_days = settings.points_pending_days;
  Object.assign(changes, expiryChanges(settings, await getShop(db, shopId), now));
  // Another window: every customer is re-tiered by it, in the background (tiers/jobs.ts).
  if (settings.vip_tier_window !== undefined) {
    changes.vip_tier_window = settings.vip_tier_window;
    changes.retier_after = sql<number>`case when vip_tier_window = ${settings.vip_tier_window} then retier_after else 0 end` as never;
  }
  retierOnBasis(changes, settings);
  if (settings.vip_tier_retention_days !== undefined) changes.vip_tier_retention_days = settings.vip_tier_retention_days;
  if (settings.restore_redeemed_points_on_refund !== undefined) changes.restore_redeemed_points_on_refund = settings.restore_redeemed_points_on_refund ? 1 : 0;
  // Another time zone: the report's local days are keyed anew (before, the writers of events wait).
  if (settings.timezone !== undefined) await lockIds(db, shopId, 'points_events');
  const rekey = settings.timezone !== undefined && settings.timezone !== (await getShop(db, shopId))?.timezone;
  if (rekey) changes.timezone = settings.timezone;
  const row = await db.updateTable('shops').set(changes).where('id', '=', shopId).returningAll().executeTakeFirst();
  if (rekey) await rekeyDays(db, shopId);
  shopsChanged();
  const shop = row && toShop(row);
  shops.set(db, shopId, shop);
  return shop;
}

/**
 * Another metric or currency: the customers' order sums are made again for a new basis, and
 * every customer is re-tiered by it in the background (tiers/jobs.ts).
 */
function retierOnBasis(changes: Updateable<ShopsTable>, settings: ShopSettings): void {
  const moved: ReturnType<typeof sql<boolean>>[] = [];
  if (settings.vip_tier_metric !== undefined) {
    changes.vip_tier_metric = settings.vip_tier_metric;
    moved.push(sql<boolean>`vip_tier_metric <> ${settings.vip_tier_metric}`);
  }
  if (settings.currency !== undefined) {
    changes.currency = settings.currency;
    moved.push(sql<boolean>`coalesce(currency, '') <> ${settings.currency ?? ''}`);
  }
  if (moved.length === 0) return;
  const any = sql.join(moved, sql` or `);
  changes.vip_tier_basis = sql<number>`case when ${any} then vip_tier_basis + 1 else vip_tier_basis end` as never;
  changes.retier_after = sql<number>`case when ${any} then 0 else retier_after end` as never;
}

/** Creates a token and returns it in clear: the only time it is ever seen. */
export async function createToken(db: DB, shopId: number, name: string, now: number, options: TokenOptions = {}): Promise<{ token: string; row: TokenRow }> {
  const token = generateToken();
  const [id] = await allocateIds(db, shopId, 'api_tokens', 1);
  const scopes = parseStoredScopes(storedScopes(options.scopes ?? ['admin']));
  const expiresAt = options.expiresAt ?? null;
  const row = {
    shop_id: shopId,
    id: id!,
    name,
    token_hash: hashToken(token),
    token_hint: tokenHint(token),
    created_at: now,
    last_used_at: null,
    revoked_at: null,
    scopes: storedScopes(scopes),
    expires_at: expiresAt,
  };
  await db.insertInto('api_tokens').values(row).execute();
  return {
    token,
    row: { id: id!, shop_id: shopId, name, hint: row.token_hint, created_at: now, last_used_at: null, revoked_at: null, scopes, expires_at: expiresAt },
  };
}

const TOKEN_COLUMNS = ['id', 'shop_id', 'name', 'token_hint as hint', 'created_at', 'last_used_at', 'revoked_at', 'scopes', 'expires_at'] as const;

function toTokenRow(r: {
  id: number;
  shop_id: number;
  name: string;
  hint: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  scopes: string;
  expires_at: number | null;
}): TokenRow {
  return {
    ...r,
    id: Number(r.id),
    shop_id: Number(r.shop_id),
    created_at: Number(r.created_at),
    last_used_at: r.last_used_at === null ? null : Number(r.last_used_at),
    revoked_at: r.revoked_at === null ? null : Number(r.revoked_at),
    expires_at: r.expires_at === null ? null : Number(r.expires_at),
    scopes: parseStoredScopes(r.scopes),
  };
}

export async function listTokens(db: DB, shopId: number): Promise<TokenRow[]> {
  const rows = await db.selectFrom('api_tokens').select(TOKEN_COLUMNS).where('shop_id', '=', shopId).orderBy('id').execute();
  return rows.map(toTokenRow);
}

/** One of the shop's tokens (revoked or not), never its secret. */
export async function findToken(db: DB, shopId: number, tokenId: number): Promise<TokenRow | undefined> {
  const row = await db.selectFrom('api_tokens').select(TOKEN_COLUMNS).where('shop_id', '=', shopId).where('id', '=', tokenId).executeTakeFirst();
  return row && toTokenRow(row);
}

/** Revokes a token; false when the shop has no such token. Revoking twice keeps the first time. */
export async function revokeToken(db: DB, shopId: number, tokenId: number, now: number): Promise<boolean> {
  const exists = await db.selectFrom('api_tokens').select('id').where('shop_id', '=', shopId).where('id', '=', tokenId).executeTakeFirst();
  if (!exists) return false;
  await db.updateTable('api_tokens').set({ revoked_at: now }).where('shop_id', '=', shopId).where('id', '=', tokenId).where('revoked_at', 'is', null).execute();
  shopsChanged();
  return true;
}

/**
 * Revokes every live token of a shop, so that its requests answer 401 (within TOKEN_CACHE_MS in
 * other processes), and returns when the last of its tokens was revoked, or null if it has none.
 */
export async function revokeShopTokens(db: DB, shopId: number, now: number): Promise<number | null> {
  await db.updateTable('api_tokens').set({ revoked_at: now }).where('shop_id', '=', shopId).where('revoked_at', 'is', null).execute();
  shopsChanged();
  const row = await db
    .selectFrom('api_tokens')
    .select((eb) => eb.fn.max('revoked_at').as('latest'))
    .where('shop_id', '=', shopId)
    .executeTakeFirst();
  return row?.latest === null || row?.latest === undefined ? null : Number(row.latest);
}

let generation = 0;

function shopsChanged(): void {
  generation++;
}

/**
 * Counts the changes this process made to shops and tokens (settings updated, tokens
 * revoked), so that a cache of findShopByToken can drop what it holds at once.
 */
export function shopsGeneration(): number {
  return generation;
}

/** A token is live when it is neither revoked nor expired. */
function live<QB extends { where: (...args: any[]) => QB }>(query: QB, now: number): QB {
  return query
    .where('api_tokens.revoked_at', 'is', null)
    .where((eb: any) => eb.or([eb('api_tokens.expires_at', 'is', null), eb('api_tokens.expires_at', '>', now)]));
}

/** Writes when tokens were last used (http/token-usage.ts), never moving a stored time back. */
export async function recordTokenUses(db: DB, uses: ReadonlyMap<number, number>): Promise<void> {
  for (const [id, at] of uses) {
    await db
      .updateTable('api_tokens')
      .set({ last_used_at: at })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
      .execute();
  }
}

/** The hashes of every live token, of every shop (http/known-tokens.ts). */
export async function liveTokenHashes(db: DB, now: number): Promise<string[]> {
  const rows = await live(db.selectFrom('api_tokens').select('token_hash'), now).execute();
  return rows.map((row) => row.token_hash);
}

/** The shop a live token belongs to, and the token itself. */
export async function findShopByToken(db: DB, token: string, now: number): Promise<Authenticated | undefined> {
  const row = await live(
    db
      .selectFrom('api_tokens')
      .innerJoin('shops', 'shops.id', 'api_tokens.shop_id')
      .selectAll('shops')
      .select(['api_tokens.id as token_id', 'api_tokens.name as token_name', 'api_tokens.scopes as token_scopes', 'api_tokens.expires_at as token_expires_at'])
      .where('api_tokens.token_hash', '=', hashToken(token)),
    now,
  ).executeTakeFirst();
  if (row === undefined) return undefined;
  const { token_id, token_name, token_scopes, token_expires_at, ...shop } = row;
  return {
    shop: toShop(shop),
    token: {
      id: Number(token_id),
      name: token_name,
      scopes: Object.freeze(parseStoredScopes(token_scopes)),
      expires_at: token_expires_at === null ? null : Number(token_expires_at),
    },
  };
}
