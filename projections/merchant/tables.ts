import type { ColumnType } from 'kysely';
import type { PolicyType } from '../../src/kernel/domain/policy-type.js';

type Big = ColumnType<string, string | number | bigint, string | number | bigint>;
type OptBig = ColumnType<string | null, string | number | bigint | null, string | number | bigint | null>;

/** The program config's protocol share (one row, id 1), from ProgramConfigCreated. */
export interface MerchantProgramTable {
  id: number;
  protocol_share_bps: number;
}

/** Each gateway's fee settings as its events tell them. */
export interface MerchantGatewaysTable {
  gateway: string;
  fee_bps: number;
  /** flag bit1, as the last payment with a logged split showed it (fees.ts) */
  net_mode: boolean;
  custom_protocol_share_bps: number | null;
}

export interface MerchantUserPaymentsTable {
  user_payment: string;
  owner: string;
  token_mint: string;
}

export interface MerchantPoliciesTable {
  address: string;
  gateway: string;
  user_payment: string;
  /** the user payment's owner and mint; null until the model has seen them */
  payer: string | null;
  token_mint: string | null;
  policy_type: ColumnType<PolicyType, string, string>;
  /** Active | Paused | Completed */
  status: string;
  deleted: boolean;
  /** counted once among ended subscriptions (deleted or completed) */
  ended: boolean;
  /** contributes monthly_micro to its gateway and mint's MRR now */
  counted: boolean;
  monthly_micro: Big;
  next_due: OptBig;
  created_at: OptBig;
}

export interface MerchantSubscribersTable {
  gateway: string;
  token_mint: string;
  payer: string;
  /** addresses of the payer's policies on this gateway and mint, not deleted */
  policies: ColumnType<string[], string[] | undefined, string[]>;
  active_policies: ColumnType<number, number | undefined, number>;
  /** active (a policy Active) | paused (none Active, one Paused) | ended */
  status: ColumnType<string, string | undefined, string>;
  /** what the payer paid in all (gross: fees included in net mode), base units */
  total_paid: Big;
  payments: Big;
  first_payment_at: OptBig;
  last_payment_at: OptBig;
  /** earliest next due date of its Active policies */
  next_due: ColumnType<string | null, string | number | null | undefined, string | number | null>;
}

/** The running MRR of a gateway and mint, in micro base units (src/kernel/domain/mrr.ts). */
export interface MerchantMrrTable {
  gateway: string;
  token_mint: string;
  mrr_micro: Big;
}

export interface MerchantRevenueTable {
  gateway: string;
  token_mint: string;
  /** day | week | month */
  bucket: string;
  /** unix seconds of the bucket's start (UTC) */
  bucket_start: Big;
  gross: Big;
  gateway_fee: Big;
  protocol_fee: Big;
  net: Big;
  payments: Big;
  new_subscriptions: number;
  ended_subscriptions: number;
  /** MRR after the bucket's last event, micro base units */
  mrr_micro: Big;
}

export interface MerchantTables {
  merchant_program: MerchantProgramTable;
  merchant_gateways: MerchantGatewaysTable;
  merchant_user_payments: MerchantUserPaymentsTable;
  merchant_policies: MerchantPoliciesTable;
  merchant_subscribers: MerchantSubscribersTable;
  merchant_mrr: MerchantMrrTable;
  merchant_revenue: MerchantRevenueTable;
}
