import createClient, { type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch';
import { LoyaltyApiError } from './errors.js';
import { retryingFetch, type TransportOptions } from './retry.js';

// The typed core every client of this package is made of (the merchant API's today, the
// storefront's next): typed calls that return the data or throw LoyaltyApiError, cursor
// pagination, and the transport of retry.ts. What differs between clients is the paths type
// and the headers that authenticate.

type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch';

/** The paths that have an operation for the method (openapi-typescript writes `put?: never` for the others). */
export type PathsWithMethod<Paths, M extends HttpMethod> = {
  [P in keyof Paths]: Paths[P] extends { [K in M]: unknown } ? P : never;
}[keyof Paths];

type RequiredKeysOf<T> = { [K in keyof T]: Record<never, never> extends Pick<T, K> ? never : K }[keyof T];

/** The call's init is optional where the operation requires nothing (as openapi-fetch says it). */
type InitParam<Init> = RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];

type Operation<Paths, P extends keyof Paths, M extends HttpMethod> = Paths[P][M & keyof Paths[P]] & Record<string | number, any>;

/** What a call resolves to: the body of the operation's success response. */
export type ResponseData<Paths, P extends keyof Paths, M extends HttpMethod, Init = unknown> = Exclude<
  FetchResponse<Operation<Paths, P, M>, Init, `${string}/${string}`>,
  { error: unknown }
>['data'];

export type Call<Paths, M extends HttpMethod> = <P extends PathsWithMethod<Paths, M>, Init extends MaybeOptionalInit<Paths[P], M & keyof Paths[P]>>(
  path: P,
  ...init: InitParam<Init>
) => Promise<ResponseData<Paths, P, M, Init>>;

/** The list paths: their GET takes `pagination[since_id]`. */
export type ListPath<Paths> = {
  [P in PathsWithMethod<Paths, 'get'>]: TakesSinceId<
    NonNullable<(Paths[P] & { get: { parameters: { query?: unknown } } })['get']['parameters']['query']>
  > extends true
    ? P
    : never;
}[PathsWithMethod<Paths, 'get'>];

// `query?: never` (no query at all) has every key: ask for the key only of a real query.
type TakesSinceId<Query> = [Query] extends [never] ? false : 'pagination[since_id]' extends keyof Query ? true : false;

/** One record of a list path. */
export type ListItem<Paths, P extends keyof Paths> = ResponseData<Paths, P, 'get'> extends { data: (infer T)[] } ? T : never;

export interface ApiClient<Paths extends object> {
  GET: Call<Paths, 'get'>;
  POST: Call<Paths, 'post'>;
  PUT: Call<Paths, 'put'>;
  PATCH: Call<Paths, 'patch'>;
  DELETE: Call<Paths, 'delete'>;
  /**
   * Every record of a list, in cursor mode (ID ascending), fetching pages as it is iterated.
   * `pagination[limit]` sets the page size (default 250, the most); `pagination[since_id]`
   * where to start; offset parameters are not sent.
   */
  paginate<P extends ListPath<Paths>>(
    path: P,
    ...init: InitParam<MaybeOptionalInit<Paths[P], 'get' & keyof Paths[P]>>
  ): AsyncIterableIterator<ListItem<Paths, P>>;
}

export interface CoreOptions extends TransportOptions {
  /** The server's address, e.g. `https://loyalty.example.com`; paths start with the API's prefix. */
  baseUrl: string;
  /** Headers every request carries: how the client authenticates. */
  headers: Record<string, string>;
}

const OFFSET_PARAMS = ['pagination[page]', 'pagination[per_page]', 'sort[order_type]', 'sort[order_direction]'];

export function createApiClient<Paths extends object>(options: CoreOptions): ApiClient<Paths> {
  const client = createClient<Paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), headers: options.headers, fetch: retryingFetch(options) });

  const call =
    (method: HttpMethod) =>
    async (path: string, init?: { signal?: AbortSignal | null; params?: object }): Promise<unknown> => {
      let outcome: { data?: unknown; error?: unknown; response: Response };
      try {
        outcome = await (client.request as (m: string, p: string, i?: object) => Promise<typeof outcome>)(method, path, init);
      } catch (error) {
        if (init?.signal?.aborted) throw error;
        throw LoyaltyApiError.fromNetwork(error);
      }
      if (!outcome.response.ok) throw LoyaltyApiError.fromResponse(outcome.response, outcome.error);
      return outcome.data;
    };

  async function* paginate(path: string, init: { params?: { query?: Record<string, unknown> } } = {}): AsyncGenerator<unknown> {
    const query = Object.fromEntries(Object.entries(init.params?.query ?? {}).filter(([name]) => !OFFSET_PARAMS.includes(name)));
    let since = query['pagination[since_id]'] ?? 0;
    for (;;) {
      const page = (await call('get')(path, {
        ...init,
        params: { ...init.params, query: { ...query, 'pagination[limit]': query['pagination[limit]'] ?? 250, 'pagination[since_id]': since } },
      })) as {
        data: unknown[];
        links: { next_since_id?: number | null };
      };
      yield* page.data;
      if (page.links.next_since_id === null || page.links.next_since_id === undefined) return;
      since = page.links.next_since_id;
    }
  }

  return {
    GET: call('get') as Call<Paths, 'get'>,
    POST: call('post') as Call<Paths, 'post'>,
    PUT: call('put') as Call<Paths, 'put'>,
    PATCH: call('patch') as Call<Paths, 'patch'>,
    DELETE: call('delete') as Call<Paths, 'delete'>,
    paginate: paginate as ApiClient<Paths>['paginate'],
  };
}
