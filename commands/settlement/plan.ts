/**
 * What one charge of metered usage covers, as the program will accept it: the oldest
 * unsettled chunks in order, summing to at most max_chunk_amount and to at most the room
 * left in the chain's period (max_amount_per_period minus current_period_total, or the
 * whole cap once the period has elapsed: the program rolls it at this charge). And when
 * a policy is worth charging: its unsettled usage reached the threshold, its oldest chunk
 * waited the interval, or the chain's period is about to roll over.
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

export interface DueOptions { nowMs: number; thresholdAmount: bigint; intervalMs: number; rolloverMarginSeconds: number }

export function chargeDue(total: bigint, oldestMs: number, t: PayAsYouGoType, o: DueOptions): boolean {
  if (total >= o.thresholdAmount) return true;
  if (o.nowMs - oldestMs >= o.intervalMs) return true;
  const end = Number(BigInt(t.current_period_start) + BigInt(t.period_length_seconds));
  return o.nowMs / 1000 >= end - o.rolloverMarginSeconds;
}
