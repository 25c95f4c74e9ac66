import { randomBytes, webcrypto } from 'node:crypto';
import { allocateIds } from '../db/dialect.js';
import type { DB, StorefrontKeysTable } from '../db/tables.js';
import { isoTime } from '../clock.js';
import { notFound } from '../errors.js';
import { getShop, type Shop } from '../shops/repository.js';

// Storefront keys (docs/storefront.md): `pk_…` is public (it names the key in a customer
// token's `kid` and in X-Publishable-Key), `sks_…` signs customer tokens and is shown once.
// A shop has several at once, so a secret can be rotated without a moment of refused tokens.

type CryptoKey = webcrypto.CryptoKey;

export const PUBLISHABLE_PREFIX = 'pk_';
export const SECRET_PREFIX = 'sks_';

export interface StorefrontKeyJson {
  id: number;
  publishable_key: string;
  allowed_origins: string[];
  created_at: string;
  updated_at: string;
}

/** A live key as token verification needs it: its shop, secret and origins. */
export interface LiveKey {
  id: number;
  shop: Shop;
  /** Imported once, not at each verification. */
  secret: CryptoKey;
  origins: ReadonlySet<string>;
}

type KeyRow = Pick<StorefrontKeysTable, 'id' | 'publishable_key' | 'allowed_origins' | 'created_at' | 'updated_at'>;

const SHOWN = ['id', 'publishable_key', 'allowed_origins', 'created_at', 'updated_at'] as const;

export function keyJson(row: KeyRow): StorefrontKeyJson {
  return {
    id: Number(row.id),
    publishable_key: row.publishable_key,
    allowed_origins: JSON.parse(row.allowed_origins) as string[],
    created_at: isoTime(Number(row.created_at)),
    updated_at: isoTime(Number(row.updated_at)),
  };
}

let generation = 0;

/** Counts the key changes this process made, so that a cache of live keys drops them at once. */
export function keysGeneration(): number {
  return generation;
}

async function writeOrigins(db: DB, shopId: number, keyId: number, origins: readonly string[]): Promise<void> {
  await db.deleteFrom('storefront_key_origins').where('shop_id', '=', shopId).where('key_id', '=', keyId).execute();
  const unique = [...new Set(origins)];
  if (unique.length > 0)
    await db
      .insertInto('storefront_key_origins')
      .values(unique.map((origin) => ({ shop_id: shopId, key_id: keyId, origin })))
      .execute();
}

/** Creates a key; the secret is in the answer, the only time it is shown. */
export async function createKey(db: DB, shopId: number, origins: readonly string[], now: number): Promise<StorefrontKeyJson & { secret: string }> {
  const [id] = await allocateIds(db, shopId, 'storefront_keys', 1);
  const row: StorefrontKeysTable = {
    shop_id: shopId,
    id: id!,
    publishable_key: PUBLISHABLE_PREFIX + randomBytes(18).toString('base64url'),
    secret: SECRET_PREFIX + randomBytes(32).toString('base64url'),
    allowed_origins: JSON.stringify([...new Set(origins)]),
    created_at: now,
    updated_at: now,
  };
  await db.insertInto('storefront_keys').values(row).execute();
  await writeOrigins(db, shopId, row.id, origins);
  generation++;
  return { ...keyJson(row), secret: row.secret };
}

export async function listKeys(db: DB, shopId: number): Promise<StorefrontKeyJson[]> {
  const rows = await db.selectFrom('storefront_keys').select(SHOWN).where('shop_id', '=', shopId).orderBy('id').execute();
  return rows.map(keyJson);
}

/** Replaces a key's allowed origins; 404 when the shop has no such key. */
export async function setKeyOrigins(db: DB, shopId: number, keyId: number, origins: readonly string[], now: number): Promise<StorefrontKeyJson> {
  const row = await db
    .updateTable('storefront_keys')
    .set({ allowed_origins: JSON.stringify([...new Set(origins)]), updated_at: now })
    .where('shop_id', '=', shopId)
    .where('id', '=', keyId)
    .returning(SHOWN)
    .executeTakeFirst();
  if (row === undefined) throw notFound('storefront key', keyId);
  await writeOrigins(db, shopId, keyId, origins);
  generation++;
  return keyJson(row);
}

/** Revokes a key: it is deleted, and tokens it signed are refused from then on. */
export async function revokeKey(db: DB, shopId: number, keyId: number): Promise<void> {
  const deleted = await db.deleteFrom('storefront_keys').where('shop_id', '=', shopId).where('id', '=', keyId).executeTakeFirst();
  if (Number(deleted.numDeletedRows) === 0) throw notFound('storefront key', keyId);
  await writeOrigins(db, shopId, keyId, []);
  generation++;
}

/** The shop's newest key, which POST …/storefront_tokens signs with; undefined when it has none. */
export async function newestKey(db: DB, shopId: number): Promise<{ publishable_key: string; secret: string } | undefined> {
  return db.selectFrom('storefront_keys').select(['publishable_key', 'secret']).where('shop_id', '=', shopId).orderBy('id', 'desc').limit(1).executeTakeFirst();
}

/** The secret as the key that verifies HS256 signatures: the whole `sks_…` string's bytes. */
export function hmacKey(secret: string | Uint8Array): Promise<CryptoKey> {
  const bytes = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret;
  return webcrypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
}

/** A live key by its publishable key, with its shop. */
export async function findLiveKey(db: DB, publishableKey: string): Promise<LiveKey | undefined> {
  const row = await db
    .selectFrom('storefront_keys')
    .select(['id', 'shop_id', 'secret', 'allowed_origins'])
    .where('publishable_key', '=', publishableKey)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  const shop = await getShop(db, Number(row.shop_id));
  if (shop === undefined) return undefined;
  return { id: Number(row.id), shop, secret: await hmacKey(row.secret), origins: new Set(JSON.parse(row.allowed_origins) as string[]) };
}

/** Whether some live key allows the origin: what a CORS preflight, which carries no key, can know. */
export async function originAllowedByAnyKey(db: DB, origin: string): Promise<boolean> {
  const row = await db.selectFrom('storefront_key_origins').select('key_id').where('origin', '=', origin).limit(1).executeTakeFirst();
  return row !== undefined;
}
