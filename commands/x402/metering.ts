/**
 * Pay-as-you-go metering. Each request's chunk is counted against the policy's period in
 * Redis, shared by every API node, in one atomic script: nodes racing on one policy can
 * never together pass the cap.
 *
 * The period is the chain's: it starts at current_period_start and lasts
 * period_length_seconds; when the clock has passed its end, the period the clock is in
 * is computed by whole periods (as the program rolls it on the next charge), and what the
 * chain charged (current_period_total) belongs to the old one. Within a period, the total
 * is what the chain has charged plus what was metered here:
 *
 *   used = (chain's period is the current one ? current_period_total : 0) + metered
 *
 * and a chunk is admitted when chunk ≤ max_chunk_amount and used + chunk ≤ max_amount_per_period.
 * The counter is keyed by (policy, period start) and expires at the period's end (plus an
 * hour), so a new period starts from zero with nothing to reset. Amounts above 2^53 lose
 * precision in Lua's numbers; requirements are limited to safe integers.
 */
import type { Redis } from 'ioredis';
import type { PayAsYouGoType } from '../../src/domain/policy-type.js';
import { x402UsageKey } from '../../src/keys/index.js';
import { luaScript, runScript } from '../../infra/redis/scripts.js';

/**
 * KEYS[1]  the counter of one policy's period
 * ARGV[1]  chunk to add
 * ARGV[2]  the most the counter may reach (cap minus what the chain charged this period)
 * ARGV[3]  unix seconds at which the counter expires
 * Returns {1, total} when counted, {0, total} when the chunk would pass the cap (nothing counted).
 */
const METER_SCRIPT = luaScript<[number, number]>('tributaryMeterUsage', `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local chunk = tonumber(ARGV[1])
if used + chunk > tonumber(ARGV[2]) then return {0, used} end
local total = redis.call('INCRBY', KEYS[1], chunk)
redis.call('EXPIREAT', KEYS[1], ARGV[3])
return {1, total}
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

export type MeterResult =
  | { ok: true; chunk: bigint; periodTotal: bigint; periodLimit: bigint; periodEnd: bigint }
  | { ok: false; reason: string };

export async function meterRequest(
  redis: Redis, keyPrefix: string, policy: string, t: PayAsYouGoType, chunk: bigint, nowSeconds: number,
): Promise<MeterResult> {
  if (t.expiry_date !== null && BigInt(t.expiry_date) <= BigInt(nowSeconds)) return { ok: false, reason: 'the pay-as-you-go policy has expired' };
  const maxChunk = BigInt(t.max_chunk_amount);
  if (chunk > maxChunk) return { ok: false, reason: `this request costs ${chunk}, above the policy's max_chunk_amount ${maxChunk}` };
  const cap = BigInt(t.max_amount_per_period);
  const p = currentPeriod(t, nowSeconds);
  const room = cap - p.settled;
  const exhausted = (used: bigint): MeterResult => ({
    ok: false, reason: `the period's cap of ${cap} is reached (${used} used, this request costs ${chunk}); the next period starts at ${p.end}`,
  });
  if (room < chunk) return exhausted(p.settled);
  const key = x402UsageKey(keyPrefix, policy, p.start);
  const r = await runScript(redis, METER_SCRIPT, [key], [chunk.toString(), room.toString(), (p.end + 3600n).toString()]);
  const metered = BigInt(r[1]);
  if (r[0] !== 1) return exhausted(p.settled + metered);
  return { ok: true, chunk, periodTotal: p.settled + metered, periodLimit: cap, periodEnd: p.end };
}
