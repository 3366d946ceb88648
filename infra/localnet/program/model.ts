/**
 * The program's accounts in the shape Anchor's BorshCoder encodes: snake_case IDL field
 * names, PublicKey for pubkeys, BN for 64-bit integers, number[] for byte arrays and
 * `{ Variant: { ...fields } }` for enums. State is kept in this shape so that encoding an
 * account or an event is a single coder call.
 */
import type { PublicKey } from '@solana/web3.js';
import BN from 'bn.js';

export type Unit = Record<string, never>;
export type PolicyStatus = { Active: Unit } | { Paused: Unit } | { Completed: Unit };
export type PolicyStatusName = 'Active' | 'Paused' | 'Completed';

export type PaymentFrequency =
  | { Daily: Unit } | { Weekly: Unit } | { Monthly: Unit } | { Quarterly: Unit }
  | { SemiAnnually: Unit } | { Annually: Unit } | { Custom: { 0: BN } };

export interface SubscriptionFields {
  amount: BN; auto_renew: boolean; max_renewals: number | null;
  payment_frequency: PaymentFrequency; next_payment_due: BN; padding: number[];
}
export interface MilestoneFields {
  milestone_amounts: BN[]; milestone_timestamps: BN[]; current_milestone: number;
  release_condition: number; total_milestones: number; escrow_amount: BN; padding: number[];
}
export interface PayAsYouGoFields {
  max_amount_per_period: BN; max_chunk_amount: BN; period_length_seconds: BN;
  current_period_start: BN; current_period_total: BN; expiry_date: BN | null; padding: number[];
}
export interface OneTimeFields { amount: BN; due_date: BN; expiry_date: BN | null; padding: number[] }
export interface UpToFields { max_amount: BN; valid_after: BN; deadline: BN; padding: number[] }

export type PolicyType =
  | { Subscription: SubscriptionFields } | { Milestone: MilestoneFields }
  | { PayAsYouGo: PayAsYouGoFields } | { OneTime: OneTimeFields } | { UpTo: UpToFields };

export interface ProgramConfig {
  admin: PublicKey; fee_recipient: PublicKey; protocol_share_bps: number; _deprecated: number;
  emergency_pause: boolean; bump: number; padding: number[];
}

export interface PaymentGateway {
  authority: PublicKey; fee_recipient: PublicKey; gateway_fee_bps: number; is_active: boolean;
  padding1: BN; created_at: BN; bump: number; name: number[]; url: number[]; signer: PublicKey;
  feature_flags: number; referral_allocation_bps: number; referral_tiers_bps: number[];
  custom_protocol_share_bps: number; scheduler_share_bps: number; padding: number[];
}

export interface UserPayment {
  owner: PublicKey; token_account: PublicKey; token_mint: PublicKey; active_policies_count: number;
  created_at: BN; updated_at: BN; is_active: boolean; bump: number; created_policies_count: number;
  rent_payer: PublicKey; active_composable_count: number; created_composable_count: number; padding: number[];
}

export interface PaymentPolicy {
  user_payment: PublicKey; recipient: PublicKey; gateway: PublicKey; policy_type: PolicyType;
  status: PolicyStatus; memo: number[]; total_paid: BN; payment_count: number; created_at: BN;
  updated_at: BN; policy_id: number; bump: number; rent_payer: PublicKey; padding: number[];
}

export type ValidationSpec = { Disabled: Unit } | { ProgramCall: { program_id: PublicKey } } | { Inline: { reserved: number } };

export interface ForwardConfig {
  instruction_constraint: {
    program_id: PublicKey; num_data_checks: number;
    data_checks: { offset: number; length: number; expected: number[] }[];
    num_pinned_accounts: number; pinned_accounts: { index: number; pubkey: PublicKey }[];
  };
  input_mint: PublicKey; output_mint: PublicKey; forward_flags: number;
}

export interface ComposablePolicy {
  bump: number; user_payment: PublicKey; gateway: PublicKey; status: PolicyStatus; rent_payer: PublicKey;
  policy_type: PolicyType; forward_config: ForwardConfig; pre_validation: ValidationSpec;
  post_validation: ValidationSpec; memo: number[]; recipient: PublicKey; total_input: BN;
  total_output: BN; payment_count: number; policy_id: number; created_at: BN; updated_at: BN; padding: number[];
}

export interface AccountTypes {
  ProgramConfig: ProgramConfig;
  PaymentGateway: PaymentGateway;
  UserPayment: UserPayment;
  PaymentPolicy: PaymentPolicy;
  ComposablePolicy: ComposablePolicy;
}
export type AccountKind = keyof AccountTypes;

export const zeros = (n: number): number[] => new Array<number>(n).fill(0);
export const bn = (n: number | string | bigint): BN => new BN(n.toString());
export const status = (s: PolicyStatusName): PolicyStatus => ({ [s]: {} }) as PolicyStatus;
export const statusName = (s: PolicyStatus): PolicyStatusName => Object.keys(s)[0] as PolicyStatusName;

/** Zero-padded UTF-8 of a fixed size, as the program stores names and memos. */
export function fixedText(text: string, size: number): number[] {
  const out = zeros(size);
  const raw = Buffer.from(text, 'utf8');
  for (let i = 0; i < Math.min(size, raw.length); i += 1) out[i] = raw[i] ?? 0;
  return out;
}

/** Seconds of one period of a frequency (Monthly = 30 days, as the program counts). */
export function frequencySeconds(f: PaymentFrequency): number {
  if ('Custom' in f) return f.Custom[0].toNumber();
  if ('Daily' in f) return 86_400;
  if ('Weekly' in f) return 7 * 86_400;
  if ('Monthly' in f) return 30 * 86_400;
  if ('Quarterly' in f) return 90 * 86_400;
  if ('SemiAnnually' in f) return 180 * 86_400;
  return 365 * 86_400;
}
