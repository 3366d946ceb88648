/**
 * The merchant fold's state and its steps on it: MRR moves, revenue bucket rows, and a
 * policy's next state (./fold.ts applies events with them). The running MRR of a gateway
 * and mint is the sum of the monthly rates of the Subscriptions counted there, so it is
 * never negative: the steps assert it, and that every MRR they move was loaded.
 */
import type { PolicyStatus, PolicyType } from '../../src/kernel/domain/policy-type.js';
import type { PdaDeriver } from '../../src/kernel/domain/pda.js';
import { BUCKETS, bucketStart } from '../../src/kernel/domain/buckets.js';
import type { FeeSettings } from './fees.js';
import { pairKey, subscriberKey } from './needs.js';

export interface MPolicy {
  address: string;
  gateway: string;
  user_payment: string;
  payer: string | null;
  token_mint: string | null;
  policy_type: PolicyType;
  status: PolicyStatus;
  deleted: boolean;
  ended: boolean;
  counted: boolean;
  monthly_micro: bigint;
  next_due: string | null;
  created_at: string | null;
}

export interface RevenueDelta {
  gateway: string; token_mint: string; bucket: string; bucket_start: number;
  gross: bigint; gateway_fee: bigint; protocol_fee: bigint; net: bigint; payments: number;
  new_subscriptions: number; ended_subscriptions: number; mrr_micro: bigint;
}

export interface SubscriberDelta {
  gateway: string; token_mint: string; payer: string;
  total_paid: bigint; payments: number; first: bigint | null; last: bigint | null;
}

export interface MerchantState {
  protocolShareBps: number | null;
  gateways: Map<string, FeeSettings>;
  userPayments: Map<string, { owner: string; token_mint: string }>;
  policies: Map<string, MPolicy>;
  /** `${gateway}|${mint}` → running MRR, micro units; a pair loaded without a row is 0 */
  mrr: Map<string, bigint>;
}

export interface FoldOut {
  programChanged: boolean;
  gatewaysChanged: Set<string>;
  newUserPayments: Set<string>;
  policiesChanged: Set<string>;
  mrrChanged: Set<string>;
  revenue: Map<string, RevenueDelta>;
  subscribers: Map<string, SubscriberDelta>;
  /** `${gateway}|${mint}|${payer}` of subscribers whose policies changed */
  touched: Set<string>;
  /** subscribers a policy row left for another gateway (its address reused): perhaps with none left */
  vacated: Set<string>;
}

/** One batch's fold: the state it moves and what it adds. */
export interface Fold { pda: PdaDeriver; state: MerchantState; out: FoldOut }

/** a gateway whose creation the model never saw */
export const NO_FEES: FeeSettings = { gatewayFeeBps: 0, netMode: false, customProtocolShareBps: null };

const isCounted = (p: MPolicy): boolean =>
  p.policy_type.kind === 'Subscription' && p.status === 'Active' && !p.deleted && p.token_mint !== null;

function mrrOf(f: Fold, pk: string): bigint {
  const v = f.state.mrr.get(pk);
  if (v === undefined) throw new Error(`merchant fold: the MRR of ${pk} was not loaded for this batch`);
  return v;
}

function moveMrr(f: Fold, pk: string, delta: bigint): void {
  const next = mrrOf(f, pk) + delta;
  if (next < 0n) throw new Error(`merchant fold: the MRR of ${pk} would go negative (${next} micro)`);
  f.state.mrr.set(pk, next);
  f.out.mrrChanged.add(pk);
}

/** Applies `fn` to the revenue rows of every bucket holding `at`, and stamps them with the pair's MRR. */
export function bucketRows(f: Fold, gateway: string, mint: string, at: number | null, fn: (r: RevenueDelta) => void): void {
  if (at === null) return;
  const mrr = mrrOf(f, pairKey(gateway, mint));
  for (const bucket of BUCKETS) {
    const start = bucketStart(bucket, at);
    const k = `${gateway}|${mint}|${bucket}|${start}`;
    let r = f.out.revenue.get(k);
    if (!r) {
      r = { gateway, token_mint: mint, bucket, bucket_start: start, gross: 0n, gateway_fee: 0n, protocol_fee: 0n, net: 0n, payments: 0, new_subscriptions: 0, ended_subscriptions: 0, mrr_micro: mrr };
      f.out.revenue.set(k, r);
    }
    fn(r);
    r.mrr_micro = mrr;
  }
}

/**
 * What `before` counted at `pair`. Counted at another pair (a reused address whose new
 * policy is at another gateway), it leaves that pair now and its subscriber is recounted.
 */
function leave(f: Fold, before: MPolicy, pair: string | null, at: number | null): bigint {
  if (before.token_mint === null) return 0n;
  const own = pairKey(before.gateway, before.token_mint);
  if (own === pair) return before.counted ? before.monthly_micro : 0n;
  if (before.payer !== null) {
    f.out.touched.add(subscriberKey(before.gateway, before.token_mint, before.payer));
    f.out.vacated.add(subscriberKey(before.gateway, before.token_mint, before.payer));
  }
  if (before.counted) {
    moveMrr(f, own, -before.monthly_micro);
    bucketRows(f, before.gateway, before.token_mint, at, () => undefined);
  }
  return 0n;
}

/** Stores the policy's next state, moving MRR and the ended count as it changes. */
export function put(f: Fold, before: MPolicy | undefined, after: MPolicy, at: number | null): void {
  after.counted = isCounted(after);
  const justEnded = !after.ended && (after.deleted || after.status === 'Completed');
  if (justEnded) after.ended = true;
  f.state.policies.set(after.address, after);
  f.out.policiesChanged.add(after.address);
  const pk = after.token_mint === null ? null : pairKey(after.gateway, after.token_mint);
  const was = before === undefined ? 0n : leave(f, before, pk, at);
  if (after.token_mint === null || pk === null) return;
  const delta = (after.counted ? after.monthly_micro : 0n) - was;
  if (delta !== 0n) moveMrr(f, pk, delta);
  if (after.payer !== null) f.out.touched.add(subscriberKey(after.gateway, after.token_mint, after.payer));
  // a policy counts as new once it can be attributed to a mint and payer
  const created = before === undefined || before.token_mint === null;
  if (created || justEnded || delta !== 0n) {
    bucketRows(f, after.gateway, after.token_mint, at, (r) => {
      if (created) r.new_subscriptions += 1;
      if (justEnded) r.ended_subscriptions += 1;
    });
  }
}
