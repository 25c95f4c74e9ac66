import { sql, type Expression, type SelectQueryBuilder, type SqlBool } from 'kysely';

// GET /customers?query=: customers by the start of any word a merchant would type: a first or
// last name, an e-mail address, a remote_id. Each word of the query must start one of them
// ("Margaret Lovelace": first name "Margaret…" and last name "Lovelace…"), case-insensitive.
// A start, not any part: each column's lower() has an index on (shop_id, lower(column))
// (migration 027, and the e-mail's unique one), and a start is a range of it on both databases;
// LIKE then keeps exactly the rows that start with the word, whatever the collation's order.
// Case-insensitive as lower() is: SQLite's folds ASCII letters only, so "Ørsted" is found by "Ørs"
// on both databases (a word is tried as each database may have folded it), by "ørs" on PostgreSQL.

/** At most this many words of a query are matched; more narrow nothing a person needs. */
export const SEARCH_WORDS = 5;
const COLUMNS = ['first_name', 'last_name', 'email'] as const;

/** The words of a query, their ASCII letters lower-case as lower() makes them on both databases (at most SEARCH_WORDS). */
export function searchWords(query: string): string[] {
  return query
    .trim()
    .replace(/[A-Z]/g, (c) => c.toLowerCase())
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, SEARCH_WORDS);
}

/** The first string after every string that starts with `prefix` (its last character's successor). */
function pastPrefix(prefix: string): string {
  const last = prefix.codePointAt(prefix.length - 1)!;
  return prefix.slice(0, -1) + String.fromCodePoint(Math.min(last + 1, 0x10ffff));
}

/** A word as lower() may have made it: ASCII letters folded (SQLite), and every letter folded (PostgreSQL), when they differ. */
const spellings = (word: string): string[] => [...new Set([word, word.toLowerCase()])];

/** `lower(column)` starts with the word: a range the index serves, and LIKE for exactness. */
function startsWith(column: (typeof COLUMNS)[number], word: string): Expression<SqlBool> {
  const pattern = `${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const lowered = sql`lower(${sql.ref(column)})`;
  return sql<SqlBool>`(${lowered} >= ${word} and ${lowered} < ${pastPrefix(word)} and ${lowered} like ${pattern} escape '\\')`;
}

/** Narrows a list of the shop's customers to those every word of `query` starts a name, e-mail or remote_id of. */
export function whereSearched<Q extends SelectQueryBuilder<any, any, any>>(query: Q, text: string): Q {
  let narrowed = query;
  for (const word of searchWords(text)) {
    narrowed = narrowed.where((eb) =>
      eb.or([
        ...COLUMNS.flatMap((column) => spellings(word).map((spelling) => startsWith(column, spelling))),
        ...(/^\d{1,15}$/.test(word) ? [eb('remote_id', '=', Number(word))] : []),
      ]),
    ) as Q;
  }
  return narrowed;
}
