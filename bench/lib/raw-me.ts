import BetterSqlite3 from 'better-sqlite3';
import Fastify from 'fastify';
import { webcrypto } from 'node:crypto';
import { jwtVerify } from 'jose';

// A reference for the storefront benchmark, not the API: a bare Fastify route that verifies
// the customer token with the same library (jose, HS256, the key's secret) and reads the
// customer's row with one raw better-sqlite3 statement, with no key lookup, hooks, balances,
// tiers or expiries. argv: port, database file, shop id, the key's secret.

const [port, file, shop, secret] = process.argv.slice(2);
const db = new BetterSqlite3(file!, { readonly: true });
db.pragma('cache_size = -65536');
const row = db.prepare(
  'select remote_id, email, first_name, points_balance, credits_balance, points_pending, points_earned_lifetime, referral_code, birthday from customers where shop_id = ? and remote_id = ?',
);
// Imported once, as the API imports a key's secret once.
const key = await webcrypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);

const app = Fastify({ logger: false });
app.get('/*', async (request, reply) => {
  const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
  if (token === undefined) return reply.code(200).send({ ready: true });
  const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], requiredClaims: ['exp', 'iat', 'sub'] });
  const customer = row.get(Number(shop), Number(payload.sub));
  if (customer === undefined) return reply.code(401).send({ error: 'unknown customer' });
  return reply.type('application/json; charset=utf-8').send({ data: customer });
});
await app.listen({ host: '127.0.0.1', port: Number(port) });
