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
 *
 * It answers the misses of the list routes too (`FrontRoutes`, from the Api), and, with
 * the cache off (READ_CACHE_TTL_MS=0), every request of those routes: their answer
 * depends on the validated path and query alone (RouteDef.cachedFrom), so front finds the
 * route the router would run (front-paths.ts), validates the query and params as the
 * router would, counts the request and runs the route's handler. Input it does not accept
 * as valid goes to express untouched (uncounted: express counts it and answers its 400);
 * a refusal, or an error the handler throws, goes on to express with what front found, as
 * above, so every error is the error handler's envelope. On a 2-core bench the router's
 * walk, express's prototypes and the middleware chain were 15% of an uncached request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { LRUCache } from 'lru-cache';
import type { Lookup, ReadCache } from '../cache/read-cache.js';
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

/** A validated GET of a list route front answers itself: the route's answer, rendered as the router renders it. */
export interface FrontMiss extends KnownUrl {
  produce(): Promise<Rendered>;
}

/** The routes whose misses front answers (the Api's list routes). */
export interface FrontRoutes {
  /** the GET's route and validated request, when the router would run one of these routes and accept the input; else undefined */
  miss(url: string): FrontMiss | undefined;
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
  /** Node's request handler in front of express (`app`): answers hits of known URLs, and the misses of `routes`, hands the rest to `app` */
  front(app: (req: IncomingMessage, res: ServerResponse) => void, routes?: FrontRoutes): (req: IncomingMessage, res: ServerResponse) => void;
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
  /** what the route's handler threw, answered after the limit's headers are set (as the router answers it) */
  thrown?: unknown;
  /** the answer front computed, with headers of its own */
  answer?: Rendered;
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

  /** Writes an answer as express would: the header middleware, the limit's headers, the bytes. */
  function write(f: FrontOptions, req: IncomingMessage, res: ServerResponse, k: KnownUrl, r: Rendered, counted: RateLimitOutcome | undefined): void {
    hitRoutes.set(res, k.route);
    runEach(f.headers, req, res, (err) => {
      if (err !== undefined) { res.destroy(err as Error); return; }
      if (counted !== undefined) for (const name of Object.keys(counted.headers)) res.setHeader(name, counted.headers[name]!);
      sendPlain(res, r, now());
    });
  }

  /** `missOf`: the URL's route and validated request, when front may compute its answer on a miss (asked only then). */
  async function answer(f: FrontOptions, req: IncomingMessage, res: ServerResponse, app: (req: IncomingMessage, res: ServerResponse) => void, k: KnownUrl, missOf: () => FrontMiss | undefined): Promise<void> {
    let e: Early;
    try {
      // the count and the lookup at once, as above
      const [counted, looked] = await Promise.all([k.limited ? f.count(f.clientOf(req)) : undefined, cache.lookup<Rendered>(k.readModels, k.key, k.scopes)]);
      const refused = counted?.refusal !== undefined;
      const hit = refused ? undefined : looked.hit;
      if (hit !== undefined && hit.headers === undefined) {
        await cache.get(k.readModels, k.key, unreachable, () => 0, k.scopes, looked);
        write(f, req, res, k, hit, counted);
        return;
      }
      e = { key: k.key, url: k, looked, ...(counted ? { counted } : {}) };
      const miss = hit === undefined && !refused ? missOf() : undefined;
      if (miss !== undefined) {
        const computed = await compute(miss, looked, req.url!);
        // answered by express's error handler, under the route that threw, as the router names it
        hitRoutes.set(res, k.route);
        if ('thrown' in computed) {
          e = { key: k.key, looked: undefined, ...(counted ? { counted } : {}), thrown: computed.thrown };
        } else if (computed.rendered.headers === undefined) {
          write(f, req, res, k, computed.rendered, counted);
          return;
        } else {
          e = { key: k.key, looked: undefined, ...(counted ? { counted } : {}), answer: computed.rendered };
        }
      }
    } catch (err) {
      e = { key: k.key, looked: undefined, failed: err };
    }
    early.set(req, e);
    app(req, res);
  }

  /** The route's answer at the versions looked up (the cache's miss, or the route run when the cache is off or bypassed). */
  async function compute(m: FrontMiss, looked: Lookup<Rendered>, url: string): Promise<{ rendered: Rendered } | { thrown: unknown }> {
    try {
      const rendered = await cache.get(m.readModels, m.key, () => m.produce(), (r) => r.body.length + m.key.length + 64, m.scopes, looked);
      if (cache.enabled) known.set(url, { readModels: m.readModels, key: m.key, scopes: m.scopes, route: m.route, limited: m.limited });
      return { rendered };
    } catch (thrown) {
      return { thrown };
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
      const f = frontOpts;
      return (req, res) => {
        if (req.method !== 'GET' || req.headers['if-none-match'] !== undefined || hasBody(req)) { app(req, res); return; }
        const url = req.url!;
        const k = cache.enabled ? known.get(url) : undefined;
        if (k !== undefined) { void answer(f, req, res, app, k, () => routes?.miss(url)); return; }
        const miss = routes?.miss(url);
        if (miss === undefined) app(req, res);
        else void answer(f, req, res, app, miss, () => miss);
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
