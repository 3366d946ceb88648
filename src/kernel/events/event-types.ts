// Generated from src/kernel/idl/tributary.json by infra/scripts/generate-event-types.ts. Do not edit:
// run `node --import tsx infra/scripts/generate-event-types.ts` after changing the IDL.
// The JSON form of every program event as src/kernel/events/codec.ts decodes it.

/** A public key, base58. */
export type Pubkey = string;
/** A u64/i64/u128/i128 as a decimal string (JSON numbers lose precision past 2^53). */
export type DecimalString = string;
/** Raw bytes, lowercase hex. */
export type HexString = string;

/** What execute_payment moved, as its log line reports it (base units, decimal strings). */
export type FeeSplit = {
  recipient_amount: DecimalString;
  /** what the gateway fee account kept (the scheduler cut not included) */
  gateway_residual: DecimalString;
  /** paid to a permissionless caller; 0 when the gateway signer called (merged into its fee account) */
  scheduler_cut: DecimalString;
  protocol_cut: DecimalString;
};

export type ComposableExecuted = {
  composable_policy: Pubkey;
  gateway: Pubkey;
  target_program: Pubkey;
  input_amount: DecimalString;
  output_amount: DecimalString;
  gateway_fee: DecimalString;
  protocol_fee: DecimalString;
  recipient: Pubkey;
  timestamp: DecimalString;
  record_id: number;
};

export type ComposablePolicyCreated = {
  composable_policy: Pubkey;
  user_payment: Pubkey;
  gateway: Pubkey;
  recipient: Pubkey;
  policy_id: number;
  policy_type: PolicyType;
  memo: string;
  memo_hex?: HexString;
  forward_config: ForwardConfig;
  pre_validation: ValidationSpec;
  post_validation: ValidationSpec;
  has_pre_validation_pda: boolean;
  has_post_validation_pda: boolean;
};

export type ComposablePolicyDeleted = {
  composable_policy: Pubkey;
  user_payment: Pubkey;
  policy_id: number;
};

export type ComposablePolicyStatusChanged = {
  composable_policy: Pubkey;
  old_status: PolicyStatus;
  new_status: PolicyStatus;
};

export type EmergencyPauseChanged = {
  admin: Pubkey;
  was_paused: boolean;
  is_paused: boolean;
};

export type GatewayFeeBpsChanged = {
  gateway: Pubkey;
  old_fee_bps: number;
  new_fee_bps: number;
};

export type GatewayFeeRecipientChanged = {
  gateway: Pubkey;
  old_fee_recipient: Pubkey;
  new_fee_recipient: Pubkey;
};

export type GatewaySignerChanged = {
  gateway: Pubkey;
  old_signer: Pubkey;
  new_signer: Pubkey;
};

export type PaymentGatewayCreated = {
  authority: Pubkey;
  fee_recipient: Pubkey;
  gateway_fee_bps: number;
  name: string;
  url: string;
};

export type PaymentGatewayDeleted = {
  gateway: Pubkey;
  authority: Pubkey;
  name: string;
};

export type PaymentPolicyCreated = {
  user_payment: Pubkey;
  recipient: Pubkey;
  gateway: Pubkey;
  policy_id: number;
  policy_type: PolicyType;
  memo: string;
  memo_hex?: HexString;
  created_policies_count: number;
};

export type PaymentPolicyDeleted = {
  payment_policy: Pubkey;
  owner: Pubkey;
  policy_id: number;
};

export type PaymentPolicyStatusChanged = {
  payment_policy: Pubkey;
  old_status: PolicyStatus;
  new_status: PolicyStatus;
};

export type PaymentRecord = {
  payment_policy: Pubkey;
  gateway: Pubkey;
  amount: DecimalString;
  timestamp: DecimalString;
  memo: string;
  memo_hex?: HexString;
  record_id: number;
  payer: Pubkey;
  recipient: Pubkey;
  token_mint: Pubkey;
  /** the split execute_payment logged (`Payment executed: …`); absent when it logged none */
  fee_split?: FeeSplit;
};

export type ProgramAuthorityChanged = {
  old_admin: Pubkey;
  new_admin: Pubkey;
};

export type ProgramConfigCreated = {
  admin: Pubkey;
  fee_recipient: Pubkey;
  protocol_share_bps: number;
};

export type ReferralRewardDistributedRecord = {
  payment_policy: Pubkey;
  gateway: Pubkey;
  payment_amount: DecimalString;
  timestamp: DecimalString;
  rewards: (ReferralReward | null)[];
};

export type UserPaymentCreated = {
  owner: Pubkey;
  token_account: Pubkey;
  token_mint: Pubkey;
};

export type UserPaymentDeleted = {
  user_payment: Pubkey;
  owner: Pubkey;
  rent_payer: Pubkey;
};

export type PolicyType =
  | { kind: 'Subscription'; amount: DecimalString; auto_renew: boolean; max_renewals: number | null; payment_frequency: PaymentFrequency; next_payment_due: DecimalString; }
  | { kind: 'Milestone'; milestone_amounts: DecimalString[]; milestone_timestamps: DecimalString[]; current_milestone: number; release_condition: number; total_milestones: number; escrow_amount: DecimalString; }
  | { kind: 'PayAsYouGo'; max_amount_per_period: DecimalString; max_chunk_amount: DecimalString; period_length_seconds: DecimalString; current_period_start: DecimalString; current_period_total: DecimalString; expiry_date: DecimalString | null; }
  | { kind: 'OneTime'; amount: DecimalString; due_date: DecimalString; expiry_date: DecimalString | null; }
  | { kind: 'UpTo'; max_amount: DecimalString; valid_after: DecimalString; deadline: DecimalString; };

export type ForwardConfig = {
  instruction_constraint: InstructionConstraint;
  input_mint: Pubkey;
  output_mint: Pubkey;
  forward_flags: number;
};

export type ValidationSpec =
  | 'Disabled'
  | { kind: 'ProgramCall'; program_id: Pubkey; }
  | { kind: 'Inline'; reserved: number; };

export type PolicyStatus =
  | 'Active'
  | 'Paused'
  | 'Completed';

export type ReferralReward = {
  pubkey: Pubkey;
  reward: DecimalString;
};

export type PaymentFrequency =
  | 'Daily'
  | 'Weekly'
  | 'Monthly'
  | 'Quarterly'
  | 'SemiAnnually'
  | 'Annually'
  | { kind: 'Custom'; value: DecimalString };

export type InstructionConstraint = {
  program_id: Pubkey;
  num_data_checks: number;
  data_checks: ByteRangeCheck[];
  num_pinned_accounts: number;
  pinned_accounts: PinnedAccount[];
};

export type ByteRangeCheck = {
  offset: number;
  length: number;
  expected: number[];
};

export type PinnedAccount = {
  index: number;
  pubkey: Pubkey;
};

/** Each event name with the type of its data. */
export interface EventDataMap {
  ComposableExecuted: ComposableExecuted;
  ComposablePolicyCreated: ComposablePolicyCreated;
  ComposablePolicyDeleted: ComposablePolicyDeleted;
  ComposablePolicyStatusChanged: ComposablePolicyStatusChanged;
  EmergencyPauseChanged: EmergencyPauseChanged;
  GatewayFeeBpsChanged: GatewayFeeBpsChanged;
  GatewayFeeRecipientChanged: GatewayFeeRecipientChanged;
  GatewaySignerChanged: GatewaySignerChanged;
  PaymentGatewayCreated: PaymentGatewayCreated;
  PaymentGatewayDeleted: PaymentGatewayDeleted;
  PaymentPolicyCreated: PaymentPolicyCreated;
  PaymentPolicyDeleted: PaymentPolicyDeleted;
  PaymentPolicyStatusChanged: PaymentPolicyStatusChanged;
  PaymentRecord: PaymentRecord;
  ProgramAuthorityChanged: ProgramAuthorityChanged;
  ProgramConfigCreated: ProgramConfigCreated;
  ReferralRewardDistributedRecord: ReferralRewardDistributedRecord;
  UserPaymentCreated: UserPaymentCreated;
  UserPaymentDeleted: UserPaymentDeleted;
}

export const GENERATED_EVENT_NAMES = [
  'ComposableExecuted',
  'ComposablePolicyCreated',
  'ComposablePolicyDeleted',
  'ComposablePolicyStatusChanged',
  'EmergencyPauseChanged',
  'GatewayFeeBpsChanged',
  'GatewayFeeRecipientChanged',
  'GatewaySignerChanged',
  'PaymentGatewayCreated',
  'PaymentGatewayDeleted',
  'PaymentPolicyCreated',
  'PaymentPolicyDeleted',
  'PaymentPolicyStatusChanged',
  'PaymentRecord',
  'ProgramAuthorityChanged',
  'ProgramConfigCreated',
  'ReferralRewardDistributedRecord',
  'UserPaymentCreated',
  'UserPaymentDeleted',
] as const;
