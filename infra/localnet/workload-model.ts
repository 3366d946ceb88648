/**
 * What the workload remembers between steps: its gateways, user payments and policies
 * with their next due time on the accelerated schedule clock. After each landed
 * transaction the touched policy is re-read from the account store, so the model never
 * drifts from what the program holds.
 */
import type { Keypair, PublicKey } from '@solana/web3.js';
import type { Chain } from './chain.js';
import { decodeAccount } from './program/encoding.js';
import { statusName, type PolicyStatusName, type PolicyType } from './program/model.js';
import { keyString } from './keys.js';

export interface WlGateway {
  address: PublicKey; authority: Keypair; signer: Keypair; feeRecipient: PublicKey;
  /** genesis gateways are never deleted: clients rely on them */
  fixture: boolean; referral: boolean;
  /**
   * Whether the workload executes this gateway's payments itself. The fixture gateways'
   * payments are the service's to execute (its scheduler holds their signers); the
   * workload's own gateways stay self-driven so that the event flow continues.
   */
  selfDriven: boolean;
}

export interface WlUserPayment { address: PublicKey; owner: Keypair; mint: PublicKey; decimals: number }

export interface WlPolicy {
  kind: 'payment' | 'composable';
  address: PublicKey;
  up: WlUserPayment;
  policyId: number;
  gateway: PublicKey;
  /** gateway as base58, kept to avoid re-encoding on every step */
  gatewayKey: string;
  recipient: PublicKey;
  variant: keyof PolicyTypeKeys;
  status: PolicyStatusName;
  /** next time (schedule clock) a charge is allowed, null when never again */
  due: number | null;
}
type PolicyTypeKeys = { Subscription: 1; Milestone: 1; PayAsYouGo: 1; OneTime: 1; UpTo: 1 };

export interface WorkloadModel {
  admin: Keypair;
  gateways: WlGateway[];
  userPayments: Map<string, WlUserPayment>;
  policies: Map<string, WlPolicy>;
  /** the accelerated schedule clock, unix seconds */
  scheduleNow: number;
  /** numbers trackingId memos and generated names */
  counter: number;
  /** a pause is always followed by the unpause on the next step */
  programPaused: boolean;
}

/** When a policy may next be charged on the schedule clock. */
export function nextDue(type: PolicyType, scheduleNow: number): number | null {
  if ('Subscription' in type) return type.Subscription.next_payment_due.toNumber();
  if ('Milestone' in type) {
    const m = type.Milestone;
    return m.current_milestone < m.total_milestones ? (m.milestone_timestamps[m.current_milestone]?.toNumber() ?? null) : null;
  }
  // usage-based policies are drawn on at a third of their period
  if ('PayAsYouGo' in type) return scheduleNow + Math.max(60, Math.floor(type.PayAsYouGo.period_length_seconds.toNumber() / 3));
  if ('OneTime' in type) return type.OneTime.due_date.toNumber();
  return type.UpTo.valid_after.toNumber();
}

/** Re-reads a policy from the store; drops it from the model when it is gone. */
export function refreshPolicy(chain: Chain, model: WorkloadModel, policy: WlPolicy): void {
  const acc = chain.store.get(keyString(policy.address));
  const decoded = acc
    ? policy.kind === 'payment' ? decodeAccount('PaymentPolicy', acc.data) : decodeAccount('ComposablePolicy', acc.data)
    : undefined;
  if (!decoded) {
    model.policies.delete(keyString(policy.address));
    return;
  }
  const status = statusName(decoded.status);
  policy.status = status;
  policy.variant = Object.keys(decoded.policy_type)[0] as WlPolicy['variant'];
  policy.due = status === 'Completed' ? null : nextDue(decoded.policy_type, model.scheduleNow);
}

export function duePolicies(model: WorkloadModel): WlPolicy[] {
  const live = new Set(model.gateways.filter((g) => g.selfDriven).map((g) => keyString(g.address)));
  const out: WlPolicy[] = [];
  for (const p of model.policies.values()) {
    if (p.status === 'Active' && p.due !== null && p.due <= model.scheduleNow && live.has(p.gatewayKey)) out.push(p);
  }
  return out;
}
