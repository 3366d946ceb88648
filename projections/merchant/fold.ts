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
import type { EventName } from '../../src/kernel/events/catalog.js';
import type { PdaDeriver } from '../../src/kernel/domain/pda.js';
import type { PolicyType } from '../../src/kernel/domain/policy-type.js';
import { applyPayment, nextPaymentDue, statusAfterPayment } from '../../src/kernel/domain/schedule.js';
import { DEFAULT_PROTOCOL_SHARE_BPS, splitFromLog, splitPayment, type PaymentSplit } from './fees.js';
import { monthlyMicro } from '../../src/kernel/domain/mrr.js';
import { subscriberKey } from './needs.js';
import { bucketRows, NO_FEES, put, type Fold, type FoldOut, type MerchantState, type MPolicy } from './fold-state.js';

export type { FoldOut, MerchantState, MPolicy, RevenueDelta, SubscriberDelta } from './fold-state.js';

function timeOf(e: TributaryEvent): number | null {
  if (e.blockTime !== null) return e.blockTime;
  return e.name === 'PaymentRecord' ? Number(e.data.timestamp) : null;
}

type Handler<N extends EventName> = (f: Fold, e: TributaryEvent<N>, at: number | null) => void;

const ignore = (): void => undefined;

/** What each event does to the model; a mapped type, so an event the catalog adds fails to compile until it is handled here. */
const HANDLERS: { [N in EventName]: Handler<N> } = {
  ProgramConfigCreated: ({ state, out }, e) => {
    state.protocolShareBps = e.data.protocol_share_bps;
    out.programChanged = true;
  },
  PaymentGatewayCreated: ({ pda, state, out }, e) => {
    // a (re)created gateway starts with the flags of its creation, which no event carries
    const gateway = pda.gateway(e.data.authority);
    state.gateways.set(gateway, { gatewayFeeBps: e.data.gateway_fee_bps, netMode: false, customProtocolShareBps: null });
    out.gatewaysChanged.add(gateway);
  },
  GatewayFeeBpsChanged: ({ state, out }, e) => {
    const s = state.gateways.get(e.data.gateway) ?? NO_FEES;
    state.gateways.set(e.data.gateway, { ...s, gatewayFeeBps: e.data.new_fee_bps });
    out.gatewaysChanged.add(e.data.gateway);
  },
  UserPaymentCreated: (f, e, at) => userPaymentCreated(f, e.data.owner, e.data.token_mint, at),
  PaymentPolicyCreated: (f, e, at) => policyCreated(f, e.data.user_payment, e.data.policy_id, e.data.gateway, e.data.policy_type, at),
  PaymentPolicyStatusChanged: (f, e, at) => {
    const before = f.state.policies.get(e.data.payment_policy);
    if (!before) return;
    const status = e.data.new_status;
    put(f, before, { ...before, status, next_due: dueUnlessDeleted(before, before.policy_type, status) }, at);
  },
  PaymentPolicyDeleted: (f, e, at) => {
    const before = f.state.policies.get(e.data.payment_policy);
    if (!before || before.deleted) return;
    put(f, before, { ...before, deleted: true, next_due: null }, at);
  },
  PaymentRecord: (f, e, at) => payment(f, e, at),
  // the program deletes a user payment only once its policies are deleted (HasActivePolicies):
  // nothing of the model is left to end, and a re-creation finds its owner and mint unchanged
  UserPaymentDeleted: ignore,
  ComposableExecuted: ignore, ComposablePolicyCreated: ignore, ComposablePolicyDeleted: ignore, ComposablePolicyStatusChanged: ignore,
  EmergencyPauseChanged: ignore, GatewayFeeRecipientChanged: ignore, GatewaySignerChanged: ignore, PaymentGatewayDeleted: ignore,
  ProgramAuthorityChanged: ignore, ReferralRewardDistributedRecord: ignore,
};

export function foldMerchant(pda: PdaDeriver, state: MerchantState, events: readonly TributaryEvent[]): FoldOut {
  const out: FoldOut = {
    programChanged: false, gatewaysChanged: new Set(), newUserPayments: new Set(), policiesChanged: new Set(),
    mrrChanged: new Set(), revenue: new Map(), subscribers: new Map(), touched: new Set(), vacated: new Set(),
  };
  const f: Fold = { pda, state, out };
  for (const e of events) {
    // the table pairs each name with its event's handler; TypeScript cannot correlate the two through the union
    const handle = HANDLERS[e.name] as Handler<EventName> | undefined;
    if (!handle) assertNever(e as never);
    handle(f, e, timeOf(e));
  }
  return out;
}

/**
 * A deleted policy is due never. On chain nothing follows a deletion, but the stream may
 * carry a policy's status change or payment after its deletion (an indexer's backfill after
 * a restart, pending entries taken over by a new leader): applied after the deletion, it
 * must leave the row as it would be had it come before, or the live model and its replay
 * differ (the soak found a deleted policy due again live and not in the replay).
 */
function dueUnlessDeleted(before: MPolicy, type: PolicyType, status: MPolicy['status']): string | null {
  return before.deleted ? null : nextPaymentDue(type, status);
}

function userPaymentCreated(f: Fold, ownerKey: string, mint: string, at: number | null): void {
  const { pda, state, out } = f;
  const up = pda.userPayment(ownerKey, mint);
  if (!state.userPayments.has(up)) out.newUserPayments.add(up);
  state.userPayments.set(up, { owner: ownerKey, token_mint: mint });
  // policies indexed before their user payment (a stream out of chain order)
  for (const p of [...state.policies.values()]) {
    if (p.user_payment === up && p.token_mint === null) put(f, p, { ...p, payer: ownerKey, token_mint: mint }, at);
  }
}

function policyCreated(f: Fold, up: string, policyId: number, gateway: string, type: PolicyType, at: number | null): void {
  const { pda, state, out } = f;
  const address = pda.paymentPolicy(up, policyId);
  const owner = state.userPayments.get(up);
  const before = state.policies.get(address);
  const fresh: MPolicy = {
    address, gateway, user_payment: up, payer: owner?.owner ?? null, token_mint: owner?.token_mint ?? null,
    policy_type: type, status: 'Active', deleted: false, ended: false, counted: false, monthly_micro: monthlyMicro(type),
    next_due: nextPaymentDue(type, 'Active'), created_at: at === null ? null : String(at),
  };
  // a re-created address (after a deletion) is a new subscription; a repeat is not
  put(f, before?.deleted === false ? before : undefined, fresh, at);
  if (before?.payer && before.token_mint !== null && before.gateway !== gateway) {
    out.vacated.add(subscriberKey(before.gateway, before.token_mint, before.payer));
  }
}

/**
 * The chain's own split when execute_payment logged one (and the gateway's mode learned
 * from it, for payments that come without); else the formula on the settings followed.
 */
function paymentSplit(f: Fold, e: TributaryEvent<'PaymentRecord'>, gateway: string, amount: bigint): PaymentSplit {
  const { state, out } = f;
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

function payment(f: Fold, e: TributaryEvent<'PaymentRecord'>, at: number | null): void {
  const { state, out } = f;
  const { gateway, token_mint: mint, payer, payment_policy: address } = e.data;
  const amount = BigInt(e.data.amount);
  const split = paymentSplit(f, e, gateway, amount);
  const before = state.policies.get(address);
  if (before) {
    // record_id is the policy's payment_count after this payment
    const charged = applyPayment(before.policy_type, e.data.record_id, { amount, timestamp: BigInt(e.data.timestamp) });
    const status = statusAfterPayment(before.status, charged.completes);
    put(f, before, {
      ...before, payer: before.payer ?? payer, token_mint: before.token_mint ?? mint,
      policy_type: charged.policyType, status, next_due: dueUnlessDeleted(before, charged.policyType, status),
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
  bucketRows(f, gateway, mint, at, (r) => {
    r.gross += split.gross;
    r.gateway_fee += split.gatewayFee;
    r.protocol_fee += split.protocolFee;
    r.net += split.net;
    r.payments += 1;
  });
}
