import type { FastifyInstance, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { AppError } from '../errors.js';
import { findShopByToken, liveTokenHashes, recordTokenUses, shopsGeneration, type Authenticated, type Shop, type TokenIdentity } from '../shops/repository.js';
import { allows, type RouteScope } from '../shops/scopes.js';
import { hashToken } from '../shops/tokens.js';
import { AuthFailures } from './auth-failures.js';
import { KnownTokens } from './known-tokens.js';
import { TokenUsage } from './token-usage.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The shop whose token authenticated the request (set on every /merchant_api/v1 route). */
    shop: Shop;
    /** The API token that authenticated the request: who made it (the audit log), and its scopes. */
    token: TokenIdentity;
  }
  interface FastifyContextConfig {
    /**
     * The scope a /merchant_api/v1 route needs (shops/scopes.ts), declared beside its schema:
     * `config: { scope: 'rewards:write' }`. A route that declares none needs `admin`, and
     * test/foundation/scopes.test.ts fails on it.
     */
    scope?: RouteScope;
  }
  interface FastifyInstance {
    /** When the API tokens were last used (http/token-usage.ts), in the merchant API's scope. */
    tokenUsage: TokenUsage;
  }
}

/** Accepts both `Authorization: <token>` and `Authorization: Bearer <token>`. */
export function tokenFromHeader(header: string | undefined): string | null {
  if (header === undefined) return null;
  const value = header.trim();
  const match = /^bearer\s+(.+)$/i.exec(value);
  const token = (match ? match[1]! : value).trim();
  return token === '' ? null : token;
}

/**
 * How long a token found live is trusted without asking the database again. Revoking a token
 * or changing a shop in this process takes effect at once (shopsGeneration); done by another
 * process (the CLI, another API process) it takes effect within this time.
 */
export const TOKEN_CACHE_MS = 2000;
const TOKEN_CACHE_SIZE = 10_000;

interface Cached<T> {
  value: T;
  /** When the lookup that found it began: it is trusted until TOKEN_CACHE_MS after that. */
  since: number;
  generation: number;
}

interface Lookup<T> {
  value: Promise<T | undefined>;
  generation: number;
}

/**
 * Live tokens seen lately, keyed by the token as sent, so a hit costs no hash; the process holds
 * those tokens only as long as the requests that carried them would. A request that finds its
 * token past half its time is answered from the cache and asks the database again on the side,
 * so a token in steady use is never looked up in a request's path; requests that miss together
 * share one lookup. Under a flood of requests, every expiry would otherwise send all those in
 * flight to the database's line at once, each waiting there before its real work.
 */
export class TokenCache<T extends object> {
  readonly #entries = new Map<string, Cached<T>>();
  readonly #lookups = new Map<string, Lookup<T>>();

  /** `generation` counts this process's changes that make what was found stale (shopsGeneration). */
  constructor(
    readonly find: (token: string) => Promise<T | undefined>,
    readonly generation: () => number = shopsGeneration,
  ) {}

  /** What a token found live lately stands for; undefined when it must be looked up (lookUp). */
  cached(token: string): T | undefined {
    const cached = this.#entries.get(token);
    if (cached !== undefined && cached.generation === this.generation()) {
      const age = performance.now() - cached.since;
      if (age < TOKEN_CACHE_MS) {
        // A refresh that fails leaves the entry to expire; the next request tries again.
        if (age >= TOKEN_CACHE_MS / 2) this.#lookup(token).value.catch(() => {});
        return cached.value;
      }
    }
    return undefined;
  }

  /** What a live token stands for, from the database; undefined when it is unknown or revoked. */
  lookUp(token: string): Promise<T | undefined> {
    return this.#lookup(token).value;
  }

  #lookup(token: string): Lookup<T> {
    // Taken before the lookup: a change made meanwhile makes what it finds stale at once, and a
    // request made after the change does not join it.
    const generation = this.generation();
    const pending = this.#lookups.get(token);
    if (pending !== undefined && pending.generation === generation) return pending;
    const since = performance.now();
    const lookup: Lookup<T> = {
      generation,
      value: this.find(token)
        .then((value) => {
          if (value === undefined) {
            this.#entries.delete(token);
            return value;
          }
          if (this.#entries.size >= TOKEN_CACHE_SIZE && !this.#entries.has(token)) this.#entries.clear();
          // Shared by the requests that follow: frozen so that none can change it for the others.
          this.#entries.set(token, { value: Object.freeze(value), since, generation });
          return value;
        })
        .finally(() => {
          if (this.#lookups.get(token) === lookup) this.#lookups.delete(token);
        }),
    };
    this.#lookups.set(token, lookup);
    return lookup;
  }
}

const unknownToken = () => new AppError('unauthorized', 'The API token is unknown or has been revoked');

/** The scope a route needs: what it declares, else `admin`. */
export const neededScope = (config: { scope?: RouteScope } | undefined): RouteScope => config?.scope ?? 'admin';

interface Authenticator {
  cache: TokenCache<Authenticated>;
  failures: AuthFailures;
  known: KnownTokens;
  usage: TokenUsage;
}

/**
 * Authenticates the request: synchronously when its token was found live lately (the cache),
 * which is nearly always, so that the hook costs no promise; else after the lookups.
 */
function authenticate(request: FastifyRequest, authenticator: Authenticator, done: HookHandlerDoneFunction): void {
  const token = tokenFromHeader(request.headers.authorization);
  if (token === null) {
    return done(new AppError('unauthorized', 'Send your API token in the Authorization header: "Authorization: Bearer <token>"'));
  }
  const found = authenticator.cache.cached(token);
  if (found !== undefined) return done(admitted(request, found, authenticator) ?? undefined);
  lookUp(request, token, authenticator).then(
    (looked) => done(admitted(request, looked, authenticator) ?? undefined),
    (error: Error) => done(error),
  );
}

/** A token not in the cache, from the database; throws when it is unknown or revoked. */
async function lookUp(request: FastifyRequest, token: string, { cache, failures, known }: Authenticator): Promise<Authenticated> {
  const refusal = failures.refusal(request.ip);
  if (refusal !== undefined && !(await known.has(hashToken(token)))) throw refusal;
  const found = await cache.lookUp(token);
  if (found === undefined) {
    failures.record(request.ip);
    throw unknownToken();
  }
  return found;
}

/** Sets the request's shop and token; the error to answer instead, or null. */
function admitted(request: FastifyRequest, found: Authenticated, { failures, usage }: Authenticator): AppError | null {
  // A token that expired while cached is refused as the database now would refuse it.
  const expiresAt = found.token.expires_at;
  if (expiresAt !== null && expiresAt <= request.server.clock()) {
    failures.record(request.ip);
    return unknownToken();
  }
  request.shop = found.shop;
  request.token = found.token;
  usage.note(found.token.id, request.server.clock());
  const needed = neededScope(request.routeOptions.config);
  if (!allows(found.token.scopes, needed)) {
    return new AppError('insufficient_scope', `This API token lacks the scope ${needed} that this operation needs`);
  }
  return null;
}

/** The per-address count of failed authentications, shared by the merchant API and the store connections' ingest. */
export const authFailuresOf = (app: FastifyInstance): AuthFailures => new AuthFailures(app.config.authFailures.max, app.config.authFailures.windowMs);

/** Every route registered in this scope requires a live token holding the route's scope; `failures` counts the address's failures. */
export function registerAuth(app: FastifyInstance, failures: AuthFailures = authFailuresOf(app)): void {
  const cache = new TokenCache<Authenticated>((token) => findShopByToken(app.db, token, app.clock()));
  const known = new KnownTokens(() => liveTokenHashes(app.db, app.clock()));
  const usage = new TokenUsage((uses) => recordTokenUses(app.db, uses), app.log);
  app.decorate('tokenUsage', usage);
  app.addHook('onClose', async () => usage.close());
  app.decorateRequest('shop', null as unknown as Shop);
  app.decorateRequest('token', null as unknown as TokenIdentity);
  const authenticator: Authenticator = { cache, failures, known, usage };
  app.addHook('onRequest', (request, _reply, done) => authenticate(request, authenticator, done));
}
