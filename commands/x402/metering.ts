/**
 * Pay-as-you-go metering. Each request's chunk is counted against the policy's period in
 * Redis, shared by every API node, in one atomic script: nodes racing on one policy can
 * never together pass the cap.
 *
 * The period is the chain's: it starts at current_period_start and lasts
 * period_length_seconds; when the clock has passed its end, the period the clock is in
 * is computed by whole periods (as the program rolls it on the next charge), and what the
 * chain charged (current_period_total) belongs to the old one. Within a period, what is
 * used is what was metered here, or what the chain has charged if that is more (a charge
 * by the payer itself, say):
 *
 *   used = max(metered, chain's period is the current one ? current_period_total : 0)
 *
 * What the service charges is metered usage, so the chain's total never runs ahead of
 * the counter on its account, and a stale read of the chain (the policy cache) can only
 * make the estimate higher, never lower. A chunk is admitted when chunk ≤ max_chunk_amount
 * and used + chunk ≤ max_amount_per_period. The counter is keyed by (policy, period
 * start) and expires at the period's end (plus an hour), so a new period starts from
 * zero with nothing to reset.
 *
 * With a usage ledger (Postgres, commands/settlement/usage-ledger.ts) every chunk is
 * written there before it is counted, and taken back when refused; a counter Redis lost
 * (a restart) is rebuilt from the ledger's unsettled chunks of the period before anything
 * is admitted against it. Amounts above 2^53 lose precision in Lua's numbers;
 * requirements are limited to safe integers.
 *
 * With a ledger, the same script also counts the chunk in the outstanding of the payer's
 * account, shared by every policy drawing on it (account-outstanding.ts), and refuses it
 * when that would pass what the account can fund: one account funding policies at several
 * gateways is never owed more than it holds. That count spans periods, so usage of a period
 * past, not charged yet, still counts after the rollover.
 */
import type { Redis } from 'ioredis';
import type { PayAsYouGoType } from '../../src/kernel/domain/policy-type.js';
import { luaScript, runScript } from '../../infra/redis/scripts.js';
import { accountOutstandingKey, REBUILD_SECONDS } from './account-outstanding.js';

/**
 * KEYS[1]  the counter of one policy's period
 * KEYS[2]  the outstanding of the payer's account (account-outstanding.ts); absent without a ledger
 * ARGV[1]  chunk to add
 * ARGV[2]  the period's limit (the lesser of the cap and what the account can fund for the policy)
 * ARGV[3]  unix seconds at which the counter expires
 * ARGV[4]  the counter's value when it is missing: '' = ask, '0' without a ledger
 * ARGV[5]  what the chain has charged in the period
 * ARGV[6]  what the account can fund
 * ARGV[7]  the outstanding's value when it is missing: '' = ask
 * ARGV[8]  seconds the outstanding lives once set from ARGV[7]
 * Returns {1, used, outstanding} when counted (in both), {0, used, outstanding} when the chunk
 * would pass the period's limit, {2, used, outstanding} when it would pass what the account
 * can fund (nothing counted), {-1, counter missing, outstanding missing} to ask (1 = missing).
 */
export const METER_SCRIPT = luaScript<[number, number, number]>('tributaryMeterUsage', `
local current = redis.call('GET', KEYS[1])
local account = #KEYS > 1
local owed = false
if account then owed = redis.call('GET', KEYS[2]) end
local askCounter = (not current) and ARGV[4] == ''
local askOwed = account and (not owed) and ARGV[7] == ''
if askCounter or askOwed then return {-1, askCounter and 1 or 0, askOwed and 1 or 0} end
if not current then
  current = ARGV[4]
  redis.call('SET', KEYS[1], current, 'EXAT', ARGV[3])
end
if account and not owed then
  owed = ARGV[7]
  redis.call('SET', KEYS[2], owed, 'EX', ARGV[8])
end
local used = math.max(tonumber(current), tonumber(ARGV[5]))
local outstanding = account and tonumber(owed) or 0
local chunk = tonumber(ARGV[1])
if used + chunk > tonumber(ARGV[2]) then return {0, used, outstanding} end
if account and outstanding + chunk > tonumber(ARGV[6]) then return {2, used, outstanding} end
local total = redis.call('INCRBY', KEYS[1], chunk)
redis.call('EXPIREAT', KEYS[1], ARGV[3])
if account then outstanding = redis.call('INCRBY', KEYS[2], chunk) end
return {1, math.max(total, tonumber(ARGV[5]) + chunk), outstanding}
`);

export interface Period { start: bigint; end: bigint; settled: bigint }

/** The period the clock is in, and what the chain has charged in it. */
export function currentPeriod(t: PayAsYouGoType, nowSeconds: number): Period {
  const length = BigInt(t.period_length_seconds);
  const start = BigInt(t.current_period_start);
  const now = BigInt(nowSeconds);
  if (length <= 0n || now < start + length) return { start, end: start + length, settled: BigInt(t.current_period_total) };
  const rolled = start + ((now - start) / length) * length;
  return { start: rolled, end: rolled + length, settled: 0n };
}

/** Where admitted chunks are kept durably (commands/settlement/usage-ledger.ts). */
export interface UsageLedger {
  /**
   * writes the chunk of one request, before it is counted, as a reservation: not charged
   * until served(), dropped if neither served() nor unserved() comes within the ledger's bound
   */
  record(u: { requestId: string; policy: string; gateway: string; userPayment: string; chunk: bigint; periodStart: bigint }): Promise<void>;
  /** takes back a chunk the counter refused */
  discard(requestId: string): Promise<void>;
  /** the request was served: its chunk is charged; false when its reservation had been dropped already (not charged) */
  served(requestId: string): Promise<boolean>;
  /** the request ended unanswered: its reservation is dropped, and returned so its counts are taken back */
  unserved(requestId: string): Promise<UsageRow | undefined>;
  /** every chunk admitted in the period (the counter's value), leaving out one request */
  metered(policy: string, periodStart: bigint, exceptRequestId: string): Promise<bigint>;
  /** the account's usage not charged yet, every policy's (its outstanding), leaving out one request */
  outstanding(userPayment: string, exceptRequestId: string): Promise<bigint>;
}

/** A ledger row as the counts hold it. */
export interface UsageRow { policy: string; periodStart: bigint; userPayment: string | null; chunk: bigint }

/** `userPayment`: the payer's account the policy draws on (the policy's user_payment) */
export interface MeterLedger { ledger: UsageLedger; requestId: string; gateway: string; userPayment: string }

/**
 * What the payer's token account can still fund (payability.ts): a chunk is admitted only
 * while the period's usage not charged yet (what is used beyond the chain's period total),
 * and, with a ledger, the account's usage not charged yet across all its policies
 * (account-outstanding.ts), this chunk included, fit in it; `refuse` says why not.
 */
export interface MeterFunds { amount: bigint; refuse: (chunk: bigint, unsettled: bigint) => string }

/** The Redis key of one policy's period counter. */
export function usageCounterKey(keyPrefix: string, policy: string, periodStart: bigint | string): string {
  return `${keyPrefix}x402:usage:${policy}:${periodStart}`;
}

export type MeterResult =
  | { ok: true; chunk: bigint; periodTotal: bigint; periodLimit: bigint; periodEnd: bigint }
  | { ok: false; reason: string };

export async function meterRequest(
  redis: Redis, keyPrefix: string, policy: string, t: PayAsYouGoType, chunk: bigint, nowSeconds: number, l?: MeterLedger, funds?: MeterFunds,
): Promise<MeterResult> {
  if (t.expiry_date !== null && BigInt(t.expiry_date) <= BigInt(nowSeconds)) return { ok: false, reason: 'the pay-as-you-go policy has expired' };
  if (chunk < 0n) return { ok: false, reason: `a request cannot cost a negative amount (${chunk})` };
  const maxChunk = BigInt(t.max_chunk_amount);
  if (chunk > maxChunk) return { ok: false, reason: `this request costs ${chunk}, above the policy's max_chunk_amount ${maxChunk}` };
  const cap = BigInt(t.max_amount_per_period);
  const p = currentPeriod(t, nowSeconds);
  const room = cap - p.settled;
  const exhausted = (used: bigint): MeterResult => ({
    ok: false, reason: `the period's cap of ${cap} is reached (${used} used, this request costs ${chunk}); the next period starts at ${p.end}`,
  });
  if (room < chunk) return exhausted(p.settled);
  const key = usageCounterKey(keyPrefix, policy, p.start);
  if (chunk === 0n) {
    // a free request: nothing to count or bill. A ledger row of 0 could never be charged (the
    // program refuses execute_payment(0) as InvalidAmount): it stayed unsettled for ever and
    // kept the settler reading the policy from the chain every round.
    const counted = BigInt((await redis.get(key)) ?? '0');
    return { ok: true, chunk, periodTotal: counted > p.settled ? counted : p.settled, periodLimit: cap, periodEnd: p.end };
  }
  // the same atomic check, against the lesser of the cap and what the payer's account can still fund
  const fundable = funds ? p.settled + funds.amount : cap;
  const limit = fundable < cap ? fundable : cap;
  // with a ledger (which the settler charges, and releases the outstanding of), the account's outstanding too
  const account = l && funds ? accountOutstandingKey(keyPrefix, l.userPayment) : undefined;
  const run = (seeds: { counter: string; owed: string }): Promise<[number, number, number]> =>
    runScript(redis, METER_SCRIPT, account ? [key, account] : [key], [
      chunk.toString(), limit.toString(), (p.end + 3600n).toString(), seeds.counter, p.settled.toString(),
      (funds?.amount ?? 0n).toString(), seeds.owed, REBUILD_SECONDS,
    ]);
  if (l) await l.ledger.record({ requestId: l.requestId, policy, gateway: l.gateway, userPayment: l.userPayment, chunk, periodStart: p.start });
  let r: [number, number, number];
  try {
    const seeds = { counter: l ? '' : '0', owed: '' };
    r = await run(seeds);
    // a count is gone (Redis lost it, or the outstanding is due for its rebuild): rebuilt from the
    // ledger, without this request's own row; a count lost again meanwhile is asked for again
    for (let tries = 0; r[0] === -1 && l && tries < 3; tries += 1) {
      const [counter, owed] = await Promise.all([
        r[1] === 1 ? l.ledger.metered(policy, p.start, l.requestId).then(String) : seeds.counter,
        r[2] === 1 ? l.ledger.outstanding(l.userPayment, l.requestId).then(String) : seeds.owed,
      ]);
      Object.assign(seeds, { counter, owed });
      r = await run(seeds);
    }
    if (r[0] === -1) throw new Error('the usage counters kept vanishing while they were rebuilt');
  } catch (err) {
    if (l) await l.ledger.discard(l.requestId).catch(() => undefined);
    throw err;
  }
  const used = BigInt(r[1]);
  if (r[0] !== 1) {
    if (l) await l.ledger.discard(l.requestId);
    if (r[0] === 2 && funds) return { ok: false, reason: funds.refuse(chunk, BigInt(r[2])) };
    if (funds && used + chunk <= cap) return { ok: false, reason: funds.refuse(chunk, used > p.settled ? used - p.settled : 0n) };
    return exhausted(used);
  }
  return { ok: true, chunk, periodTotal: used, periodLimit: cap, periodEnd: p.end };
}
