/**
 * Sign-in challenges in Redis, shared by every node. The verify request carries only
 * the signer and the signature (SPEC.md), not the nonce, so each gateway has one sorted
 * set of outstanding nonces (score = expiry, unix ms): verification tries the live ones,
 * newest first, and consumes the one that matches with ZREM, which returns 1 to exactly
 * one caller across all nodes: a nonce is used once.
 *
 * Keys: `<prefix>gw-auth:<gateway>` (ZSET nonce → expiresAt ms), expiring with the last nonce.
 * At most MAX_OUTSTANDING nonces per gateway are kept (those expiring first are dropped),
 * which bounds both memory and the signatures a verification may have to try.
 */
import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import type { Redis } from 'ioredis';
import { gatewayNoncesKey } from '../../src/keys/index.js';

export const MAX_OUTSTANDING = 32;

export interface Challenge { nonce: string; gateway: string; expiresAt: number }

export interface NonceStore {
  issue(gateway: string, nowMs: number): Promise<Challenge>;
  /** live nonces of the gateway, newest first */
  live(gateway: string, nowMs: number): Promise<string[]>;
  /** true for the one caller that consumed it */
  consume(gateway: string, nonce: string): Promise<boolean>;
}

export function createNonceStore(redis: Redis, prefix: string, ttlSeconds: number): NonceStore {
  const key = (gateway: string): string => gatewayNoncesKey(prefix, gateway);
  return {
    async issue(gateway, nowMs) {
      const nonce = bs58.encode(randomBytes(32));
      const expiresAt = nowMs + ttlSeconds * 1000;
      await redis.multi()
        .zremrangebyscore(key(gateway), '-inf', nowMs)
        .zadd(key(gateway), expiresAt, nonce)
        .zremrangebyrank(key(gateway), 0, -(MAX_OUTSTANDING + 1))
        .pexpire(key(gateway), ttlSeconds * 1000)
        .exec();
      return { nonce, gateway, expiresAt };
    },
    async live(gateway, nowMs) {
      return redis.zrevrangebyscore(key(gateway), '+inf', `(${nowMs}`);
    },
    async consume(gateway, nonce) {
      return (await redis.zrem(key(gateway), nonce)) === 1;
    },
  };
}
