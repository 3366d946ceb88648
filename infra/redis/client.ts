/**
 * Redis through ioredis: a plain URL, or Sentinel when REDIS_SENTINELS is set (ioredis's
 * own failover). Commands issued while Redis is down are queued and retried by ioredis;
 * callers see an error only when a command could not be sent at all.
 */
import { Redis, type RedisOptions } from 'ioredis';

export type { Redis };

export interface RedisSettings {
  url: string;
  sentinels: readonly string[];
  sentinelName: string;
}

export function createRedis(s: RedisSettings, extra: RedisOptions = {}): Redis {
  const base: RedisOptions = {
    maxRetriesPerRequest: null,
    enableAutoPipelining: false,
    retryStrategy: (times) => Math.min(50 * 2 ** times, 2000),
    ...extra,
  };
  if (s.sentinels.length === 0) return new Redis(s.url, base);
  const u = new URL(s.url);
  return new Redis({
    ...base,
    sentinels: s.sentinels.map((hp) => {
      const [host, port] = hp.split(':');
      return { host: host ?? '127.0.0.1', port: Number(port ?? 26379) };
    }),
    name: s.sentinelName,
    password: u.password === '' ? undefined : decodeURIComponent(u.password),
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0,
  });
}

export { streamKeys, type StreamKeys } from '../../src/kernel/names/index.js';
