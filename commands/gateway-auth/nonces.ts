/**
 * Sign-in challenges in Redis, shared by every node. Each nonce is a key of its own,
 * expiring with it, so a flood of challenges cannot evict a nonce a gateway is about to
 * sign (the per-IP and per-gateway limits bound how many there are). Consuming one is a
 * DEL, which returns 1 to exactly one caller across all nodes: a nonce is used once.
 *
 * A client that does not name the nonce it signed (SPEC.md's verify body has none) gets
 * its signature tried against the gateway's newest nonce only: one sorted set per gateway
 * (score = expiry, unix ms, plus a per-gateway issue sequence in thousandths so that two
 * nonces issued within one millisecond still have an order), bounded to MAX_OUTSTANDING,
 * remembers the order.
 *
 * A nonce is `tributary-gateway-sign-in|<service>|<gateway>|<random>`
 * (src/kernel/auth/signed-messages.ts): what the wallet signs says what it is for.
 *
 * Keys: `<prefix>gw-auth:<gateway>:<nonce>` (the nonce, with its TTL) and
 * `<prefix>gw-auth:<gateway>` (ZSET nonce → expiresAt ms), expiring with the last nonce,
 * and `<prefix>gw-auth-seq:<gateway>` (the issue sequence).
 */
import type { Redis } from 'ioredis';
import { challengeText, MAX_CHALLENGE_LENGTH, SIGN_PURPOSES } from '../../src/kernel/auth/signed-messages.js';
import { gatewayNonceSequenceKey, gatewayNoncesKey } from '../../src/kernel/names/index.js';

export const MAX_OUTSTANDING = 32;

export interface Challenge { nonce: string; gateway: string; expiresAt: number }

export interface NonceStore {
  issue(gateway: string, nowMs: number): Promise<Challenge>;
  /** the gateway's newest live nonce, if any */
  newest(gateway: string, nowMs: number): Promise<string | undefined>;
  /** true while the nonce is outstanding (issued, not expired by the clock or Redis, not used) */
  outstanding(gateway: string, nonce: string, nowMs: number): Promise<boolean>;
  /** true for the one caller that consumed it */
  consume(gateway: string, nonce: string): Promise<boolean>;
}

/** `service`: the service's name in the nonce (serviceName of signed-messages.ts). */
export function createNonceStore(redis: Redis, prefix: string, ttlSeconds: number, service: string): NonceStore {
  const order = (gateway: string): string => gatewayNoncesKey(prefix, gateway);
  const one = (gateway: string, nonce: string): string => `${gatewayNoncesKey(prefix, gateway)}:${nonce}`;
  const sequence = (gateway: string): string => gatewayNonceSequenceKey(prefix, gateway);
  return {
    async issue(gateway, nowMs) {
      const nonce = challengeText({ purpose: SIGN_PURPOSES.gatewaySignIn, service, subject: gateway });
      const expiresAt = nowMs + ttlSeconds * 1000;
      const seq = await redis.incr(sequence(gateway));
      await redis.multi()
        .pexpire(sequence(gateway), ttlSeconds * 1000)
        .set(one(gateway, nonce), String(expiresAt), 'PX', ttlSeconds * 1000)
        .zremrangebyscore(order(gateway), '-inf', nowMs)
        .zadd(order(gateway), expiresAt + (seq % 1000) / 1000, nonce)
        .zremrangebyrank(order(gateway), 0, -(MAX_OUTSTANDING + 1))
        .pexpire(order(gateway), ttlSeconds * 1000)
        .exec();
      return { nonce, gateway, expiresAt };
    },
    async newest(gateway, nowMs) {
      const [n] = await redis.zrevrangebyscore(order(gateway), '+inf', `(${nowMs}`, 'LIMIT', 0, 1);
      return n;
    },
    async outstanding(gateway, nonce, nowMs) {
      if (nonce.length > MAX_CHALLENGE_LENGTH) return false;
      const expiresAt = await redis.get(one(gateway, nonce));
      return expiresAt !== null && Number(expiresAt) > nowMs;
    },
    async consume(gateway, nonce) {
      const [[, deleted] = []] = (await redis.multi().del(one(gateway, nonce)).zrem(order(gateway), nonce).exec()) ?? [];
      return deleted === 1;
    },
  };
}
