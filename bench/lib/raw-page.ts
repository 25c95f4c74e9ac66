import BetterSqlite3 from 'better-sqlite3';
import Fastify from 'fastify';

// A reference for the list benchmark, not the API: a bare Fastify route that reads a cursor
// page of customers with one raw better-sqlite3 statement and answers it, with no auth, hooks,
// balances or query builder. It shows what one SQLite read of a page costs on this machine, on
// top of the ceiling. argv: port, database file, shop id.

const [port, file, shop] = process.argv.slice(2);
// `limit +?`, not `limit ?`: SQLite would prepare a statement with a bare LIMIT parameter
// again at every run (src/db/sqlite-driver.ts, LimitQueryCompiler), as the API's did until it
// wrote its LIMITs so: the reference is the cheapest read of the page.
const db = new BetterSqlite3(file!, { readonly: true });
db.pragma('cache_size = -65536');
const page = db
  .prepare(
    'select remote_id, email, first_name, last_name, phone, birthday, created_at, updated_at from customers where shop_id = ? and remote_id > ? order by remote_id limit +?',
  )
  .raw(true);
const iso = (ms: number) => new Date(ms).toISOString();

const app = Fastify({ logger: false });
app.get('/*', async (request, reply) => {
  const query = request.query as Record<string, string | undefined>;
  const sinceId = Number(query['pagination[since_id]'] ?? 0);
  const limit = Number(query['pagination[limit]'] ?? 25);
  const rows = page.all(Number(shop), sinceId, limit + 1) as [number, string, string, string, string, string, number, number][];
  const more = rows.length > limit;
  if (more) rows.length = limit;
  const data = rows.map(([remote_id, email, first_name, last_name, phone, birthday, created_at, updated_at]) => ({
    remote_id,
    email,
    first_name,
    last_name,
    phone,
    birthday,
    points_balance: 0,
    credits_balance: 0,
    created_at: iso(created_at),
    updated_at: iso(updated_at),
  }));
  const next = more ? rows[rows.length - 1]![0] : null;
  return reply.type('application/json; charset=utf-8').send({ links: { since_id: sinceId, limit, next_since_id: next }, data });
});
await app.listen({ host: '127.0.0.1', port: Number(port) });
