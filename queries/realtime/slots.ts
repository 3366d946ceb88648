/**
 * Connection slots: at most `cap` sockets per trackingId across every API node, and at
 * most `ipCap` of them from one client address (trackingIds are public memos: without the
 * second cap one address could take every slot and lock the real subscriber out). A slot
 * is a lease, not a counter: a sorted set per trackingId maps socketId → expiry (ms,
 * Redis's own clock, so nodes' clocks do not matter), and one per (trackingId, client)
 * the same. The node renews its leases every lease/3; a node that dies stops renewing and
 * its slots free themselves within one lease. Expired members are pruned in the same
 * atomic step that counts, so a dead node's leftovers never block a live client.
 */
import type { Redis } from 'ioredis';
import { luaScript, pipelineFor, queueScript, runScript } from '../../infra/redis/scripts.js';

/**
 * Acquire or renew one slot. KEYS[1] = the trackingId's sorted set; KEYS[2] = the
 * (trackingId, client) sorted set. ARGV[1] = socketId; ARGV[2] = lease ms; ARGV[3] = cap;
 * ARGV[4] = cap per client. Returns 1 (held), 0 (the trackingId is full) or 2 (the
 * client holds its share of the trackingId's slots).
 */
const ACQUIRE = luaScript<number>('tributaryAcquireSlot', `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 2 end
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease)
redis.call('ZADD', KEYS[2], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[2], lease)
return 1
`);

export type SlotResult = 'held' | 'full' | 'client_full';

const result = (v: unknown): SlotResult => (v === 1 ? 'held' : v === 2 ? 'client_full' : 'full');

export interface HeldSlot { trackingId: string; socketId: string; client: string }

export interface SlotLeases {
  acquire(trackingId: string, socketId: string, client: string): Promise<SlotResult>;
  /** renews many leases in one round trip; a lease already expired is re-acquired when the caps allow */
  renew(held: readonly HeldSlot[]): Promise<SlotResult[]>;
  release(held: readonly HeldSlot[]): Promise<void>;
  /** sockets holding a live slot of a trackingId, on any node */
  count(trackingId: string): Promise<number>;
}

export function createSlotLeases(
  redis: Redis, slotsKey: (trackingId: string) => string, leaseMs: number, cap: number, capPerClient = cap,
): SlotLeases {
  const clientKey = (trackingId: string, client: string) => `${slotsKey(trackingId)}:c:${client}`;
  return {
    async acquire(trackingId, socketId, client) {
      return result(await runScript(redis, ACQUIRE, [slotsKey(trackingId), clientKey(trackingId, client)], [socketId, leaseMs, cap, capPerClient]));
    },
    async renew(held) {
      if (held.length === 0) return [];
      const pipe = pipelineFor(redis, [ACQUIRE]);
      for (const h of held) queueScript(pipe, ACQUIRE, [slotsKey(h.trackingId), clientKey(h.trackingId, h.client)], [h.socketId, leaseMs, cap, capPerClient]);
      const res = (await pipe.exec()) ?? [];
      // a failed call (Redis away) keeps the socket: a blip must not drop clients
      return res.map(([err, v]) => (err ? 'held' : result(v)));
    },
    async release(held) {
      if (held.length === 0) return;
      const pipe = redis.pipeline();
      for (const h of held) pipe.zrem(slotsKey(h.trackingId), h.socketId).zrem(clientKey(h.trackingId, h.client), h.socketId);
      await pipe.exec();
    },
    async count(trackingId) {
      const t = await redis.time();
      const now = Number(t[0]) * 1000 + Math.floor(Number(t[1]) / 1000);
      return redis.zcount(slotsKey(trackingId), `(${now}`, '+inf');
    },
  };
}
