/**
 * The catalog routes' limit: RATE_LIMIT_CATALOG_PER_MINUTE (120) per client IP, counted
 * in Redis so every node draws on one budget. One budget for the two asset routes and one
 * for pool search (SPEC's Limits table lists them as two rows). The client IP is express's
 * req.ip, which honours X-Forwarded-For only as far as TRUST_PROXY trusts the proxies.
 */
import type { RequestHandler } from 'express';
import type { RateLimitDeps } from '../../infra/http/rate-limit.js';
import { createRateLimit } from '../../infra/http/redis-rate-limit.js';
import { rateLimitPrefix } from '../../src/kernel/names/index.js';

export function catalogRateLimit(ctx: RateLimitDeps, bucket: 'assets' | 'pools'): RequestHandler {
  return createRateLimit(ctx.redis, {
    keyPrefix: rateLimitPrefix(ctx.config.redis.prefix, `catalog:${bucket}`),
    points: ctx.config.rateLimit.catalogPerMinute,
    durationSeconds: 60,
    logger: ctx.logger,
  }).middleware((req) => req.ip ?? req.socket.remoteAddress ?? 'unknown');
}
