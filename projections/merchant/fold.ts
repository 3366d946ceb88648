/**
 * The merchant model's logic as a pure fold: given the state a batch touches (loaded by
 * store.ts) and the batch's events in stream order, the state after the batch and what
 * the batch adds to subscribers and revenue buckets. No clock: times are the events'
 * block times (a payment's own clock when the cluster gave none); an event without a
 * time changes state but lands in no bucket.
 */
import { big, field, int, text } from '../../src/kernel/domain/event-data.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import type { EventName } from '../../src/kernel/events/catalog.js';
import type { EventData } from '../../src/kernel/events/codec.js';
import type { PdaDeriver } from '../../src/kernel/domain/pda.js';
import { asPolicyType, asStatus, type PolicyStatus, type PolicyType } from '../../src/kernel/domain/policy-type.js';
import { applyPayment, nextPaymentDue, statusAfterPayment } from '../../src/kernel/domain/schedule.js';
import { BUCKETS, bucketStart } from '../../src/kernel/domain/buckets.js';
import { DEFAULT_PROTOCOL_SHARE_BPS, splitFromLog, splitPayment, type FeeSettings, type PaymentSplit } from './fees.js';
import { monthlyMicro } from '../../src/kernel/domain/mrr.js';

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
  /** `${gateway}|${mint}` → running MRR, micro units */
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
}

export const pairKey = (gateway: string, mint: string): string => `${gateway}|${mint}`;
export const subscriberKey = (gateway: string, mint: string, payer: string): string => `${gateway}|${mint}|${payer}`;

export interface BatchNeeds {
  policies: Set<string>;
  userPayments: Set<string>;
  gateways: Set<string>;
  /** gateway and mint pairs whose MRR payments may move */
  pairs: Map<string, [string, string]>;
  /** gateway and user payment of each creation: its mint's MRR moves */
  creations: [string, string][];
  /** user payments created in the batch itself, with their mints */
  batchMints: Map<string, string>;
}

type NeedsOf = (pda: PdaDeriver, d: EventData, n: BatchNeeds) => void;

const NEEDS: Partial<Record<EventName, NeedsOf>> = {
  UserPaymentCreated: (pda, d, n) => { n.batchMints.set(pda.userPayment(text(d, 'owner'), text(d, 'token_mint')), text(d, 'token_mint')); },
  PaymentPolicyCreated: (pda, d, n) => {
    n.policies.add(pda.paymentPolicy(text(d, 'user_payment'), int(d, 'policy_id')));
    n.userPayments.add(text(d, 'user_payment'));
    n.creations.push([text(d, 'gateway'), text(d, 'user_payment')]);
  },
  PaymentPolicyStatusChanged: (_pda, d, n) => { n.policies.add(text(d, 'payment_policy')); },
  PaymentPolicyDeleted: (_pda, d, n) => { n.policies.add(text(d, 'payment_policy')); },
  PaymentRecord: (_pda, d, n) => {
    n.policies.add(text(d, 'payment_policy'));
    n.gateways.add(text(d, 'gateway'));
    n.pairs.set(pairKey(text(d, 'gateway'), text(d, 'token_mint')), [text(d, 'gateway'), text(d, 'token_mint')]);
  },
  GatewayFeeBpsChanged: (_pda, d, n) => { n.gateways.add(text(d, 'gateway')); },
};

/** What a batch needs loaded: policies, user payments, gateways and MRR pairs. */
export function batchNeeds(pda: PdaDeriver, events: readonly TributaryEvent[]): BatchNeeds {
  const n: BatchNeeds = { policies: new Set(), userPayments: new Set(), gateways: new Set(), pairs: new Map(), creations: [], batchMints: new Map() };
  for (const e of events) NEEDS[e.name]?.(pda, e.data, n);
  return n;
}

function timeOf(e: TributaryEvent): number | null {
  if (e.blockTime !== null) return e.blockTime;
  return e.name === 'PaymentRecord' ? Number(big(e.data, 'timestamp')) : null;
}

/** a gateway whose creation the model never saw */
const NO_FEES: FeeSettings = { gatewayFeeBps: 0, netMode: false, customProtocolShareBps: null };

const isCounted = (p: MPolicy): boolean =>
  p.policy_type.kind === 'Subscription' && p.status === 'Active' && !p.deleted && p.token_mint !== null;

export function foldMerchant(pda: PdaDeriver, state: MerchantState, events: readonly TributaryEvent[]): FoldOut {
  const out: FoldOut = {
    programChanged: false, gatewaysChanged: new Set(), newUserPayments: new Set(), policiesChanged: new Set(),
    mrrChanged: new Set(), revenue: new Map(), subscribers: new Map(), touched: new Set(),
  };

  const bucketRows = (gateway: string, mint: string, at: number | null, f: (r: RevenueDelta) => void) => {
    if (at === null) return;
    const mrr = state.mrr.get(pairKey(gateway, mint)) ?? 0n;
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

  /** Stores the policy's next state, moving MRR and the ended count as it changes. */
  const put = (before: MPolicy | undefined, after: MPolicy, at: number | null) => {
    after.counted = isCounted(after);
    const delta = (after.counted ? after.monthly_micro : 0n) - (before?.counted ? before.monthly_micro : 0n);
    const justEnded = !after.ended && (after.deleted || after.status === 'Completed');
    if (justEnded) after.ended = true;
    state.policies.set(after.address, after);
    out.policiesChanged.add(after.address);
    if (after.token_mint === null) return;
    const pk = pairKey(after.gateway, after.token_mint);
    if (delta !== 0n) {
      state.mrr.set(pk, (state.mrr.get(pk) ?? 0n) + delta);
      out.mrrChanged.add(pk);
    }
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

  const handlers: Partial<Record<EventName, (d: EventData, at: number | null, e: TributaryEvent) => void>> = {
    ProgramConfigCreated: (d) => {
      state.protocolShareBps = int(d, 'protocol_share_bps');
      out.programChanged = true;
    },
    PaymentGatewayCreated: (d) => {
      // a (re)created gateway starts with the flags of its creation, which no event carries
      const gateway = pda.gateway(text(d, 'authority'));
      state.gateways.set(gateway, { gatewayFeeBps: int(d, 'gateway_fee_bps'), netMode: false, customProtocolShareBps: null });
      out.gatewaysChanged.add(gateway);
    },
    GatewayFeeBpsChanged: (d) => {
      const gateway = text(d, 'gateway');
      const s = state.gateways.get(gateway) ?? NO_FEES;
      state.gateways.set(gateway, { ...s, gatewayFeeBps: int(d, 'new_fee_bps') });
      out.gatewaysChanged.add(gateway);
    },
    UserPaymentCreated: (d, at) => {
      const up = pda.userPayment(text(d, 'owner'), text(d, 'token_mint'));
      if (!state.userPayments.has(up)) out.newUserPayments.add(up);
      const owner = { owner: text(d, 'owner'), token_mint: text(d, 'token_mint') };
      state.userPayments.set(up, owner);
      // policies indexed before their user payment (a stream out of chain order)
      for (const p of [...state.policies.values()]) {
        if (p.user_payment === up && p.token_mint === null) put(p, { ...p, payer: owner.owner, token_mint: owner.token_mint }, at);
      }
    },
    PaymentPolicyCreated: (d, at) => {
      const up = text(d, 'user_payment');
      const address = pda.paymentPolicy(up, int(d, 'policy_id'));
      const owner = state.userPayments.get(up);
      const type = asPolicyType(field(d, 'policy_type'));
      const before = state.policies.get(address);
      const fresh: MPolicy = {
        address, gateway: text(d, 'gateway'), user_payment: up, payer: owner?.owner ?? null, token_mint: owner?.token_mint ?? null,
        policy_type: type, status: 'Active', deleted: false, ended: false, counted: false, monthly_micro: monthlyMicro(type),
        next_due: nextPaymentDue(type, 'Active'), created_at: at === null ? null : String(at),
      };
      // a re-created address (after a deletion) is a new subscription; a repeat is not
      put(before?.deleted === false ? before : undefined, fresh, at);
    },
    PaymentPolicyStatusChanged: (d, at) => {
      const before = state.policies.get(text(d, 'payment_policy'));
      if (!before) return;
      const status = asStatus(field(d, 'new_status'));
      put(before, { ...before, status, next_due: nextPaymentDue(before.policy_type, status) }, at);
    },
    PaymentPolicyDeleted: (d, at) => {
      const before = state.policies.get(text(d, 'payment_policy'));
      if (!before || before.deleted) return;
      put(before, { ...before, deleted: true, next_due: null }, at);
    },
    PaymentRecord: (_d, at, e) => payment(e, at),
  };
  for (const e of events) handlers[e.name]?.(e.data, timeOf(e), e);
  return out;

  /**
   * The chain's own split when execute_payment logged one (and the gateway's mode learned
   * from it, for payments that come without); else the formula on the settings followed.
   */
  function paymentSplit(e: TributaryEvent, gateway: string, amount: bigint): PaymentSplit {
    const settings = state.gateways.get(gateway) ?? NO_FEES;
    const logged = e.name === 'PaymentRecord' ? e.data.fee_split : undefined;
    if (logged === undefined) return splitPayment(amount, settings, state.protocolShareBps ?? DEFAULT_PROTOCOL_SHARE_BPS);
    const split = splitFromLog(amount, logged, settings.gatewayFeeBps);
    if (split.gross !== split.net && split.netMode !== settings.netMode) {
      state.gateways.set(gateway, { ...settings, netMode: split.netMode });
      out.gatewaysChanged.add(gateway);
    }
    return split;
  }

  function payment(e: TributaryEvent, at: number | null): void {
    const d = e.data;
    const gateway = text(d, 'gateway');
    const mint = text(d, 'token_mint');
    const payer = text(d, 'payer');
    const amount = big(d, 'amount');
    const split = paymentSplit(e, gateway, amount);
    const address = text(d, 'payment_policy');
    const before = state.policies.get(address);
    if (before) {
      // record_id is the policy's payment_count after this payment
      const charged = applyPayment(before.policy_type, int(d, 'record_id'), { amount, timestamp: big(d, 'timestamp') });
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
