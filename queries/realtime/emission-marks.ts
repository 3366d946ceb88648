/**
 * Who delivers a payment to a socket that catches up: the live broadcast or the catch-up,
 * never both. Both sides meet at one Redis key per event (its identity), changed only by
 * atomic scripts, so for every (event, socket) exactly one of them wins:
 *
 * - the notifier claims an event (SET NX `c:<consumer>:<ms>`) and, in the same step, reads
 *   the sockets that already got it through catch-up, which its broadcast then leaves out;
 *   it publishes, then marks the event `p` on the connection that published, so `p` is
 *   set only after the PUBLISH ran;
 * - a catching-up socket classifies each read-model payment in one step: not yet claimed →
 *   it joins the event's except set and catch-up sends it; claimed or published → the live
 *   side owns it (see catch-up.ts for how the node settles that).
 *
 * The key doubles as the notifier's dedup key: a redelivered entry whose event is marked
 * `p` is acknowledged without a second broadcast. A claim left by a consumer that died
 * before marking `p` is taken over once older than the stale time (at-least-once across
 * that crash; exactly once otherwise).
 */
import type { Redis } from 'ioredis';
import type { RealtimeKeys } from './keys.js';
import { luaScript, runScript } from '../../infra/redis/scripts.js';

/** How long marks and except sets live: far above any notifier lag or redelivery. */
export const MARK_TTL_SECONDS = 24 * 3600;

/**
 * KEYS = pairs (mark_i, except_i). ARGV[1] = ttl s; ARGV[2] = consumer; ARGV[3] = stale ms.
 * Returns per event: {1, except members...} = publish now (claimed); {0} = already
 * published; {2} = another live consumer holds the claim.
 */
const CLAIM = luaScript<unknown>('tributaryClaimEmissions', `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 1, #KEYS, 2 do
  local cur = redis.call('GET', KEYS[i])
  local take = false
  if not cur then
    take = true
  elseif cur ~= 'p' then
    local owner, at = string.match(cur, '^c:(.*):(%d+)$')
    take = owner == ARGV[2] or at == nil or now - tonumber(at) > tonumber(ARGV[3])
  end
  if take then
    redis.call('SET', KEYS[i], 'c:' .. ARGV[2] .. ':' .. now, 'EX', ARGV[1])
    local r = redis.call('SMEMBERS', KEYS[i + 1])
    table.insert(r, 1, 1)
    out[#out + 1] = r
  elseif cur == 'p' then
    out[#out + 1] = {0}
  else
    out[#out + 1] = {2}
  end
end
return out
`);

/**
 * KEYS = pairs (mark_i, except_i). ARGV[1] = socketId; ARGV[2] = ttl s.
 * Returns per event: 'n' (not claimed: the socket is now excepted; catch-up sends it),
 * 'c' (claimed, publishing) or 'p' (published).
 */
const CLASSIFY = luaScript<unknown>('tributaryClassifyEmissions', `
local out = {}
for i = 1, #KEYS, 2 do
  local cur = redis.call('GET', KEYS[i])
  if not cur then
    redis.call('SADD', KEYS[i + 1], ARGV[1])
    redis.call('EXPIRE', KEYS[i + 1], ARGV[2])
    out[#out + 1] = 'n'
  elseif cur == 'p' then
    out[#out + 1] = 'p'
  else
    out[#out + 1] = 'c'
  end
end
return out
`);

export type Claim = { kind: 'publish'; except: string[] } | { kind: 'done' } | { kind: 'busy' };
export type MarkState = 'n' | 'c' | 'p';

function pairs(keys: RealtimeKeys, eventIds: readonly string[]): string[] {
  return eventIds.flatMap((id) => [keys.emitted(id), keys.except(id)]);
}

export async function claimEvents(redis: Redis, keys: RealtimeKeys, eventIds: readonly string[], consumer: string, staleMs: number): Promise<Claim[]> {
  if (eventIds.length === 0) return [];
  const k = pairs(keys, eventIds);
  const res = (await runScript(redis, CLAIM, k, [MARK_TTL_SECONDS, consumer, staleMs])) as [number, ...string[]][];
  return res.map(([code, ...except]) => (code === 1 ? { kind: 'publish', except } : code === 0 ? { kind: 'done' } : { kind: 'busy' }));
}

/** Queues the `p` marks on the connection that published, after its PUBLISHes. */
export function markPublished(pubClient: Redis, keys: RealtimeKeys, eventIds: readonly string[]): Promise<unknown> {
  const pipe = pubClient.pipeline();
  for (const id of eventIds) pipe.set(keys.emitted(id), 'p', 'EX', MARK_TTL_SECONDS);
  return pipe.exec();
}

export async function classifyForCatchUp(redis: Redis, keys: RealtimeKeys, eventIds: readonly string[], socketId: string): Promise<MarkState[]> {
  if (eventIds.length === 0) return [];
  const k = pairs(keys, eventIds);
  return (await runScript(redis, CLASSIFY, k, [socketId, MARK_TTL_SECONDS])) as MarkState[];
}

export async function markStates(redis: Redis, keys: RealtimeKeys, eventIds: readonly string[]): Promise<MarkState[]> {
  if (eventIds.length === 0) return [];
  const vals = await redis.mget(...eventIds.map((id) => keys.emitted(id)));
  return vals.map((v) => (v === null ? 'n' : v === 'p' ? 'p' : 'c'));
}
