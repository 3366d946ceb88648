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
 */
import type { Request, RequestHandler, Response } from 'express';
import { LRUCache } from 'lru-cache';
import type { Lookup, ReadCache } from '../../../infra/cache/read-cache.js';
import { send, type Rendered } from './rendered.js';

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
}

/** URLs remembered: a URL forgotten only takes the router again (about 400 bytes each). */
const KNOWN_URLS = 50_000;

const unreachable = (): Promise<never> => Promise.reject(new Error('a hit is never computed'));

/** The route a request was answered by, for the request's metrics: the router's, or the one a hit named. */
export function servedRoute(req: Request, res: Response): string | undefined {
  const hit = res.locals['servedRoute'] as string | undefined;
  if (hit !== undefined) return hit;
  const route = (req.route as { path?: string } | undefined)?.path;
  return route === undefined ? undefined : `${req.baseUrl}${route}`;
}

export function createCachedHits(cache: ReadCache, standardLimit: RequestHandler | undefined, now: () => number): CachedHits {
  const known = new LRUCache<string, KnownUrl>({ max: KNOWN_URLS });
  const early = new WeakMap<Request, { key: string; looked: Lookup<Rendered> | undefined }>();

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
      // a hit: get counts it and hands it back
      const hit = await cache.get(k.readModels, k.key, unreachable, () => 0, k.scopes, looked);
      res.locals['servedRoute'] = k.route;
      send(req, res, hit, now());
    } catch (err) {
      next(err);
    }
  }

  return {
    middleware(req, res, next) {
      const k = req.method === 'GET' ? known.get(req.url) : undefined;
      if (k === undefined) next();
      else void serve(req, res, next, k);
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
