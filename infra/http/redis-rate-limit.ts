/**
 * Rate limits counted in Redis, so every API node draws on the same budget: a narrow
 * factory around rate-limiter-flexible's RateLimiterRedis (atomic fixed window per key).
 *
 * Requests for the same key that arrive in one turn of the event loop share one Lua call:
 * they are counted together with consume(key, n) in the loop's check phase (setImmediate,
 * right after the poll phase that read them), and the k-th of them is answered as if it
 * had been counted alone after the k-1 before it: its count is consumed - n + k, it is
 * allowed iff that is within the points, and its remaining and reset are those a call of
 * its own would have returned. Under load (50 connections of one client on one node) that
 * is several requests a call instead of one, and Redis sees the same count either way.
 *
 * Answers carry the IETF draft headers (draft-ietf-httpapi-ratelimit-headers-07, the form
 * express-rate-limit emits as 'draft-7'):
 *   RateLimit-Policy: <points>;w=<window seconds>
 *   RateLimit: limit=<points>, remaining=<n>, reset=<seconds until the window ends>
 * and a refusal is 429 in the error envelope with Retry-After (seconds).
 *
 * If Redis cannot be reached the request is let through and a warning logged: a rate
 * limit protects the service, it must not become the reason it is down.
 */
import type { Request, RequestHandler, Response } from 'express';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import type { Logger } from '../log/logger.js';
import { AppError } from '../../src/kernel/http/errors.js';

export interface RateLimitOptions {
  /** full Redis key prefix, e.g. `${config.redis.prefix}rl:tokens-issue` */
  keyPrefix: string;
  /** requests allowed per window and key */
  points: number;
  durationSeconds: number;
  logger?: Logger;
}

export interface RateLimitDecision { allowed: boolean; limit: number; remaining: number; resetSeconds: number }

/** What a counted request gets: the RateLimit headers to answer with, or the refusal (a 429 carrying them). */
export interface RateLimitOutcome { headers: Record<string, string>; refusal: AppError | undefined }

export interface RateLimit {
  readonly points: number;
  readonly durationSeconds: number;
  /** Counts one request for `key`. Never throws: an unreachable Redis allows the request. */
  consume(key: string): Promise<RateLimitDecision>;
  /** Counts one request, sets the RateLimit headers on `res`, throws 429 when over the limit. */
  enforce(key: string, res: Response): Promise<void>;
  /** Counts one request and says what enforce would set or throw, for a caller that answers outside express. */
  count(key: string): Promise<RateLimitOutcome>;
  /** Express middleware over `enforce`; requests for which `keyOf` gives no key are not counted. */
  middleware(keyOf: (req: Request) => string | undefined): RequestHandler;
}

export function createRateLimit(redis: Redis, opts: RateLimitOptions): RateLimit {
  const limiter = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: opts.keyPrefix,
    points: opts.points,
    duration: opts.durationSeconds,
  });
  // Our client queues commands while Redis is away, so during an outage every request would
  // wait for it: once the connection has been seen up, a lost one lets requests through at
  // once. Before that, requests wait for it (a starting node, not an outage).
  let connectedOnce = false;
  const policy = `${opts.points};w=${opts.durationSeconds}`;

  /** the requests waiting for the next check phase, by key, in the order they were counted */
  const waiting = new Map<string, ((d: RateLimitDecision) => void)[]>();
  let flushing = false;

  function consume(key: string): Promise<RateLimitDecision> {
    if (redis.status === 'ready') connectedOnce = true;
    else if (connectedOnce) return Promise.resolve(unavailable(new Error(`redis ${redis.status}`)));
    return new Promise((resolve) => {
      const batch = waiting.get(key);
      if (batch === undefined) waiting.set(key, [resolve]);
      else batch.push(resolve);
      if (!flushing) {
        flushing = true;
        setImmediate(flush);
      }
    });
  }

  function flush(): void {
    flushing = false;
    const batches = [...waiting];
    waiting.clear();
    for (const [key, batch] of batches) void settle(key, batch);
  }

  /** Counts a batch in one call and answers each of its requests in turn. */
  async function settle(key: string, batch: readonly ((d: RateLimitDecision) => void)[]): Promise<void> {
    const n = batch.length;
    let counted: RateLimiterRes;
    try {
      // Redis went away while the batch waited: let it through, as a request arriving now would be
      if (redis.status !== 'ready' && connectedOnce) throw new Error(`redis ${redis.status}`);
      counted = await limiter.consume(key, n);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) {
        for (const answer of batch) answer(unavailable(err as Error));
        return;
      }
      counted = err;
    }
    const reset = Math.ceil(counted.msBeforeNext / 1000);
    batch.forEach((answer, i) => {
      const consumed = counted.consumedPoints - n + i + 1;
      answer(consumed <= opts.points
        ? { allowed: true, limit: opts.points, remaining: Math.max(opts.points - consumed, 0), resetSeconds: reset }
        : { allowed: false, limit: opts.points, remaining: 0, resetSeconds: Math.max(1, reset) });
    });
  }

  function unavailable(err: Error): RateLimitDecision {
    opts.logger?.warn({ err: err.message, keyPrefix: opts.keyPrefix }, 'rate limiter unavailable; request allowed');
    return { allowed: true, limit: opts.points, remaining: opts.points, resetSeconds: opts.durationSeconds };
  }

  function headers(d: RateLimitDecision): Record<string, string> {
    return { 'RateLimit-Policy': policy, RateLimit: `limit=${d.limit}, remaining=${d.remaining}, reset=${d.resetSeconds}` };
  }

  async function count(key: string): Promise<RateLimitOutcome> {
    const d = await consume(key);
    if (d.allowed) return { headers: headers(d), refusal: undefined };
    return {
      headers: headers(d),
      refusal: new AppError('rate_limited', `rate limit exceeded: ${opts.points} requests per ${opts.durationSeconds} s; retry in ${d.resetSeconds} s`,
        { ...headers(d), 'Retry-After': String(d.resetSeconds) }),
    };
  }

  async function enforce(key: string, res: Response): Promise<void> {
    const { headers: h, refusal } = await count(key);
    if (refusal) throw refusal;
    res.set(h);
  }

  return {
    points: opts.points,
    durationSeconds: opts.durationSeconds,
    consume,
    enforce,
    count,
    middleware(keyOf) {
      return async (req, res, next) => {
        try {
          const key = keyOf(req);
          if (key !== undefined) await enforce(key, res);
          next();
        } catch (err) {
          next(err);
        }
      };
    },
  };
}
