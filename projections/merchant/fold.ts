/**
 * The merchant model's logic as a pure fold: given the state a batch touches (loaded by
 * store.ts) and the batch's events in stream order, the state after the batch and what
 * the batch adds to subscribers and revenue buckets. No clock: times are the events'
 * block times (a payment's own clock when the cluster gave none); an event without a
 * time changes state but lands in no bucket.
 *
 * A policy address names one policy at a time: once its user payment's policies are all
 * deleted, the user payment deleted and created again, its policy count restarts and the
 * same address names a new policy, perhaps at another gateway. Its creation replaces the
 * row whole, and what the old one counted leaves the old gateway's MRR. The running MRR
 * of a gateway and mint is the sum of the monthly rates of the Subscriptions counted
 * there, so it is never negative: the fold asserts it, and that it loaded every MRR it
 * moves, whatever the batch's bounds (live batches and replay pages give one model).
 */
import { assertNever, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import type { PdaDeriver } from '../../src/kernel/domain/pda.js';
import type { PolicyStatus, PolicyType } from '../../src/kernel/domain/policy-type.js';
import { applyPayment, nextPaymentDue, statusAfterPayment } from '../../src/kernel/domain/schedule.js';
import { BUCKETS, bucketStart } from '../../src/kernel/domain/buckets.js';
import { DEFAULT_PROTOCOL_SHARE_BPS, splitFromLog, splitPayment, type FeeSettings, type PaymentSplit } from './fees.js';
import { monthlyMicro } from '../../src/kernel/domain/mrr.js';
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

function timeOf(e: TributaryEvent): number | null {
  if (e.blockTime !== null) return e.blockTime;
  return e.name === 'PaymentRecord' ? Number(e.data.timestamp) : null;
}

/** a gateway whose creation the model never saw */
const NO_FEES: FeeSettings = { gatewayFeeBps: 0, netMode: false, customProtocolShareBps: null };

const isCounted = (p: MPolicy): boolean =>
  p.policy_type.kind === 'Subscription' && p.status === 'Active' && !p.deleted && p.token_mint !== null;

export function foldMerchant(pda: PdaDeriver, state: MerchantState, events: readonly TributaryEvent[]): FoldOut {
  const out: FoldOut = {
    programChanged: false, gatewaysChanged: new Set(), newUserPayments: new Set(), policiesChanged: new Set(),
    mrrChanged: new Set(), revenue: new Map(), subscribers: new Map(), touched: new Set(), vacated: new Set(),
  };

  const mrrOf = (pk: string): bigint => {
    const v = state.mrr.get(pk);
    if (v === undefined) throw new Error(`merchant fold: the MRR of ${pk} was not loaded for this batch`);
    return v;
  };

  const moveMrr = (pk: string, delta: bigint): void => {
    const next = mrrOf(pk) + delta;
    if (next < 0n) throw new Error(`merchant fold: the MRR of ${pk} would go negative (${next} micro)`);
    state.mrr.set(pk, next);
    out.mrrChanged.add(pk);
  };

  const bucketRows = (gateway: string, mint: string, at: number | null, f: (r: RevenueDelta) => void) => {
    if (at === null) return;
    const mrr = mrrOf(pairKey(gateway, mint));
    for (const bucket of BUCKETS) {
      const start = bucketStart(bucket, at);
      const k = `${gateway}|${mint}|${bucket}|${start}`;
      let r = out.revenue.get(k);
      if (!r) {
        r = { gateway, token_mint: mint, bucket, bucket_start: start, gross: 0n, gateway_fee: 0n, protocol_fee: 0n, net: 0n, payments: 0, new_subscriptions: 0, ended_subscriptions: 0, mrr_micro: mrr };
        out.revenue.set(k, r);
      }
      f(r);
      r.mrr_micro = mrr;
    }
  };

  /**
   * What `before` counted at `pair`. Counted at another pair (a reused address whose new
   * policy is at another gateway), it leaves that pair now and its subscriber is recounted.
   */
  const leave = (before: MPolicy, pair: string | null, at: number | null): bigint => {
    if (before.token_mint === null) return 0n;
    const own = pairKey(before.gateway, before.token_mint);
    if (own === pair) return before.counted ? before.monthly_micro : 0n;
    if (before.payer !== null) {
      out.touched.add(subscriberKey(before.gateway, before.token_mint, before.payer));
      out.vacated.add(subscriberKey(before.gateway, before.token_mint, before.payer));
    }
    if (before.counted) {
      moveMrr(own, -before.monthly_micro);
      bucketRows(before.gateway, before.token_mint, at, () => undefined);
    }
    return 0n;
  };

  /** Stores the policy's next state, moving MRR and the ended count as it changes. */
  const put = (before: MPolicy | undefined, after: MPolicy, at: number | null) => {
    after.counted = isCounted(after);
    const justEnded = !after.ended && (after.deleted || after.status === 'Completed');
    if (justEnded) after.ended = true;
    state.policies.set(after.address, after);
    out.policiesChanged.add(after.address);
    const pk = after.token_mint === null ? null : pairKey(after.gateway, after.token_mint);
    const was = before === undefined ? 0n : leave(before, pk, at);
    if (after.token_mint === null || pk === null) return;
    const delta = (after.counted ? after.monthly_micro : 0n) - was;
    if (delta !== 0n) moveMrr(pk, delta);
    if (after.payer !== null) out.touched.add(subscriberKey(after.gateway, after.token_mint, after.payer));
    // a policy counts as new once it can be attributed to a mint and payer
    const created = before === undefined || before.token_mint === null;
    if (created || justEnded || delta !== 0n) {
      bucketRows(after.gateway, after.token_mint, at, (r) => {
        if (created) r.new_subscriptions += 1;
        if (justEnded) r.ended_subscriptions += 1;
      });
    }
  };

  for (const e of events) {
    const at = timeOf(e);
    switch (e.name) {
      case 'ProgramConfigCreated':
        state.protocolShareBps = e.data.protocol_share_bps;
        out.programChanged = true;
        break;
      case 'PaymentGatewayCreated': {
        // a (re)created gateway starts with the flags of its creation, which no event carries
        const gateway = pda.gateway(e.data.authority);
        state.gateways.set(gateway, { gatewayFeeBps: e.data.gateway_fee_bps, netMode: false, customProtocolShareBps: null });
        out.gatewaysChanged.add(gateway);
        break;
      }
      case 'GatewayFeeBpsChanged': {
        const s = state.gateways.get(e.data.gateway) ?? NO_FEES;
        state.gateways.set(e.data.gateway, { ...s, gatewayFeeBps: e.data.new_fee_bps });
        out.gatewaysChanged.add(e.data.gateway);
        break;
      }
      case 'UserPaymentCreated':
        userPaymentCreated(e.data.owner, e.data.token_mint, at);
        break;
      case 'PaymentPolicyCreated':
        policyCreated(e.data.user_payment, e.data.policy_id, e.data.gateway, e.data.policy_type, at);
        break;
      case 'PaymentPolicyStatusChanged': {
        const before = state.policies.get(e.data.payment_policy);
        if (!before) break;
        const status = e.data.new_status;
        put(before, { ...before, status, next_due: nextPaymentDue(before.policy_type, status) }, at);
        break;
      }
      case 'PaymentPolicyDeleted': {
        const before = state.policies.get(e.data.payment_policy);
        if (!before || before.deleted) break;
        put(before, { ...before, deleted: true, next_due: null }, at);
        break;
      }
      case 'PaymentRecord':
        payment(e, at);
        break;
      // the program deletes a user payment only once its policies are deleted (HasActivePolicies):
      // nothing of the model is left to end, and a re-creation finds its owner and mint unchanged
      case 'UserPaymentDeleted':
      case 'ComposableExecuted': case 'ComposablePolicyCreated': case 'ComposablePolicyDeleted': case 'ComposablePolicyStatusChanged':
      case 'EmergencyPauseChanged': case 'GatewayFeeRecipientChanged': case 'GatewaySignerChanged': case 'PaymentGatewayDeleted':
      case 'ProgramAuthorityChanged': case 'ReferralRewardDistributedRecord':
        break;
      default:
        assertNever(e);
    }
  }
  return out;

  function userPaymentCreated(ownerKey: string, mint: string, at: number | null): void {
    const up = pda.userPayment(ownerKey, mint);
    if (!state.userPayments.has(up)) out.newUserPayments.add(up);
    state.userPayments.set(up, { owner: ownerKey, token_mint: mint });
    // policies indexed before their user payment (a stream out of chain order)
    for (const p of [...state.policies.values()]) {
      if (p.user_payment === up && p.token_mint === null) put(p, { ...p, payer: ownerKey, token_mint: mint }, at);
    }
  }

  function policyCreated(up: string, policyId: number, gateway: string, type: PolicyType, at: number | null): void {
    const address = pda.paymentPolicy(up, policyId);
    const owner = state.userPayments.get(up);
    const before = state.policies.get(address);
    const fresh: MPolicy = {
      address, gateway, user_payment: up, payer: owner?.owner ?? null, token_mint: owner?.token_mint ?? null,
      policy_type: type, status: 'Active', deleted: false, ended: false, counted: false, monthly_micro: monthlyMicro(type),
      next_due: nextPaymentDue(type, 'Active'), created_at: at === null ? null : String(at),
    };
    // a re-created address (after a deletion) is a new subscription; a repeat is not
    put(before?.deleted === false ? before : undefined, fresh, at);
    if (before?.payer && before.token_mint !== null && before.gateway !== gateway) {
      out.vacated.add(subscriberKey(before.gateway, before.token_mint, before.payer));
    }
  }

  /**
   * The chain's own split when execute_payment logged one (and the gateway's mode learned
   * from it, for payments that come without); else the formula on the settings followed.
   */
  function paymentSplit(e: TributaryEvent<'PaymentRecord'>, gateway: string, amount: bigint): PaymentSplit {
    const settings = state.gateways.get(gateway) ?? NO_FEES;
    const logged = e.data.fee_split;
    if (logged === undefined) return splitPayment(amount, settings, state.protocolShareBps ?? DEFAULT_PROTOCOL_SHARE_BPS);
    const split = splitFromLog(amount, logged, settings.gatewayFeeBps);
    if (split.gross !== split.net && split.netMode !== settings.netMode) {
      state.gateways.set(gateway, { ...settings, netMode: split.netMode });
      out.gatewaysChanged.add(gateway);
    }
    return split;
  }

  function payment(e: TributaryEvent<'PaymentRecord'>, at: number | null): void {
    const { gateway, token_mint: mint, payer, payment_policy: address } = e.data;
    const amount = BigInt(e.data.amount);
    const split = paymentSplit(e, gateway, amount);
    const before = state.policies.get(address);
    if (before) {
      // record_id is the policy's payment_count after this payment
      const charged = applyPayment(before.policy_type, e.data.record_id, { amount, timestamp: BigInt(e.data.timestamp) });
      const status = statusAfterPayment(before.status, charged.completes);
      put(before, {
        ...before, payer: before.payer ?? payer, token_mint: before.token_mint ?? mint,
        policy_type: charged.policyType, status, next_due: nextPaymentDue(charged.policyType, status),
      }, at);
    }
    const sk = subscriberKey(gateway, mint, payer);
    const s = out.subscribers.get(sk) ?? { gateway, token_mint: mint, payer, total_paid: 0n, payments: 0, first: null, last: null };
    s.total_paid += split.gross;
    s.payments += 1;
    if (at !== null) {
      const t = BigInt(at);
      if (s.first === null || t < s.first) s.first = t;
      if (s.last === null || t > s.last) s.last = t;
    }
    out.subscribers.set(sk, s);
    out.touched.add(sk);
    bucketRows(gateway, mint, at, (r) => {
      r.gross += split.gross;
      r.gateway_fee += split.gatewayFee;
      r.protocol_fee += split.protocolFee;
      r.net += split.net;
      r.payments += 1;
    });
  }
}
