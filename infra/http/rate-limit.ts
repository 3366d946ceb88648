/**
 * SPEC's "standard rate limits apply": RATE_LIMIT_PER_MINUTE requests per minute per
 * client, counted in Redis so every API node draws on one budget, on every route that has
 * no limit of its own. A route declares which limit it lives under (RouteDef.rateLimit):
 *
 *   'standard' (default)  this limit, applied by the Api before the route's own middleware
 *   'own'                 the route enforces a limit of its own (tokens issue per wallet,
 *                         the catalog per IP); counting it twice would halve its budget
 *   'none'                not limited: GET /v1/health, which load balancers probe
 *
 * /metrics (scraped by Prometheus) is mounted outside the Api and not limited either; the
 * Socket.IO endpoint has its own per-trackingId connection cap.
 *
 * The client is req.ip, which honours X-Forwarded-For only as far as TRUST_PROXY trusts
 * the proxies. IPv6 clients are counted per /64, the smallest block a host is given, so
 * one host cannot multiply its budget by walking its own addresses.
 */
import { isIPv6 } from 'node:net';
import type { Request, RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import type { Config } from '../../src/kernel/config/config.js';
import type { Logger } from '../log/logger.js';
import { createRateLimit, type RateLimitOutcome } from './redis-rate-limit.js';
import { rateLimitPrefix } from '../../src/kernel/names/index.js';

export type RouteRateLimit = 'standard' | 'own' | 'none';

/** What a limit counts with: the shared Redis, the prefix and budgets, a log for an outage. */
export interface RateLimitDeps { redis: Redis; config: Pick<Config, 'redis' | 'rateLimit'>; logger: Logger }

/**
 * The standard limit, one per API node (the budget itself lives in Redis): its middleware,
 * and its count of a client (clientKey) for the cached hits answered before express.
 */
export function standardRateLimit(ctx: RateLimitDeps): { middleware: RequestHandler; count(client: string): Promise<RateLimitOutcome> } {
  const limit = createRateLimit(ctx.redis, {
    keyPrefix: rateLimitPrefix(ctx.config.redis.prefix, 'standard'),
    points: ctx.config.rateLimit.standardPerMinute,
    durationSeconds: 60,
    logger: ctx.logger,
  });
  return { middleware: limit.middleware(clientOf), count: (client) => limit.count(client) };
}

/**
 * POST /v1/gateway/{gateway}/auth/challenge, on top of the standard limit: each challenge
 * adds a nonce to the gateway's bounded set and evicts the oldest, so a flood could push
 * out the nonce a real gateway is about to sign. Counted per client and gateway, so a
 * flood against one gateway locks out neither other gateways nor other clients.
 */
export function gatewayChallengeRateLimit(ctx: RateLimitDeps): RequestHandler {
  return createRateLimit(ctx.redis, {
    keyPrefix: rateLimitPrefix(ctx.config.redis.prefix, 'gw-challenge'),
    points: ctx.config.rateLimit.gatewayChallengePerMinute,
    durationSeconds: 60,
    logger: ctx.logger,
  }).middleware((req) => `${clientOf(req)}|${String(req.params['gateway'] ?? '').slice(0, 64)}`);
}

export function clientOf(req: Request): string {
  return clientKey(req.ip ?? req.socket.remoteAddress);
}

/** The key a client is counted under: its IPv4 address, or its IPv6 /64. */
export function clientKey(ip: string | undefined): string {
  if (!ip) return 'unknown';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1]!;
  const bare = ip.split('%')[0]!;
  if (!isIPv6(bare)) return ip;
  return `${ipv6Groups(bare).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, in lower-case hex without leading zeros. */
function ipv6Groups(ip: string): string[] {
  const v4Tail = (part: string): string[] => {
    if (!part.includes('.')) return [part];
    const [a, b, c, d] = part.split('.').map(Number) as [number, number, number, number];
    return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
  };
  const split = (s: string): string[] => (s === '' ? [] : s.split(':').flatMap(v4Tail));
  const [head = '', tail] = ip.split('::');
  const h = split(head);
  const t = tail === undefined ? [] : split(tail);
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.map((g) => parseInt(g, 16).toString(16));
}
