/**
 * Why a Redis restored from an older snapshot cannot admit past the ledger.
 *
 * A counter in Redis (a prepaid credit's use, a pay-as-you-go period's use, a payer
 * account's position) only ever hands out slices: a request of cost c admitted at
 * position p holds [p, p + c). The script admits it only when p + c is within the limit,
 * and the ledger row that records the request (written before the response leaves) holds
 * the slice, and Postgres refuses a row whose slice overlaps one another row of the same
 * counter holds (a statement trigger over btree indexes, migrations 1010_meter_slices_btree and
 * 1011_meter_slices_statement, which raise the exclusion violation the GiST constraints of
 * 1004_meter_slices raised): no two
 * requests of one counter ever hold overlapping slices. So whatever Redis believes, the requests
 * admitted hold disjoint slices of [0, limit), and together cost at most the limit.
 *
 * A counter that went back in time (an RDB restore, a lagging replica promoted) hands out
 * slices the ledger already holds: the insert fails, the counter is raised to the ledger's
 * high mark (the end of its highest slice) and the request is admitted again from there.
 * A slice handed out and never recorded (its process died, Postgres failed) stays unused:
 * the payer may lose that much of a credit or a period's cap, the merchant never serves
 * a request unpaid. A slice whose request ended unanswered is given back: the counter moves
 * back when it was the last handed out, else it is kept as a hole (a sorted set beside the
 * counter) that the script hands out again first. A hole is a hint, never trusted: a stale
 * one (Redis restored) overlaps a row and is refused like any slice.
 */
import pRetry from 'p-retry';
import type { Redis } from 'ioredis';
import { luaScript, runScript } from '../../infra/redis/scripts.js';

/**
 * A ledger row whose statement failed with anything but an overlap may still have been
 * written: Postgres committed it and the answer was lost (a restart terminating the
 * connection), its connection broke while the statement ran on (it commits later: the
 * take-back waits for its backend, prepared.ts), or a group's statement committed and the
 * rows' retries one by one met their own keys. Its request is refused (a 503), so the row is
 * taken back, in the background and tried again while Postgres is away or the statement still
 * runs: left, a pay-as-you-go reservation would count in its payer's outstanding until dropped
 * at its bound, and a prepaid row would spend the credit on a request never served. Taking
 * back a row that was never written deletes nothing. Tried for ten minutes, every 5 s at most:
 * a longer outage leaves a pay-as-you-go reservation to its bound (its number is kept out of the
 * served marks until its take-back succeeds: never charged), and a prepaid row to the payer's loss.
 */
export function takeBackInDoubt(discard: () => Promise<void>): void {
  pRetry(discard, { retries: 200, factor: 2, minTimeout: 200, maxTimeout: 5000, maxRetryTime: 600_000 }).catch(() => undefined);
}

/** The names the ledger's refusals of a count behind it carry (SQLSTATE 23P01), by what they guard. */
export const SLICE_CONSTRAINTS = {
  credit: 'prepaid_usage_slice_excl',
  period: 'payg_usage_period_slice_excl',
  account: 'payg_usage_account_slice_excl',
  /**
   * the account's outstanding as the ledger keeps it (migration 1015): a row that would take it past
   * the limit its meter checked, which only a count behind the ledger admits (a position handed out
   * again where a row was deleted meets no slice to overlap)
   */
  owed: 'payg_usage_account_owed_limit',
} as const;

/** The slice [start, start + cost) as a Postgres int8range literal; NULL for a row that holds none (recorded before slices were kept). */
export function sliceText(start: bigint | undefined, cost: bigint): string | null {
  return start === undefined ? null : `[${start},${start + cost})`;
}

/** Which counter was behind the ledger, when `err` is an insert refused for overlapping slices. */
export function overlapOf(err: unknown): keyof typeof SLICE_CONSTRAINTS | undefined {
  const e = err as { code?: string; constraint?: string };
  if (e.code !== '23P01') return undefined;
  const hit = Object.entries(SLICE_CONSTRAINTS).find(([, name]) => name === e.constraint);
  return hit ? (hit[0] as keyof typeof SLICE_CONSTRAINTS) : undefined;
}

/** Where a counter keeps the slices given back below its position (a sorted set: member the start, score the end). */
export const holesKey = (counter: string): string => `${counter}:holes`;

/** At most this many holes are kept a counter; one given back beyond is lost to the payer, as before holes were kept. */
export const MAX_HOLES = 64;

/**
 * The Lua that reads a counter's holes (KEYS[2]) beside its position `top` and `floor` (ARGV[5] in the
 * meter script): drops those that can no longer be handed out (ending at or below the floor, what the
 * chain already charged; crossing it; or above the position, left by a counter that went back), and
 * sets `holed` (their sum) and `hole` ({member, start, cost} of the first, lowest, that fits `cost`).
 */
const READ_HOLES = `
local holed, hole = 0, false
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', floor)
  local list = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
  for i = 1, #list, 2 do
    local s, e = tonumber(list[i]), tonumber(list[i + 1])
    if s < floor or e > top then
      redis.call('ZREM', KEYS[2], list[i])
    else
      holed = holed + (e - s)
      if not hole and e - s >= cost then hole = {list[i], s, e - s} end
    end
  end
end
`;

/**
 * KEYS[1]  a counter's position (a credit's or a period's use); KEYS[2] its holes (holesKey)
 * KEYS[3]  the outstanding of the payer's account, KEYS[4] its position (both absent for a credit)
 * ARGV[1]  cost of the request
 * ARGV[2]  limit of KEYS[1] (the credit, or the lesser of the period's cap and what the account can fund)
 * ARGV[3]  unix seconds at which KEYS[1] expires
 * ARGV[4]  KEYS[1]'s value when it is missing: '' = ask
 * ARGV[5]  the floor of KEYS[1]'s slices (what the chain already charged in the period)
 * ARGV[6]  limit of the account's outstanding (what it can fund, or the exposure a merchant accepts, the lesser)
 * ARGV[7]  KEYS[3]'s value when KEYS[3] or KEYS[4] is missing: '' = ask; ARGV[8] KEYS[4]'s then
 * ARGV[9]  seconds KEYS[3] and KEYS[4] live once set from ARGV[7..8]
 * A slice given back below the position (a hole, GIVE_BACK_SCRIPT) is handed out again before the
 * position moves: the lowest hole the cost fits in, its rest kept as a hole. Used is the position
 * less the holes. Returns {1, used, outstanding, slice start, account slice start} when admitted;
 * {0, ...} over ARGV[2]; {2, ...} over ARGV[6] (nothing counted); {-1, ask counter, ask account} to
 * ask (1 = missing).
 */
export const METER_SCRIPT = luaScript<[number, number, number, number, number]>('tributaryMeterSlices', `
local pos = redis.call('GET', KEYS[1])
local account = #KEYS > 2
local owed, apos = false, false
if account then owed = redis.call('GET', KEYS[3]); apos = redis.call('GET', KEYS[4]) end
local askCounter = (not pos) and ARGV[4] == ''
local askOwed = account and not (owed and apos) and ARGV[7] == ''
if askCounter or askOwed then return {-1, askCounter and 1 or 0, askOwed and 1 or 0, 0, 0} end
if not pos then
  pos = ARGV[4]
  redis.call('SET', KEYS[1], pos, 'EXAT', ARGV[3])
  redis.call('DEL', KEYS[2])
end
if account and not (owed and apos) then
  owed, apos = ARGV[7], ARGV[8]
  redis.call('SET', KEYS[3], owed, 'EX', ARGV[9])
  redis.call('SET', KEYS[4], apos, 'EX', ARGV[9])
end
local floor = tonumber(ARGV[5])
local top = math.max(tonumber(pos), floor)
local outstanding = account and tonumber(owed) or 0
local cost = tonumber(ARGV[1])
` + READ_HOLES + `
local used = top - holed
local start
if hole and used + cost <= tonumber(ARGV[2]) then
  if account and outstanding + cost > tonumber(ARGV[6]) then return {2, used, outstanding, 0, 0} end
  start = hole[2]
  redis.call('ZREM', KEYS[2], hole[1])
  if hole[3] > cost then redis.call('ZADD', KEYS[2], start + hole[3], string.format('%d', start + cost)) end
  redis.call('EXPIREAT', KEYS[2], ARGV[3])
else
  if top + cost > tonumber(ARGV[2]) then return {0, used, outstanding, 0, 0} end
  if account and outstanding + cost > tonumber(ARGV[6]) then return {2, used, outstanding, 0, 0} end
  start = top
  redis.call('INCRBY', KEYS[1], top + cost - tonumber(pos))
end
redis.call('EXPIREAT', KEYS[1], ARGV[3])
local astart = 0
if account then
  outstanding = redis.call('INCRBY', KEYS[3], cost)
  astart = redis.call('INCRBY', KEYS[4], cost) - cost
end
return {1, used + cost, outstanding, start, astart}
`);

/** The keys METER_SCRIPT takes for `counter`, with the payer's account's (`owed`, `position`) when counted. */
export function meterKeys(counter: string, account?: { owed: string; position: string }): string[] {
  return account ? [counter, holesKey(counter), account.owed, account.position] : [counter, holesKey(counter)];
}

/** A slice [start, end) of a counter no ledger row holds, below its high mark: a hole to hand out again. */
export type Gap = readonly [start: bigint, end: bigint];

/** ARGV from `from` on: each gap's end (the score) and start (the member), as the holes' set keeps them. */
const SET_HOLES = (from: number) => `
redis.call('DEL', KEYS[2])
for i = ${from}, #ARGV, 2 do redis.call('ZADD', KEYS[2], ARGV[i + 1], ARGV[i]) end
local ttl = redis.call('PTTL', KEYS[1])
if #ARGV >= ${from} and ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
`;

const gapArgs = (gaps: readonly Gap[]): string[] => gaps.slice(0, MAX_HOLES).flatMap(([s, e]) => [s.toString(), e.toString()]);

/**
 * KEYS[1]  a counter's position, KEYS[2] its holes; ARGV[1] the ledger's high mark for it;
 * ARGV[2..] the gaps below the mark no row holds (start, end pairs)
 * Raises the counter to the mark (a counter Redis no longer has is left to its rebuild); its holes
 * become the ledger's gaps: a counter found behind the ledger may hold holes the ledger has since
 * filled, and may have lost holes given back after its snapshot. Returns 1.
 */
const RAISE_SCRIPT = luaScript<number>('tributaryRaiseCounter', `
local pos = redis.call('GET', KEYS[1])
if pos and tonumber(pos) < tonumber(ARGV[1]) then redis.call('INCRBY', KEYS[1], tonumber(ARGV[1]) - tonumber(pos)) end
` + SET_HOLES(2) + `
return 1
`);

/** A counter found behind the ledger (an overlap): raised to the ledger's `mark`, its holes the ledger's `gaps` (RAISE_SCRIPT). */
export async function raiseCounter(redis: Redis, counter: string, mark: bigint, gaps: readonly Gap[] = []): Promise<void> {
  await runScript(redis, RAISE_SCRIPT, [counter, holesKey(counter)], [mark.toString(), ...gapArgs(gaps)]);
}

/**
 * KEYS[1]  a counter's position, KEYS[2] its holes; ARGV[1] the ledger's high mark, ARGV[2] unix seconds
 * the counter expires at; ARGV[3..] the gaps below the mark no row holds (start, end pairs)
 * A counter Redis lost, set from the ledger with its holes, unless another node set it first. Returns
 * 1 when set.
 */
const SEED_SCRIPT = luaScript<number>('tributarySeedCounter', `
if not redis.call('SET', KEYS[1], ARGV[1], 'EXAT', ARGV[2], 'NX') then return 0 end
` + SET_HOLES(3) + `
return 1
`);

/** A counter Redis lost, rebuilt from the ledger's `mark` and `gaps` (the requests given back before it was lost, among them). */
export async function seedCounter(redis: Redis, counter: string, mark: bigint, expireAt: bigint, gaps: readonly Gap[]): Promise<void> {
  await runScript(redis, SEED_SCRIPT, [counter, holesKey(counter)], [mark.toString(), expireAt.toString(), ...gapArgs(gaps)]);
}

/**
 * KEYS[1]  a counter's position, KEYS[2] its holes; KEYS[3] (optional) the outstanding of the payer's account
 * ARGV[1]  the end of the slice given back ('' = the row held none); ARGV[2] its cost; ARGV[3] MAX_HOLES
 * A request that ended unanswered gives its chunk back (its ledger row deleted first, so nothing holds
 * the slice). The account's outstanding is a sum: it always comes down (clamped at zero; a count Redis
 * no longer has is left to its rebuild). The counter is a position: it moves back only while the slice
 * is the last it handed out (it stands at the slice's end), and then over the holes just below too.
 * Moved back below slices handed out after it, it would hand them out again, and every request meeting
 * one would be refused by the ledger (an overlap) and admitted again from the ledger's mark, a
 * statement and a rebuild each: under load, one request in the middle given back that way cost every
 * concurrent request of the policy its group statement. A slice in the middle becomes a hole, handed
 * out again by the meter script before the position moves: the payer keeps that much of its credit or
 * of the period's cap. Returns 1 when the counter moved back, 2 when a hole was kept, else 0.
 */
const GIVE_BACK_SCRIPT = luaScript<number>('tributaryGiveBackSlice', `
local done = 0
local pos = redis.call('GET', KEYS[1])
if ARGV[1] ~= '' and pos then
  local e, c, at = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(pos)
  if c > 0 and at == e then
    local p = e - c
    while true do
      local below = redis.call('ZRANGEBYSCORE', KEYS[2], p, p)
      if #below == 0 then break end
      redis.call('ZREM', KEYS[2], below[1])
      p = tonumber(below[1])
    end
    redis.call('DECRBY', KEYS[1], at - p)
    done = 1
  elseif c > 0 and at > e and redis.call('ZCARD', KEYS[2]) < tonumber(ARGV[3]) then
    redis.call('ZADD', KEYS[2], e, string.format('%d', e - c))
    local ttl = redis.call('PTTL', KEYS[1])
    if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
    done = 2
  end
end
if #KEYS > 2 and redis.call('EXISTS', KEYS[3]) == 1 then
  if redis.call('DECRBY', KEYS[3], ARGV[2]) < 0 then redis.call('SET', KEYS[3], '0', 'KEEPTTL') end
end
return done
`);

/**
 * KEYS[1] a counter's position, KEYS[2] its holes. Returns {1, used} (the position less its holes),
 * or {0, 0} when Redis has no counter.
 */
const USED_SCRIPT = luaScript<[number, number]>('tributaryCounterUsed', `
local pos = redis.call('GET', KEYS[1])
if not pos then return {0, 0} end
local holed = 0
local list = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
for i = 1, #list, 2 do holed = holed + tonumber(list[i + 1]) - tonumber(list[i]) end
return {1, tonumber(pos) - holed}
`);

/** What a counter has handed out and not had back (its position less its holes); undefined when Redis has none. */
export async function counterUsed(redis: Redis, counter: string): Promise<bigint | undefined> {
  const [found, used] = await runScript(redis, USED_SCRIPT, [counter, holesKey(counter)], []);
  return found === 1 ? BigInt(used) : undefined;
}

/**
 * Gives back `amount` of a request that ended unanswered (GIVE_BACK_SCRIPT): to `counter` (moved
 * back while `sliceEnd` is where it stands, else kept as a hole; null: the row held no slice, the
 * counter is left alone), and to the account's `outstanding` when given.
 */
export async function giveBack(redis: Redis, counter: string, sliceEnd: bigint | null, amount: bigint, outstanding?: string): Promise<void> {
  const keys = [counter, holesKey(counter), ...(outstanding === undefined ? [] : [outstanding])];
  await runScript(redis, GIVE_BACK_SCRIPT, keys, [sliceEnd?.toString() ?? '', amount.toString(), MAX_HOLES]);
}
