/**
 * `front`: Node's request handler in front of express. A GET of a known URL (without a
 * body or If-None-Match) is counted and looked up here, and a hit is written by the same
 * header middleware express would run before the router, the limit's headers and the
 * cached bytes. The misses of the list routes (`FrontRoutes`) are validated and computed
 * here too. Anything else (a miss of another route, a refusal, a throw, an answer with
 * headers of its own) goes on to express with what front found (`Early`), so every error
 * is the error handler's envelope. Why: docs/how-it-works.md, "Hits before the router".
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LRUCache } from 'lru-cache';
import type { Lookup, ReadCache } from '../cache/read-cache.js';
import { sendPlain, type Rendered } from './rendered.js';
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

/** What front found for a request it handed to express. */
export interface Early {
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

export const unreachable = (): Promise<never> => Promise.reject(new Error('a hit is never computed'));

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

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface FrontDeps {
  cache: ReadCache;
  /** the URLs the router learnt */
  known: LRUCache<string, KnownUrl>;
  /** what front found for the requests it hands to express */
  early: WeakMap<IncomingMessage, Early>;
  now: () => number;
  /** names the route a response is answered under, for the request's metrics */
  served: (res: ServerResponse, route: string) => void;
}

/** Answers hits of known URLs, and the misses of `routes`; hands the rest to `app`. */
export function createFront(d: FrontDeps, f: FrontOptions, app: NodeHandler, routes?: FrontRoutes): NodeHandler {
  const { cache, known, early, now } = d;

  /** Writes an answer as express would: the header middleware, the limit's headers, the bytes. */
  function write(req: IncomingMessage, res: ServerResponse, k: KnownUrl, r: Rendered, counted: RateLimitOutcome | undefined): void {
    d.served(res, k.route);
    runEach(f.headers, req, res, (err) => {
      if (err !== undefined) { res.destroy(err as Error); return; }
      if (counted !== undefined) for (const name of Object.keys(counted.headers)) res.setHeader(name, counted.headers[name]!);
      sendPlain(res, r, now());
    });
  }

  /** `missOf`: the URL's route and validated request, when front may compute its answer on a miss (asked only then). */
  async function answer(req: IncomingMessage, res: ServerResponse, k: KnownUrl, missOf: () => FrontMiss | undefined): Promise<void> {
    let e: Early;
    try {
      // the count and the lookup at once, as the middleware asks them (cached-hits.ts)
      const [counted, looked] = await Promise.all([k.limited ? f.count(f.clientOf(req)) : undefined, cache.lookup<Rendered>(k.readModels, k.key, k.scopes)]);
      const refused = counted?.refusal !== undefined;
      const hit = refused ? undefined : looked.hit;
      if (hit !== undefined && hit.headers === undefined) {
        await cache.get(k.readModels, k.key, unreachable, () => 0, k.scopes, looked);
        write(req, res, k, hit, counted);
        return;
      }
      e = { key: k.key, url: k, looked, ...(counted ? { counted } : {}) };
      const miss = hit === undefined && !refused ? missOf() : undefined;
      if (miss !== undefined) {
        const computed = await compute(miss, looked, req.url!);
        // answered by express's error handler, under the route that threw, as the router names it
        d.served(res, k.route);
        if ('thrown' in computed) {
          e = { key: k.key, looked: undefined, ...(counted ? { counted } : {}), thrown: computed.thrown };
        } else if (computed.rendered.headers === undefined) {
          write(req, res, k, computed.rendered, counted);
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

  return (req, res) => {
    if (req.method !== 'GET' || req.headers['if-none-match'] !== undefined || hasBody(req)) { app(req, res); return; }
    const url = req.url!;
    const k = cache.enabled ? known.get(url) : undefined;
    if (k !== undefined) { void answer(req, res, k, () => routes?.miss(url)); return; }
    const miss = routes?.miss(url);
    if (miss === undefined) app(req, res);
    else void answer(req, res, miss, () => miss);
  };
}
