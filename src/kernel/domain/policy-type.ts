/**
 * The policy type as the codec normalizes it (events and accounts alike): the IDL's
 * snake_case fields, u64/i64 as decimal strings, `{kind, ...fields}` for the variant,
 * a frequency as its name or `{kind: "Custom", value: "<seconds>"}`.
 */
import type { Json } from '../events/codec.js';
import type { PaymentFrequency, PolicyType as IdlPolicyType } from '../events/event-types.js';

export const POLICY_VARIANTS = ['Subscription', 'Milestone', 'PayAsYouGo', 'OneTime', 'UpTo'] as const;
export type PolicyVariant = (typeof POLICY_VARIANTS)[number];

export const POLICY_STATUSES = ['Active', 'Paused', 'Completed'] as const;
export type PolicyStatus = (typeof POLICY_STATUSES)[number];

// The IDL's shapes, generated (src/kernel/events/event-types.ts); named here for the domain's code.
export type Frequency = PaymentFrequency;
export type PolicyType = IdlPolicyType;
export type SubscriptionType = Extract<PolicyType, { kind: 'Subscription' }>;
export type MilestoneType = Extract<PolicyType, { kind: 'Milestone' }>;
export type PayAsYouGoType = Extract<PolicyType, { kind: 'PayAsYouGo' }>;
export type OneTimeType = Extract<PolicyType, { kind: 'OneTime' }>;
export type UpToType = Extract<PolicyType, { kind: 'UpTo' }>;

export function isPolicyVariant(v: unknown): v is PolicyVariant {
  return typeof v === 'string' && (POLICY_VARIANTS as readonly string[]).includes(v);
}

export function isPolicyStatus(v: unknown): v is PolicyStatus {
  return typeof v === 'string' && (POLICY_STATUSES as readonly string[]).includes(v);
}

/** The policy type of decoded event or account data; throws on a shape the IDL cannot produce. */
export function asPolicyType(v: Json | undefined): PolicyType {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || !isPolicyVariant(v['kind'])) {
    throw new Error('policy_type is not a decoded PolicyType');
  }
  return v as unknown as PolicyType;
}

export function asStatus(v: Json | undefined): PolicyStatus {
  if (!isPolicyStatus(v)) throw new Error(`unknown policy status ${JSON.stringify(v)}`);
  return v;
}
