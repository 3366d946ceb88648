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
 * a request unpaid.
 */
import pRetry from 'p-retry';
import type { Redis } from 'ioredis';
import { luaScript, runScript } from '../../infra/redis/scripts.js';

/**
 * A ledger row whose statement failed with anything but an overlap may still have been
 * written: Postgres committed it and the answer was lost (a restart terminating the
 * connection), or a group's statement committed and the rows' retries one by one met their
 * own keys. Its request is refused (a 503), so the row is taken back, in the background and
 * tried again while Postgres is away: left, a pay-as-you-go reservation would count in its
 * payer's outstanding until dropped at its bound, and a prepaid row would spend the credit
 * on a request never served. Taking back a row that was never written deletes nothing. Tried
 * for about a minute: a longer outage leaves a reservation to its bound (dropped, never charged).
 */
export function takeBackInDoubt(discard: () => Promise<void>): void {
  pRetry(discard, { retries: 10, factor: 2, minTimeout: 200, maxTimeout: 5000, maxRetryTime: 60_000 }).catch(() => undefined);
}

/** The names the ledger's refusals of overlapping slices carry (SQLSTATE 23P01), by what they guard. */
export const SLICE_CONSTRAINTS = {
  credit: 'prepaid_usage_slice_excl',
  period: 'payg_usage_period_slice_excl',
  account: 'payg_usage_account_slice_excl',
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

/**
 * KEYS[1]  a counter's position (a credit's or a period's use)
 * KEYS[2]  the outstanding of the payer's account, KEYS[3] its position (both absent for a credit)
 * ARGV[1]  cost of the request
 * ARGV[2]  limit of KEYS[1] (the credit, or the lesser of the period's cap and what the account can fund)
 * ARGV[3]  unix seconds at which KEYS[1] expires
 * ARGV[4]  KEYS[1]'s value when it is missing: '' = ask
 * ARGV[5]  the floor of KEYS[1]'s slices (what the chain already charged in the period)
 * ARGV[6]  limit of the account's outstanding (what it can fund, or the exposure a merchant accepts, the lesser)
 * ARGV[7]  KEYS[2]'s value when KEYS[2] or KEYS[3] is missing: '' = ask; ARGV[8] KEYS[3]'s then
 * ARGV[9]  seconds KEYS[2] and KEYS[3] live once set from ARGV[7..8]
 * Returns {1, used, outstanding, slice start, account slice start} when admitted; {0, ...} over
 * ARGV[2]; {2, ...} over ARGV[6] (nothing counted); {-1, ask counter, ask account} to ask (1 = missing).
 */
export const METER_SCRIPT = luaScript<[number, number, number, number, number]>('tributaryMeterSlices', `
local pos = redis.call('GET', KEYS[1])
local account = #KEYS > 1
local owed, apos = false, false
if account then owed = redis.call('GET', KEYS[2]); apos = redis.call('GET', KEYS[3]) end
local askCounter = (not pos) and ARGV[4] == ''
local askOwed = account and not (owed and apos) and ARGV[7] == ''
if askCounter or askOwed then return {-1, askCounter and 1 or 0, askOwed and 1 or 0, 0, 0} end
if not pos then
  pos = ARGV[4]
  redis.call('SET', KEYS[1], pos, 'EXAT', ARGV[3])
end
if account and not (owed and apos) then
  owed, apos = ARGV[7], ARGV[8]
  redis.call('SET', KEYS[2], owed, 'EX', ARGV[9])
  redis.call('SET', KEYS[3], apos, 'EX', ARGV[9])
end
local start = math.max(tonumber(pos), tonumber(ARGV[5]))
local outstanding = account and tonumber(owed) or 0
local cost = tonumber(ARGV[1])
if start + cost > tonumber(ARGV[2]) then return {0, start, outstanding, 0, 0} end
if account and outstanding + cost > tonumber(ARGV[6]) then return {2, start, outstanding, 0, 0} end
redis.call('INCRBY', KEYS[1], start + cost - tonumber(pos))
redis.call('EXPIREAT', KEYS[1], ARGV[3])
local astart = 0
if account then
  outstanding = redis.call('INCRBY', KEYS[2], cost)
  astart = redis.call('INCRBY', KEYS[3], cost) - cost
end
return {1, start + cost, outstanding, start, astart}
`);

/**
 * KEYS[1]  a counter's position; ARGV[1] the ledger's high mark for it
 * Raises the counter to the mark (a counter Redis no longer has is left to its rebuild). Returns 1.
 */
export const RAISE_SCRIPT = luaScript<number>('tributaryRaiseCounter', `
local pos = redis.call('GET', KEYS[1])
if pos and tonumber(pos) < tonumber(ARGV[1]) then redis.call('INCRBY', KEYS[1], tonumber(ARGV[1]) - tonumber(pos)) end
return 1
`);

/**
 * KEYS[1]  a counter's position; KEYS[2] (optional) the outstanding of the payer's account
 * ARGV[1]  the end of the slice given back ('' = the row held none); ARGV[2] its cost
 * A request that ended unanswered gives its chunk back. The account's outstanding is a sum: it
 * always comes down (clamped at zero; a count Redis no longer has is left to its rebuild). The
 * counter is a position: it moves back only while the slice is still the last it handed out
 * (it stands at the slice's end). Moved back below slices handed out after it, it would hand
 * them out again, and every request meeting one would be refused by the ledger (an overlap) and
 * admitted again from the ledger's mark, a statement and a rebuild each: under load, one
 * request in the middle given back that way cost every concurrent request of the policy its
 * group statement. A slice in the middle stays a hole: the payer loses that much of the
 * period's cap, never the merchant. Returns 1 when the counter moved back, else 0.
 */
const GIVE_BACK_SCRIPT = luaScript<number>('tributaryGiveBackSlice', `
local moved = 0
if ARGV[1] ~= '' then
  local pos = redis.call('GET', KEYS[1])
  if pos and tonumber(pos) == tonumber(ARGV[1]) then
    redis.call('DECRBY', KEYS[1], ARGV[2])
    moved = 1
  end
end
if #KEYS > 1 and redis.call('EXISTS', KEYS[2]) == 1 then
  if redis.call('DECRBY', KEYS[2], ARGV[2]) < 0 then redis.call('SET', KEYS[2], '0', 'KEEPTTL') end
end
return moved
`);

/**
 * Gives back `amount` of a request that ended unanswered (GIVE_BACK_SCRIPT): to `counter` while
 * `sliceEnd` is where it stands (null: the row held no slice, the counter is left alone), and to
 * the account's `outstanding` when given.
 */
export async function giveBack(redis: Redis, counter: string, sliceEnd: bigint | null, amount: bigint, outstanding?: string): Promise<void> {
  await runScript(redis, GIVE_BACK_SCRIPT, outstanding === undefined ? [counter] : [counter, outstanding], [sliceEnd?.toString() ?? '', amount.toString()]);
}
