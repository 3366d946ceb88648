/**
 * What one charge of metered usage covers, as the program will accept it: the oldest
 * unsettled chunks in order, summing to at most max_chunk_amount and to at most the room
 * left in the chain's period (max_amount_per_period minus current_period_total, or the
 * whole cap once the period has elapsed: the program rolls it at this charge). And when
 * a policy is worth charging: its unsettled usage reached the threshold, its oldest chunk
 * waited the interval, the chain's period is about to roll over or the policy to expire.
 * Every time here is the chain's (chain-clock.ts): the program rolls the period and expires
 * the policy by Clock::unix_timestamp, behind the local clock.
 */
import type { PayAsYouGoType } from '../../src/kernel/domain/policy-type.js';

export interface PlanRow { request_id: string; chunk: string }

export type ChargePlan =
  | { kind: 'charge'; amount: bigint; requestIds: string[] }
  | { kind: 'wait'; why: string };

/** What the chain's period still takes: the cap less its total, or the whole cap once the period elapsed. */
export function roomLeft(t: PayAsYouGoType, nowSeconds: number): bigint {
  const rolled = BigInt(nowSeconds) >= BigInt(t.current_period_start) + BigInt(t.period_length_seconds);
  return BigInt(t.max_amount_per_period) - (rolled ? 0n : BigInt(t.current_period_total));
}

export function planCharge(rows: readonly PlanRow[], t: PayAsYouGoType, nowSeconds: number): ChargePlan {
  const room = roomLeft(t, nowSeconds);
  const limit = BigInt(t.max_chunk_amount) < room ? BigInt(t.max_chunk_amount) : room;
  let amount = 0n;
  const requestIds: string[] = [];
  for (const r of rows) {
    const c = BigInt(r.chunk);
    if (amount + c > limit) break;
    amount += c;
    requestIds.push(r.request_id);
  }
  if (amount === 0n) return { kind: 'wait', why: rows.length === 0 ? 'nothing unsettled' : `no room in the chain's period (${room} left of the cap)` };
  return { kind: 'charge', amount, requestIds };
}

/** `chainNowSeconds`: the chain's clock (chain-clock.ts), by which the program rolls the period and expires the policy. */
export interface DueOptions { nowMs: number; chainNowSeconds: number; thresholdAmount: bigint; intervalMs: number; rolloverMarginSeconds: number }

/**
 * Whether a policy's unsettled usage is charged now: it reached the threshold or a full
 * charge's worth (max_chunk_amount, the most one charge carries), its oldest chunk waited the
 * interval, the chain's period is about to roll over, or the policy is about to expire (after
 * its expiry the program refuses every charge: the usage would be unbillable).
 */
export function chargeDue(total: bigint, oldestMs: number, t: PayAsYouGoType, o: DueOptions): boolean {
  if (total >= o.thresholdAmount || total >= BigInt(t.max_chunk_amount)) return true;
  if (o.nowMs - oldestMs >= o.intervalMs) return true;
  const end = Number(BigInt(t.current_period_start) + BigInt(t.period_length_seconds));
  if (o.chainNowSeconds >= end - o.rolloverMarginSeconds) return true;
  return expiresWithin(t, o.chainNowSeconds, o.rolloverMarginSeconds + Math.ceil(o.intervalMs / 1000));
}

/** Whether the policy expires within `seconds` of the chain's `nowSeconds` (0 or none: never). */
export function expiresWithin(t: PayAsYouGoType, nowSeconds: number, seconds: number): boolean {
  return t.expiry_date !== null && Number(t.expiry_date) > 0 && nowSeconds >= Number(t.expiry_date) - seconds;
}
