/**
 * Route definitions: one schema per request part and response, used by ajv to validate
 * and by the OpenAPI document to describe. A route is declared once, here, and both
 * express and /openapi.yaml learn it from that declaration.
 */
import type { Request, RequestHandler, Response, Router } from 'express';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { errorEnvelopeSchema } from '../../src/kernel/http/envelope.js';
import { AppError } from '../../src/kernel/http/errors.js';
import type { JsonSchema } from '../../src/kernel/http/schema.js';
import type { RouteRateLimit } from './rate-limit.js';
import type { ReadCache } from '../cache/read-cache.js';
import { render, send, type Reply } from './rendered.js';
import { createCachedHits, type CachedHits, type FrontMiss, type FrontOptions, type FrontRoutes } from './cached-hits.js';
import { findGet, routeMatcher, type DeclaredRoute, type RouterMatching } from './front-paths.js';
import { checkSpelling, stableJson, validate } from '../../src/kernel/http/request-input.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';

type Method = 'get' | 'post' | 'put' | 'delete' | 'patch';

export type { Reply };

/**
 * A handler's request. req and res are express's, except for a route with cachedFrom (whose
 * answer depends on its validated query and params alone), whose GETs `front` may run in
 * front of express (cached-hits.ts) without them: there, req and res are undefined.
 */
export interface Ctx<Q, P, B> { query: Q; params: P; body: B; req: Request; res: Response }

export interface RouteDef<Q = Record<string, never>, P = Record<string, never>, B = undefined> {
  method: Method;
  /** express path, e.g. /v1/webhooks/:id */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  params?: JsonSchema;
  query?: JsonSchema;
  body?: JsonSchema;
  security?: Record<string, string[]>[];
  /** status → description and schema (JSON) or content type (text) */
  responses: Record<number, { description: string; schema?: JsonSchema; contentType?: string; headers?: Record<string, JsonSchema> }>;
  /** middleware that runs before validation (rate limits, auth) */
  before?: RequestHandler[];
  /** which rate limit the route lives under (infra/http/rate-limit.ts); default 'standard' */
  rateLimit?: RouteRateLimit;
  /**
   * The read models (projection names) the handler's answer is computed from, and nothing
   * else: its replies are kept by the read cache (infra/cache/read-cache.ts) until one of
   * them commits again. Only for handlers whose answer depends on the request's validated
   * path and query alone, and that answer JSON: their GETs without middleware of their own
   * (before) or onInvalid are answered in front of express, cache on or off (cached-hits.ts).
   */
  cachedFrom?: readonly string[];
  /**
   * The keys of those read models (src/kernel/names/read-scopes.ts) the answer to this
   * request depends on, and nothing else of them: a commit that touched other keys leaves
   * it cached. Only when every row the answer reads carries one of the keys (a list of a
   * gateway's policies: `gateway:<key>`); undefined when the request's answer is not so
   * bounded, or for input the handler refuses.
   */
  cacheScopes?(query: Q, params: P): readonly string[] | undefined;
  /**
   * The reply to a request that fails validation, instead of the 400: for a route whose
   * spec answers every error alike (pool search: 200 with no results). `reason` is the
   * message the 400 would have carried.
   */
  onInvalid?(reason: string, req: Request): Reply;
  handler(ctx: Ctx<Q, P, B>): Promise<Reply | undefined>;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export interface ApiOptions {
  /** the standard rate limit, run first on every route declared with rateLimit 'standard' */
  standardLimit?: RequestHandler;
  /** keeps the replies of routes declared with cachedFrom */
  cache?: ReadCache;
  /** the clock of envelope timestamps */
  now?: () => number;
  /** what answering hits before express needs (cached-hits.ts's front); without, they are answered just before the router */
  front?: FrontOptions;
}

export class Api {
  private readonly ajv: Ajv;
  private readonly paths: Record<string, Record<string, unknown>> = {};
  private readonly standardLimit: RequestHandler | undefined;
  private readonly cache: ReadCache | undefined;
  private readonly hits: CachedHits | undefined;
  private readonly now: () => number;
  /** every route in the router's order: its matcher, whether it is a GET, and how front answers it (undefined: express does) */
  private readonly matchers: (DeclaredRoute & { prepare: ((params: Record<string, unknown>, search: string) => FrontMiss | undefined) | undefined })[] = [];

  constructor(
    private readonly router: Router,
    private readonly info: { title: string; version: string; description: string },
    opts: ApiOptions = {},
  ) {
    this.standardLimit = opts.standardLimit;
    this.cache = opts.cache?.enabled ? opts.cache : undefined;
    this.now = opts.now ?? Date.now;
    // with a front, misses (and every request, with the cache off) of list routes are answered before express too
    this.hits = this.cache || (opts.cache && opts.front) ? createCachedHits(opts.cache!, this.standardLimit, this.now, opts.front) : undefined;
    this.ajv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: false, strict: false });
    addFormats(this.ajv);
  }

  route<Q = Record<string, never>, P = Record<string, never>, B = undefined>(def: RouteDef<Q, P, B>): void {
    const vQuery = def.query ? this.ajv.compile(def.query) : undefined;
    const vParams = def.params ? this.ajv.compile(def.params) : undefined;
    const vBody = def.body ? this.ajv.compile(def.body) : undefined;
    const cache = this.cache;
    const limited = (def.rateLimit ?? 'standard') === 'standard' && this.standardLimit !== undefined;
    // served before the router on the next GET of the URL (cached-hits.ts): only routes that run nothing of their own before the handler
    const learnable = (def.before ?? []).length === 0;
    const handler: RequestHandler = async (req, res, next) => {
      try {
        const rawQuery = { ...(req.query as Record<string, unknown>) };
        const rawParams: Record<string, unknown> = { ...req.params };
        let query: unknown, params: unknown, body: unknown;
        try {
          checkSpelling(def.query, rawQuery, 'query');
          checkSpelling(def.params, rawParams, 'path');
          query = validate(vQuery, rawQuery, 'query');
          params = validate(vParams, rawParams, 'path');
          body = vBody ? validate(vBody, req.body ?? {}, 'body') : undefined;
        } catch (err) {
          if (!def.onInvalid || !(err instanceof AppError)) throw err;
          send(req, res, render(def.onInvalid(err.message, req), def.path, false), this.now());
          return;
        }
        const run = () => def.handler({ query: query as Q, params: params as P, body: body as B, req, res });
        if (cache && def.cachedFrom) {
          const key = `${def.method} ${def.path} ${stableJson(params)} ${stableJson(query)}`;
          const scopes = scopesOf(def, query as Q, params as P);
          const looked = this.hits?.looked(req, key);
          const rendered = await cache.get(def.cachedFrom, key, async () => render(await run(), def.path, true), (r) => r.body.length + key.length + 64, scopes, looked);
          if (looked === undefined && learnable) this.hits?.learn(req, { readModels: def.cachedFrom, key, scopes, route: def.path, limited });
          send(req, res, rendered, this.now());
          return;
        }
        const reply = await run();
        if (!reply || res.headersSent) return;
        if ('json' in reply || !reply.contentType || reply.contentType.startsWith('application/json')) {
          send(req, res, render(reply, def.path, false), this.now());
          return;
        }
        if (reply.headers) res.set(reply.headers);
        res.status(reply.status ?? 200).type(reply.contentType).send(reply.body);
      } catch (err) {
        next(err);
      }
    };
    const frontable = def.method === 'get' && def.cachedFrom !== undefined && learnable && def.onInvalid === undefined && def.body === undefined;
    this.matchers.push({
      match: routeMatcher(def.path, this.router as RouterMatching),
      get: def.method === 'get',
      prepare: frontable ? (p, search) => this.prepare(def, p, search, vQuery, vParams, limited) : undefined,
    });
    const standard = (def.rateLimit ?? 'standard') === 'standard' ? this.standardLimit : undefined;
    const hits = this.hits;
    // a request the cached hits' middleware counted already is not counted again
    const limit = standard === undefined ? [] : hits === undefined ? [standard] : [uncounted(hits, standard)];
    this.router[def.method](def.path, ...limit, ...(def.before ?? []), handler);
    this.document(def);
  }

  /** Answers the cache hits of URLs the router has seen, mounted just before the router; undefined when the cache is off. */
  cachedHits(): RequestHandler | undefined {
    return this.hits?.middleware;
  }

  /** Node's request handler: hits of known URLs and the list routes' misses answered before `app` (express) when there is a front, else `app` itself. */
  handler(app: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
    return this.hits ? this.hits.front(app, this.frontRoutes) : app;
  }

  /** The route express would run for a GET, when front may answer it (front-paths.ts). */
  private readonly frontRoutes: FrontRoutes = {
    miss: (url) => {
      const found = findGet(this.matchers, url);
      return found?.route.prepare?.({ ...found.params }, found.search);
    },
  };

  /**
   * A GET of a cachedFrom route validated as the router's handler validates it; undefined
   * for input it refuses, which express then refuses with its 400 (and counts).
   */
  private prepare<Q, P, B>(def: RouteDef<Q, P, B>, rawParams: Record<string, unknown>, search: string, vQuery: ValidateFunction | undefined, vParams: ValidateFunction | undefined, limited: boolean): FrontMiss | undefined {
    // express's 'simple' query parser is querystring.parse
    const rawQuery: Record<string, unknown> = { ...parseQuery(search) };
    let query: unknown, params: unknown;
    try {
      checkSpelling(def.query, rawQuery, 'query');
      checkSpelling(def.params, rawParams, 'path');
      query = validate(vQuery, rawQuery, 'query');
      params = validate(vParams, rawParams, 'path');
    } catch {
      return undefined;
    }
    const key = `${def.method} ${def.path} ${stableJson(params)} ${stableJson(query)}`;
    const tagged = this.cache !== undefined;
    return {
      readModels: def.cachedFrom!,
      key,
      scopes: this.cache ? scopesOf(def, query as Q, params as P) : undefined,
      route: def.path,
      limited,
      produce: async () => {
        const reply = await def.handler({ query: query as Q, params: params as P, body: undefined as B, req: undefined as unknown as Request, res: undefined as unknown as Response });
        if (reply && !('json' in reply) && reply.contentType && !reply.contentType.startsWith('application/json')) throw new Error(`route ${def.path}: a cachedFrom route answers JSON`);
        return render(reply, def.path, tagged);
      },
    };
  }

  private document<Q, P, B>(def: RouteDef<Q, P, B>): void {
    const path = def.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const parameters = [
      ...schemaParams(def.params, 'path'),
      ...schemaParams(def.query, 'query'),
    ];
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(def.responses)) {
      const content = r.contentType
        ? { [r.contentType]: { schema: r.schema ?? { type: 'string' } } }
        : r.schema ? { 'application/json': { schema: r.schema } } : undefined;
      responses[status] = { description: r.description, ...(content ? { content } : {}), ...(r.headers ? { headers: Object.fromEntries(Object.entries(r.headers).map(([k, s]) => [k, { schema: s }])) } : {}) };
    }
    if ((def.rateLimit ?? 'standard') === 'standard' && this.standardLimit && !responses['429']) {
      responses['429'] = { description: 'standard rate limit per client IP exceeded (RATE_LIMIT_PER_MINUTE, across all nodes); Retry-After gives the seconds to wait', headers: { 'Retry-After': { schema: { type: 'integer' } } } };
    }
    responses['default'] = { description: 'error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    (this.paths[path] ??= {})[def.method] = {
      summary: def.summary,
      ...(def.description ? { description: def.description } : {}),
      tags: def.tags,
      ...(parameters.length ? { parameters } : {}),
      ...(def.body ? { requestBody: { required: true, content: { 'application/json': { schema: def.body } } } } : {}),
      ...(def.security ? { security: def.security } : {}),
      responses,
    };
  }

  openapi(servers: { url: string; description: string }[]): Record<string, unknown> {
    return {
      openapi: '3.0.3',
      info: this.info,
      servers,
      paths: this.paths,
      components: {
        schemas: { Error: errorEnvelopeSchema },
        securitySchemes: {
          AdminApiKey: { type: 'apiKey', in: 'header', name: 'x-admin-key' },
          BearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          GatewayApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        },
      },
    };
  }
}

function uncounted(hits: CachedHits, limit: RequestHandler): RequestHandler {
  return (req, res, next) => {
    if (hits.counted(req)) next();
    else void limit(req, res, next);
  };
}

/** A route's keys of a request; none when they cannot be named (the handler refuses that input as it always does). */
function scopesOf<Q, P, B>(def: RouteDef<Q, P, B>, query: Q, params: P): readonly string[] | undefined {
  try {
    return def.cacheScopes?.(query, params);
  } catch {
    return undefined;
  }
}

function schemaParams(schema: JsonSchema | undefined, where: 'path' | 'query'): unknown[] {
  if (!schema) return [];
  const props = (schema['properties'] ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema['required'] ?? []) as string[]);
  return Object.entries(props).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    ...(typeof s['description'] === 'string' ? { description: s['description'] } : {}),
    schema: s,
  }));
}
