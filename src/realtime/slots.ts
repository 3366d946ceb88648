/**
 * Connection slots: at most `cap` sockets per trackingId across every API node. A slot is
 * a lease, not a counter: a sorted set per trackingId maps socketId → expiry (ms, Redis's
 * own clock, so nodes' clocks do not matter). The node renews its leases every lease/3;
 * a node that dies stops renewing and its slots free themselves within one lease. Expired
 * members are pruned in the same atomic step that counts, so a dead node's leftovers
 * never block a live client.
 */
import type { Redis } from 'ioredis';
import { luaScript, pipelineFor, queueScript, runScript } from '../../infra/redis/scripts.js';

/**
 * Acquire or renew one slot. KEYS[1] = the trackingId's sorted set.
 * ARGV[1] = socketId; ARGV[2] = lease ms; ARGV[3] = cap. Returns 1 (held) or 0 (over the cap).
 */
const ACQUIRE = luaScript<number>('tributaryAcquireSlot', `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], lease)
  return 1
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease)
return 1
`);

export type SlotResult = 'held' | 'full';

const result = (v: unknown): SlotResult => (v === 1 ? 'held' : 'full');

export interface SlotLeases {
  acquire(trackingId: string, socketId: string): Promise<SlotResult>;
  /** renews many leases in one round trip; a lease already expired is re-acquired when the cap allows */
  renew(held: readonly { trackingId: string; socketId: string }[]): Promise<SlotResult[]>;
  release(held: readonly { trackingId: string; socketId: string }[]): Promise<void>;
  /** sockets holding a live slot of a trackingId, on any node */
  count(trackingId: string): Promise<number>;
}

export function createSlotLeases(redis: Redis, slotsKey: (trackingId: string) => string, leaseMs: number, cap: number): SlotLeases {
  return {
    async acquire(trackingId, socketId) {
      return result(await runScript(redis, ACQUIRE, [slotsKey(trackingId)], [socketId, leaseMs, cap]));
    },
    async renew(held) {
      if (held.length === 0) return [];
      const pipe = pipelineFor(redis, [ACQUIRE]);
      for (const h of held) queueScript(pipe, ACQUIRE, [slotsKey(h.trackingId)], [h.socketId, leaseMs, cap]);
      const res = (await pipe.exec()) ?? [];
      // a failed call (Redis away) keeps the socket: a blip must not drop clients
      return res.map(([err, v]) => (err ? 'held' : result(v)));
    },
    async release(held) {
      if (held.length === 0) return;
      const pipe = redis.pipeline();
      for (const h of held) pipe.zrem(slotsKey(h.trackingId), h.socketId);
      await pipe.exec();
    },
    async count(trackingId) {
      const t = await redis.time();
      const now = Number(t[0]) * 1000 + Math.floor(Number(t[1]) / 1000);
      return redis.zcount(slotsKey(trackingId), `(${now}`, '+inf');
    },
  };
}
