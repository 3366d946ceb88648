/**
 * Row types shared by the payment and composable policy read models: the two are folded
 * by the same logic into tables of the same shape (`payment_*` and `composable_*`).
 */
import type { ColumnType } from 'kysely';
import type { Json } from '../../src/kernel/events/codec.js';

type Seconds = ColumnType<string | null, string | number | null, string | number | null>;
type Big = ColumnType<string, string | number, string | number>;

export interface PolicyRowTable {
  address: string;
  policy_id: Big;
  user_payment: string;
  /** from the policy projection's own copy of UserPaymentCreated; null until seen */
  owner: string | null;
  token_mint: string | null;
  gateway: string;
  recipient: string;
  variant: string;
  /** the PolicyType as the codec normalizes it, evolved by every payment */
  policy_type: ColumnType<Json, string, string>;
  memo: Buffer;
  tracking_id: string;
  status: string;
  /** total paid (payment policies) or total input (composable policies) */
  total_paid: Big;
  /** composable policies: total forwarded after fees */
  total_output: ColumnType<string | null, string | number | null, string | number | null>;
  /** composable policies: forward config and validations */
  extra: ColumnType<Json | null, string | null, string | null>;
  payment_count: number;
  last_payment_at: Seconds;
  last_payment_signature: string | null;
  next_payment_due: Seconds;
  created_at: Seconds;
  updated_at: Seconds;
  created_slot: Big;
  created_signature: string;
  deleted: boolean;
  deleted_at: Seconds;
  /**
   * the normalized policy (src/kernel/domain/policy.ts) as JSON text, rendered by the projection
   * at every change (projections/policies/doc.ts: policyDoc). A row written by other code
   * without it is left out of the lists.
   */
  doc: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface PolicyUserPaymentsTable {
  user_payment: string;
  owner: string;
  token_mint: string;
}

export interface StatusHistoryTable {
  event_id: string;
  policy: string;
  old_status: string | null;
  new_status: string;
  /** created | status_changed | payment (a payment that completed the policy) */
  cause: string;
  at: Seconds;
  slot: Big;
  signature: string;
}

export interface PolicyTables {
  payment_policies: PolicyRowTable;
  payment_policy_user_payments: PolicyUserPaymentsTable;
  payment_policy_status_history: StatusHistoryTable;
}

export interface ComposableTables {
  composable_policies: PolicyRowTable;
  composable_policy_user_payments: PolicyUserPaymentsTable;
  composable_policy_status_history: StatusHistoryTable;
}
