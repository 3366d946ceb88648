/**
 * Read cache hits answered before the router. A cached route's answer depends on its
 * validated path and query alone (RouteDef.cachedFrom), so once the router has validated a
 * URL, the cache key it came to is the key of every request for that URL: the Api records
 * it (`learn`), and the next GET of the same URL is looked up in the cache at once. A hit
 * is written from the cached bytes (rendered.ts) without the router, the validation or the
 * handler; a miss goes on to the router with the lookup it made, which the route's
 * cache.get uses rather than reading the versions again.
 *
 * What a request sees is what the router would have answered: the middleware runs after
 * the request id, the security headers, CORS and the body parser, as the router does; it
 * counts the request under the standard rate limit first, as the route would (and the
 * route then does not count it again), and the request's metrics and log line name the
 * route. Routes with middleware of their own (`before`: auth, a limit of their own) are
 * never learnt: their requests always take the router.
 *
 * `front` goes one step further: it answers a hit before express sees the request at all.
 * Express's handling of a request (its prototypes swapped onto Node's request and
 * response, the router's walk through the middleware) costs an API process more CPU than
 * Node's own HTTP path and the write of a 70 KB page together: 120-130 µs a request against
 * 30 µs for a bare node:http server writing the same bytes (wrk, 20 connections). So a GET
 * of a known URL without a body or If-None-Match is counted and looked up there; a hit is
 * answered by the same header middleware express would have run before the router (the
 * request id, helmet, CORS: `FrontOptions.headers`), the limit's headers and the cached
 * bytes; anything else (a miss, a refusal, a reply with headers of its own) goes on to
 * express with what front found, which the middleware above then applies instead of
 * asking Redis again.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { LRUCache } from 'lru-cache';
import type { Lookup, ReadCache } from '../../../infra/cache/read-cache.js';
import { send, sendPlain, type Rendered } from './rendered.js';
import type { RateLimitOutcome } from './redis-rate-limit.js';

/** Connect-style middleware over Node's own request and response (helmet's, cors's). */
export type NodeMiddleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/** What `front` needs to answer as express would. */
export interface FrontOptions {
  /** the app's middleware before the router that sets headers, in express's order; none of it fails or answers a GET */
  headers: readonly NodeMiddleware[];
  /** the key the standard limit counts a request under (rate-limit.ts's clientKey of express's req.ip) */
  clientOf(req: IncomingMessage): string;
  /** the standard limit's count */
  count(client: string): Promise<RateLimitOutcome>;
}

/** What the router learnt of a URL of a cached route. */
export interface KnownUrl {
  readModels: readonly string[];
  /** the read cache's key of its validated request */
  key: string;
  scopes: readonly string[] | undefined;
  /** the route's path, for metrics */
  route: string;
  /** counted under the standard rate limit */
  limited: boolean;
}

export interface CachedHits {
  /** express middleware, mounted just before the router */
  readonly middleware: RequestHandler;
  /** records the URL of a GET the router validated for a cached route without middleware of its own */
  learn(req: Request, known: KnownUrl): void;
  /** the lookup this request made before the router, when it made one for `key` */
  looked(req: Request, key: string): Lookup<Rendered> | undefined;
  /** whether this request was counted under the standard rate limit before the router */
  counted(req: Request): boolean;
  /** Node's request handler in front of express (`app`): answers hits of known URLs, hands the rest to `app` */
  front(app: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void;
}

/** What front found for a request it handed to express. */
interface Early {
  key: string;
  /** the URL front looked up (the middleware's own lookups leave it out) */
  url?: KnownUrl;
  looked: Lookup<Rendered> | undefined;
  /** the standard limit's outcome, when front counted the request */
  counted?: RateLimitOutcome;
  failed?: unknown;
}

/** URLs remembered: a URL forgotten only takes the router again (about 400 bytes each). */
const KNOWN_URLS = 50_000;

const unreachable = (): Promise<never> => Promise.reject(new Error('a hit is never computed'));

/** The route of each response a hit answered (a response is answered once). */
const hitRoutes = new WeakMap<ServerResponse, string>();

/** The route a request was answered by, for the request's metrics: the router's, or the one a hit named. */
export function servedRoute(req: IncomingMessage, res: ServerResponse): string | undefined {
  const hit = hitRoutes.get(res);
  if (hit !== undefined) return hit;
  const r = req as Partial<Request>;
  const route = (r.route as { path?: string } | undefined)?.path;
  return route === undefined ? undefined : `${r.baseUrl ?? ''}${route}`;
}

/** A request with a body: express's body parser reads it before the router (and may refuse it). */
const hasBody = (req: IncomingMessage): boolean => req.headers['transfer-encoding'] !== undefined
  || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

function runEach(chain: readonly NodeMiddleware[], req: IncomingMessage, res: ServerResponse, done: (err?: unknown) => void): void {
  let i = 0;
  const next = (err?: unknown): void => {
    const mw = chain[i++];
    if (err !== undefined || mw === undefined) done(err);
    else mw(req, res, next);
  };
  next();
}

export function createCachedHits(cache: ReadCache, standardLimit: RequestHandler | undefined, now: () => number, frontOpts?: FrontOptions): CachedHits {
  const known = new LRUCache<string, KnownUrl>({ max: KNOWN_URLS });
  const early = new WeakMap<IncomingMessage, Early>();

  const limit = (req: Request, res: Response): Promise<unknown> => new Promise((resolve) => {
    if (standardLimit === undefined) resolve(undefined);
    else void standardLimit(req, res, resolve);
  });

  async function serve(req: Request, res: Response, next: (err?: unknown) => void, k: KnownUrl): Promise<void> {
    try {
      // the count and the versions are asked in the same tick: one pipelined round trip to
      // Redis; a refused request has its lookup dropped uncounted, as the router refuses
      // before the cache is asked
      const counting = k.limited ? limit(req, res) : undefined;
      const looking = cache.lookup<Rendered>(k.readModels, k.key, k.scopes);
      if (counting !== undefined) {
        early.set(req, { key: k.key, looked: undefined });
        const refused = await counting;
        if (refused !== undefined) { next(refused); return; }
      }
      const looked = await looking;
      if (looked.hit === undefined) {
        early.set(req, { key: k.key, looked });
        next();
        return;
      }
      await serveHit(req, res, k, looked);
    } catch (err) {
      next(err);
    }
  }

  async function serveHit(req: Request, res: Response, k: KnownUrl, looked: Lookup<Rendered>): Promise<void> {
    // get counts the hit and hands it back
    const hit = await cache.get(k.readModels, k.key, unreachable, () => 0, k.scopes, looked);
    hitRoutes.set(res, k.route);
    send(req, res, hit, now());
  }

  /** A request front handed on: its refusal, its limit's headers, its hit (one with headers of its own), or the router with its lookup. */
  async function resume(req: Request, res: Response, next: (err?: unknown) => void, e: Early): Promise<void> {
    try {
      if (e.failed !== undefined) { next(e.failed); return; }
      if (e.counted?.refusal) { next(e.counted.refusal); return; }
      if (e.counted) res.set(e.counted.headers);
      if (e.looked?.hit === undefined || e.url === undefined) { next(); return; }
      await serveHit(req, res, e.url, e.looked);
    } catch (err) {
      next(err);
    }
  }

  async function answer(f: FrontOptions, req: IncomingMessage, res: ServerResponse, app: (req: IncomingMessage, res: ServerResponse) => void, k: KnownUrl): Promise<void> {
    let e: Early;
    try {
      // one pipelined round trip to Redis, as above
      const [counted, looked] = await Promise.all([k.limited ? f.count(f.clientOf(req)) : undefined, cache.lookup<Rendered>(k.readModels, k.key, k.scopes)]);
      const hit = counted?.refusal === undefined ? looked.hit : undefined;
      if (hit !== undefined && hit.headers === undefined) {
        await cache.get(k.readModels, k.key, unreachable, () => 0, k.scopes, looked);
        hitRoutes.set(res, k.route);
        runEach(f.headers, req, res, (err) => {
          if (err !== undefined) { res.destroy(err as Error); return; }
          for (const [name, value] of Object.entries(counted?.headers ?? {})) res.setHeader(name, value);
          sendPlain(res, hit, now());
        });
        return;
      }
      e = { key: k.key, url: k, looked, ...(counted ? { counted } : {}) };
    } catch (err) {
      e = { key: k.key, looked: undefined, failed: err };
    }
    early.set(req, e);
    app(req, res);
  }

  return {
    middleware(req, res, next) {
      const e = early.get(req);
      if (e !== undefined) { void resume(req, res, next, e); return; }
      const k = req.method === 'GET' ? known.get(req.url) : undefined;
      if (k === undefined) next();
      else void serve(req, res, next, k);
    },
    front(app) {
      if (frontOpts === undefined) return app;
      const f = frontOpts;
      return (req, res) => {
        const k = req.method === 'GET' && req.headers['if-none-match'] === undefined && !hasBody(req) ? known.get(req.url!) : undefined;
        if (k === undefined) app(req, res);
        else void answer(f, req, res, app, k);
      };
    },
    learn(req, k) {
      if (req.method === 'GET') known.set(req.url, k);
    },
    looked(req, key) {
      const e = early.get(req);
      return e?.key === key ? e.looked : undefined;
    },
    counted(req) {
      return early.has(req);
    },
  };
}
