import { isDeepStrictEqual } from 'node:util';
import { isObject, tidy, tidyParameter, type Json } from './openapi-tidy.js';
import { errorResponseDoc, pascal } from './schemas.js';

// @fastify/swagger writes every header, error response, example and parameter inline, in every
// operation that has it: ~60 operations each repeating the same dozen pieces made the document
// several times its size. useComponents declares each piece once in `components` and refers to
// it with `$ref`. It changes the document only: routes keep their own schemas for validation
// and serialisation.

interface Operation {
  parameters?: Json[];
  requestBody?: Json;
  'x-optional-body'?: boolean;
  responses?: Record<string, Json>;
}

type PathItem = Record<string, Operation> & { parameters?: Json[] };

export interface OpenApiDocument {
  paths?: Record<string, PathItem>;
  components?: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

const ref = (kind: 'headers' | 'responses' | 'parameters' | 'examples' | 'schemas', name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** Response headers by their name, each with its name in components.headers. */
export type SharedHeaders = Record<string, { component: string; header: Json }>;

/** A header as routes declare it (JSON schema with a description) → an OpenAPI Header Object, as @fastify/swagger writes it. */
export function headerObject({ description, ...schema }: Json): Json {
  return description === undefined ? { schema } : { schema, description };
}

/** Collects named components, refusing two different ones under the same name. */
class Components {
  readonly items: Record<string, Json> = {};
  constructor(private readonly kind: 'responses' | 'examples' | 'schemas') {}
  add(name: string, item: Json): { $ref: string } {
    const known = this.items[name];
    if (known !== undefined && !isDeepStrictEqual(known, item)) {
      throw new Error(`Two different ${this.kind} would be named ${name} in the OpenAPI document; give one of them a name of its own`);
    }
    this.items[name] = item;
    return ref(this.kind, name);
  }
}

/**
 * A path parameter that every operation of a path declares alike is declared once, on the path
 * (`/rewards/{id}`'s `id` for GET, PATCH and DELETE).
 */
function hoistPathParameters(item: PathItem): PathItem {
  const operations = Object.values(item) as Operation[];
  if (operations.length < 2) return item;
  const [first, ...others] = operations;
  const common = (first!.parameters ?? []).filter((p) => p.in === 'path' && others.every((op) => (op.parameters ?? []).some((q) => isDeepStrictEqual(p, q))));
  if (common.length === 0) return item;
  const out: PathItem = { parameters: common } as PathItem;
  for (const [method, op] of Object.entries(item) as [string, Operation][]) {
    const parameters = (op.parameters ?? []).filter((p) => !common.some((c) => isDeepStrictEqual(c, p)));
    const { parameters: _, ...rest } = op;
    out[method] = parameters.length > 0 ? { ...rest, parameters } : rest;
  }
  return out;
}

/**
 * A parameter that most of the places declaring its name declare alike (at least two) is
 * declared once, named after itself (`pagination[limit]` → `PaginationLimit`); the places that
 * say it otherwise (the customer_identifier of PUT /customers, which takes no e-mail) keep
 * theirs. Parameters described per resource (a path `id`, a `sort[order_type]` listing each
 * resource's fields) stay where they are.
 */
function sharedParameters(lists: Json[][]): Map<string, { name: string; parameter: Json }> {
  const key = (p: Json) => `${String(p.in)} ${String(p.name)}`;
  const groups = new Map<string, Json[]>();
  for (const list of lists) for (const p of list) groups.set(key(p), [...(groups.get(key(p)) ?? []), p]);
  const shared = [...groups].flatMap(([k, all]) => {
    const counts = all.map((p) => all.filter((q) => isDeepStrictEqual(p, q)).length);
    const most = Math.max(...counts);
    return most >= 2 && most * 2 > all.length ? [{ key: k, parameter: all[counts.indexOf(most)]! }] : [];
  });
  const names = shared.map(({ parameter }) => pascal(String(parameter.name)));
  return new Map(
    shared.map(({ key: k, parameter }, i) => {
      const name = names[i]!;
      // The same name in two places (a path and a query `customer_identifier`) says where.
      return [k, { name: names.indexOf(name) === names.lastIndexOf(name) ? name : `${name}In${pascal(String(parameter.in))}`, parameter }];
    }),
  );
}

/** What may differ between the uses of one titled schema: what each use requires, and its examples. */
const OWN_KEYS = ['required', 'minProperties', 'examples', 'description'];

/** Every schema with a `title` in paths (bodies, responses and parameters), by title. */
function titledSchemas(paths: Record<string, PathItem>): Map<string, Json[]> {
  const found = new Map<string, Json[]>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (!isObject(value)) return;
    if (typeof value.title === 'string') found.set(value.title, [...(found.get(value.title) ?? []), value]);
    Object.values(value).forEach(walk);
  };
  for (const item of Object.values(paths)) {
    for (const op of Object.values(item) as Operation[]) {
      walk(op.parameters);
      walk(op.requestBody);
      Object.values(op.responses ?? {}).forEach((r) => walk(r.content));
    }
  }
  return found;
}

/**
 * A titled schema is declared once under its title. Its uses may differ in OWN_KEYS only (a
 * create requires fields that an update does not, on the same fields): what they all share is
 * the component, and each use adds its own beside it.
 */
function split(schema: Json, uses: Json[]): { common: Json; own: Json } {
  const differs = (key: string) => uses.some((use) => !isDeepStrictEqual(use[key], uses[0]![key]));
  const bad = Object.keys({ ...uses[0], ...schema }).filter((key) => !OWN_KEYS.includes(key) && differs(key));
  if (bad.length > 0) throw new Error(`The schemas titled ${String(schema.title)} differ in ${bad.join(', ')}; give them different titles`);
  const own = Object.fromEntries(OWN_KEYS.filter((key) => differs(key) && schema[key] !== undefined).map((key) => [key, schema[key]]));
  const common = Object.fromEntries(Object.entries(schema).filter(([key]) => !OWN_KEYS.includes(key) || !differs(key)));
  return { common, own };
}

/**
 * An error example that two or more responses show (each code's example is the same wherever it
 * is shown) is declared once, under the code it shows.
 */
function shareExamples(responses: Record<string, Json>, examples: Components): void {
  const medias = Object.values(responses).flatMap((r) => (isObject(r.content) ? Object.values(r.content).filter(isObject) : []));
  const count = new Map<string, number>();
  for (const media of medias) if (isObject(media.examples)) for (const name of Object.keys(media.examples)) count.set(name, (count.get(name) ?? 0) + 1);
  for (const media of medias) {
    if (!isObject(media.examples)) continue;
    media.examples = Object.fromEntries(
      Object.entries(media.examples).map(([name, example]) => [name, (count.get(name) ?? 0) >= 2 ? examples.add(name, example as Json) : example]),
    );
  }
}

const schemaName = (schema: unknown) => (isObject(schema) && typeof schema.$ref === 'string' ? schema.$ref.split('/').pop() : undefined);

/**
 * The name of a shared success response, from what it holds: `{"data": Reward}` → `Reward`,
 * a list of them → `RewardList`; `Written` when it is a write's (it may be replayed).
 */
function successName(response: Json): string | undefined {
  const schema = (response.content as { 'application/json'?: { schema?: { properties?: Record<string, Json> } } } | undefined)?.['application/json']?.schema;
  const data = schema?.properties?.data;
  const links = schema?.properties?.links;
  const base = schemaName(data) ?? (links && isObject(data) ? `${schemaName(data.items) ?? ''}List` : undefined);
  if (base === undefined || base === 'List') return undefined;
  return isObject(response.headers) && 'Idempotent-Replayed' in response.headers ? `${base}Written` : base;
}

/**
 * A success response that several operations give alike (a redemption as created, used or
 * voided; the points events of the shop, a customer or an order) is declared once; an
 * operation whose wording differs (`Created` rather than `OK`) keeps it beside the `$ref`.
 */
function shareSuccessResponses(paths: Record<string, PathItem>, responses: Components): Record<string, PathItem> {
  const withoutDescription = ({ description: _, ...rest }: Json) => rest;
  const all = Object.values(paths).flatMap((item) =>
    Object.entries(item).flatMap(([key, op]) =>
      key === 'parameters'
        ? []
        : Object.entries((op as Operation).responses ?? {})
            .filter(([status, r]) => Number(status) < 400 && !('$ref' in r))
            .map(([, r]) => r),
    ),
  );
  const uses = (r: Json) => all.filter((other) => isDeepStrictEqual(withoutDescription(other), withoutDescription(r)));
  const refer = (status: string, r: Json): Json => {
    if (Number(status) >= 400 || '$ref' in r) return r;
    const same = uses(r);
    const name = same.length >= 2 ? successName(r) : undefined;
    if (name === undefined) return r;
    // The component says what most of its uses say.
    const descriptions = same.map((other) => other.description);
    const description = descriptions.sort((a, b) => descriptions.filter((d) => d === b).length - descriptions.filter((d) => d === a).length)[0];
    const target = responses.add(name, { ...r, description });
    return r.description === description ? target : { ...target, description: r.description };
  };
  return Object.fromEntries(
    Object.entries(paths).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item).map(([key, op]) =>
          key === 'parameters'
            ? [key, op]
            : [
                key,
                {
                  ...(op as Operation),
                  responses: Object.fromEntries(Object.entries((op as Operation).responses ?? {}).map(([status, r]) => [status, refer(status, r)])),
                },
              ],
        ),
      ) as PathItem,
    ]),
  );
}

/**
 * Rewrites an operation to refer to components: its response headers equal to one of `headers`;
 * its error responses that http/schemas.ts's errorRef made, under the name each was given (a
 * route's own wording of a shared response stays beside its `$ref`); its schemas that have a
 * `title`. What it moves goes into `schemas` and `responses`.
 */
function operationReferrer(headers: SharedHeaders, titled: Map<string, Json[]>, schemas: Components, responses: Components): (op: Operation) => Operation {
  const referHeaders = (inline: Json) =>
    Object.fromEntries(
      Object.entries(inline).map(([name, header]) => {
        const shared = headers[name];
        return [name, shared && isDeepStrictEqual(header, shared.header) ? ref('headers', shared.component) : header];
      }),
    );

  const referSchema = (schema: unknown): unknown => {
    if (Array.isArray(schema)) return schema.map(referSchema);
    if (!isObject(schema)) return schema;
    const inner = Object.fromEntries(Object.entries(schema).map(([key, child]) => [key, referSchema(child)]));
    if (typeof schema.title !== 'string') return inner;
    const { common, own } = split(inner, titled.get(schema.title)!);
    const target = schemas.add(schema.title, common);
    return Object.keys(own).length === 0 ? target : { allOf: [target], ...own };
  };

  const referContent = (content: unknown): unknown =>
    isObject(content)
      ? Object.fromEntries(Object.entries(content).map(([type, m]) => [type, { ...(m as Json), schema: referSchema((m as Json).schema) }]))
      : content;

  // @fastify/swagger repeats a body schema's description on the request body; the schema says it.
  // A body the route reads as {} when left out is not required (`required: false` is the default).
  const referBody = ({ description, required, ...body }: Json, optional: boolean): Json => {
    const bodySchemas = isObject(body.content) ? Object.values(body.content).map((m) => (m as Json).schema) : [];
    const repeated = bodySchemas.length > 0 && bodySchemas.every((schema) => isObject(schema) && schema.description === description);
    return {
      ...(optional ? {} : { required }),
      ...body,
      ...(description === undefined || repeated ? {} : { description }),
      content: referContent(body.content),
    };
  };

  const referResponse = (status: string, inline: Json): Json => {
    const response: Json = { ...inline };
    if (isObject(inline.headers)) response.headers = referHeaders(inline.headers);
    if (inline.content !== undefined) response.content = referContent(inline.content);
    const named = typeof inline.description === 'string' ? errorResponseDoc(status, inline.description) : undefined;
    if (named === undefined) return response;
    // The shared description says it for every route ("the message says which"): a route's own
    // wording would cost the document its size limit (test/foundation/openapi.test.ts).
    return responses.add(named.name, { ...response, description: named.description });
  };

  return (op) => {
    const { 'x-optional-body': optional, ...o }: Operation = { ...op };
    if (op.parameters) o.parameters = op.parameters.map((p) => tidyParameter({ ...p, schema: referSchema(p.schema) }));
    if (isObject(op.requestBody)) o.requestBody = referBody(op.requestBody, optional === true);
    if (op.responses) o.responses = Object.fromEntries(Object.entries(op.responses).map(([status, r]) => [status, referResponse(status, r)]));
    return o;
  };
}

/** Moves the parameters that operations share (sharedParameters) into components, in place; returns them. */
function shareParameters(paths: Record<string, PathItem>): Record<string, Json> {
  const lists = Object.values(paths).flatMap((item) => [
    item.parameters ?? [],
    ...Object.entries(item)
      .filter(([key]) => key !== 'parameters')
      .map(([, op]) => (op as Operation).parameters ?? []),
  ]);
  const parameterNames = sharedParameters(lists);
  const parameters: Record<string, Json> = {};
  const referParameters = (list: Json[]) =>
    list.map((p) => {
      const shared = parameterNames.get(`${String(p.in)} ${String(p.name)}`);
      if (shared === undefined || !isDeepStrictEqual(shared.parameter, p)) return p;
      parameters[shared.name] = p;
      return ref('parameters', shared.name);
    });
  for (const item of Object.values(paths)) {
    for (const [key, value] of Object.entries(item)) {
      if (key === 'parameters') item.parameters = referParameters(value as Json[]);
      else if ((value as Operation).parameters) (value as Operation).parameters = referParameters((value as Operation).parameters!);
    }
  }
  return parameters;
}

/** The shared headers that `used` (the document's JSON) refers to. */
function usedHeaders(headers: SharedHeaders, used: string): Record<string, Json> {
  return Object.fromEntries(
    Object.values(headers)
      .filter(({ component }) => used.includes(JSON.stringify(`#/components/headers/${component}`)))
      .map(({ component, header }) => [component, header]),
  );
}

/**
 * Moves into `components`: what operationReferrer moves (shared headers, named error responses,
 * titled schemas), the success responses and examples several operations share, and the shared
 * parameters. Every place that had them gets a `$ref` instead.
 */
export function useComponents(document: OpenApiDocument, headers: SharedHeaders): OpenApiDocument {
  const doc = tidy(document) as OpenApiDocument;
  const responses = new Components('responses');
  const examples = new Components('examples');
  const schemas = new Components('schemas');
  const referOperation = operationReferrer(headers, titledSchemas(doc.paths ?? {}), schemas, responses);

  const built = Object.fromEntries(
    Object.entries(doc.paths ?? {}).map(([path, item]) => {
      const out: PathItem = {} as PathItem;
      for (const [method, op] of Object.entries(item) as [string, Operation][]) out[method] = referOperation(op);
      return [path, hoistPathParameters(out)];
    }),
  );
  const paths = shareSuccessResponses(built, responses);
  const parameters = shareParameters(paths);
  shareExamples(responses.items, examples);

  return {
    ...doc,
    paths,
    components: {
      ...doc.components,
      schemas: { ...doc.components?.schemas, ...schemas.items },
      headers: usedHeaders(headers, JSON.stringify(paths) + JSON.stringify(responses.items)),
      responses: responses.items,
      parameters,
      examples: examples.items,
    },
  };
}
