/**
 * The policy type as the codec normalizes it (events and accounts alike): the IDL's
 * snake_case fields, u64/i64 as decimal strings, `{kind, ...fields}` for the variant,
 * a frequency as its name or `{kind: "Custom", value: "<seconds>"}`.
 */
import type { Json } from '../events/codec.js';

export const POLICY_VARIANTS = ['Subscription', 'Milestone', 'PayAsYouGo', 'OneTime', 'UpTo'] as const;
export type PolicyVariant = (typeof POLICY_VARIANTS)[number];

export const POLICY_STATUSES = ['Active', 'Paused', 'Completed'] as const;
export type PolicyStatus = (typeof POLICY_STATUSES)[number];

export type Frequency = 'Daily' | 'Weekly' | 'Monthly' | 'Quarterly' | 'SemiAnnually' | 'Annually' | { kind: 'Custom'; value: string };

export interface SubscriptionType {
  kind: 'Subscription'; amount: string; auto_renew: boolean; max_renewals: number | null;
  payment_frequency: Frequency; next_payment_due: string;
}
export interface MilestoneType {
  kind: 'Milestone'; milestone_amounts: string[]; milestone_timestamps: string[]; current_milestone: number;
  release_condition: number; total_milestones: number; escrow_amount: string;
}
export interface PayAsYouGoType {
  kind: 'PayAsYouGo'; max_amount_per_period: string; max_chunk_amount: string; period_length_seconds: string;
  current_period_start: string; current_period_total: string; expiry_date: string | null;
}
export interface OneTimeType { kind: 'OneTime'; amount: string; due_date: string; expiry_date: string | null }
export interface UpToType { kind: 'UpTo'; max_amount: string; valid_after: string; deadline: string }

export type PolicyType = SubscriptionType | MilestoneType | PayAsYouGoType | OneTimeType | UpToType;

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
