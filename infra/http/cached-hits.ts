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
 * `front` (cached-front.ts) goes one step further: it answers hits, and the misses of the
 * list routes, before express sees the request at all.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { LRUCache } from 'lru-cache';
import type { Lookup, ReadCache } from '../cache/read-cache.js';
import { send, type Rendered } from './rendered.js';
import { createFront, unreachable, type Early, type FrontOptions, type FrontRoutes, type KnownUrl } from './cached-front.js';

export type { FrontMiss, FrontOptions, FrontRoutes, KnownUrl, NodeMiddleware } from './cached-front.js';

export interface CachedHits {
  /** express middleware, mounted just before the router */
  readonly middleware: RequestHandler;
  /** records the URL of a GET the router validated for a cached route without middleware of its own */
  learn(req: Request, known: KnownUrl): void;
  /** the lookup this request made before the router, when it made one for `key` */
  looked(req: Request, key: string): Lookup<Rendered> | undefined;
  /** whether this request was counted under the standard rate limit before the router */
  counted(req: Request): boolean;
  /** Node's request handler in front of express (`app`): answers hits of known URLs, and the misses of `routes`, hands the rest to `app` */
  front(app: (req: IncomingMessage, res: ServerResponse) => void, routes?: FrontRoutes): (req: IncomingMessage, res: ServerResponse) => void;
}

/** URLs remembered: a URL forgotten only takes the router again (about 400 bytes each). */
const KNOWN_URLS = 50_000;

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

export function createCachedHits(cache: ReadCache, standardLimit: RequestHandler | undefined, now: () => number, frontOpts?: FrontOptions): CachedHits {
  const known = new LRUCache<string, KnownUrl>({ max: KNOWN_URLS });
  const early = new WeakMap<IncomingMessage, Early>();

  const limit = (req: Request, res: Response): Promise<unknown> => new Promise((resolve) => {
    if (standardLimit === undefined) resolve(undefined);
    else void standardLimit(req, res, resolve);
  });

  async function serve(req: Request, res: Response, next: (err?: unknown) => void, k: KnownUrl): Promise<void> {
    try {
      // the count and the versions are asked at once, not in turn (the count leaves with
      // this turn's batch of counts, redis-rate-limit.ts); a refused request has its lookup
      // dropped uncounted, as the router refuses before the cache is asked
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
      if (e.thrown !== undefined) { next(e.thrown); return; }
      if (e.answer !== undefined) { send(req, res, e.answer, now()); return; }
      if (e.looked?.hit === undefined || e.url === undefined) { next(); return; }
      await serveHit(req, res, e.url, e.looked);
    } catch (err) {
      next(err);
    }
  }

  return {
    middleware(req, res, next) {
      const e = early.get(req);
      if (e !== undefined) { void resume(req, res, next, e); return; }
      const k = req.method === 'GET' ? known.get(req.url) : undefined;
      if (k === undefined) next();
      else void serve(req, res, next, k);
    },
    front(app, routes) {
      if (frontOpts === undefined) return app;
      return createFront({ cache, known, early, now, served: (res, route) => hitRoutes.set(res, route) }, frontOpts, app, routes);
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
