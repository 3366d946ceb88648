/** Tables of the scheduler and the settler (infra/migrations/0600_scheduler.ts documents them). */
import type { ColumnType, Generated } from 'kysely';

type Big = ColumnType<string, string | number | bigint, string | number | bigint>;
type Time = ColumnType<Date, Date | undefined, Date>;
type OptTime = ColumnType<Date | null, Date | null | undefined, Date | null>;

export type SchedulerState = 'pending' | 'active' | 'stopped';

export interface SchedulerGatewaysTable {
  gateway: string;
  authority: string;
  signer: string;
  secret: string;
  state: SchedulerState;
  source: 'api' | 'fixtures';
  created_at: Time;
  activated_at: OptTime;
  stopped_at: OptTime;
  /** why the signer row does not open (only this gateway waits); null when it does */
  signer_error: ColumnType<string | null, string | null | undefined, string | null>;
}

/** paused: parked, unclaimed, until the policy is seen Active again */
export type IntentStatus = 'pending' | 'sending' | 'executed' | 'dropped' | 'past_due' | 'given_up' | 'paused';

export interface ExecutionIntentsTable {
  id: Generated<string>;
  policy: string;
  gateway: string;
  variant: string;
  tracking_id: Generated<string>;
  due_at: Big;
  /** the policy's payment_count this payment is made at; -1 when not known (judged by due_at alone) */
  payment_index: Generated<number>;
  status: Generated<IntentStatus>;
  attempts: Generated<number>;
  consecutive_failures: Generated<number>;
  dunning_step: Generated<number>;
  next_attempt_at: Time;
  locked_until: OptTime;
  locked_by: ColumnType<string | null, string | null | undefined, string | null>;
  payment_count_before: ColumnType<number | null, number | null | undefined, number | null>;
  signature: ColumnType<string | null, string | null | undefined, string | null>;
  blockhash: ColumnType<string | null, string | null | undefined, string | null>;
  wire: ColumnType<string | null, string | null | undefined, string | null>;
  last_reason: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Time;
  updated_at: Time;
  executed_at: OptTime;
}

export interface ExecutionAttemptsTable {
  id: Generated<string>;
  intent_id: ColumnType<string | null, string | null | undefined, never>;
  charge_id: ColumnType<string | null, string | null | undefined, never>;
  policy: string;
  gateway: string;
  at: Time;
  outcome: string;
  reason_code: ColumnType<string, string | undefined, never>;
  reason: ColumnType<string, string | undefined, never>;
  signature: ColumnType<string | null, string | null | undefined, never>;
  lag_ms: ColumnType<string | null, number | null | undefined, never>;
}

export interface PaygChargesTable {
  id: Generated<string>;
  policy: string;
  gateway: string;
  amount: Big;
  status: ColumnType<'sending' | 'executed' | 'failed', 'sending' | undefined, 'executed' | 'failed'>;
  payment_count_before: number;
  signature: string;
  blockhash: string;
  wire: string;
  record_id: ColumnType<number | null, number | null | undefined, number | null>;
  reason: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Time;
  finished_at: OptTime;
  /** the policy's created_at on chain when the charge was signed (migration 1017); null before it */
  policy_created_at: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface PaygUsageTable {
  request_id: string;
  policy: string;
  gateway: string;
  chunk: Big;
  period_start: Big;
  metered_at: Time;
  charge_id: ColumnType<string | null, string | null | undefined, string | null>;
  unbillable_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** the payer's account (user payment) the chunk draws on; null for rows metered before it was kept */
  user_payment: ColumnType<string | null, string | null | undefined, string | null>;
  /** set while the request is not served yet (a reservation the settler leaves alone); null once served */
  reserved_until: OptTime;
  /** the slices of the period's cap and of the account's position the request holds (commands/x402/meter-slices.ts); null before they were kept */
  period_slice: ColumnType<string | null, string | null | undefined, never>;
  account_slice: ColumnType<string | null, string | null | undefined, never>;
  /** the process that wrote the row and its number there, which that process's served mark covers once answered (payg_served_marks) */
  served_by: ColumnType<string | null, string | null | undefined, never>;
  served_seq: ColumnType<string | null, string | null | undefined, never>;
}

/** One API process's served mark: its rows numbered up to served_through were answered, served unless in `unserved`. */
export interface PaygServedMarksTable {
  node: string;
  served_through: Big;
  unserved: ColumnType<string[], string[] | undefined, string[]>;
  updated_at: Time;
}

export interface ServiceEventsTable {
  id: Generated<string>;
  event_key: string;
  name: string;
  gateway: string;
  policy: string;
  tracking_id: string;
  payload: ColumnType<unknown, string, never>;
  created_at: Time;
}

export interface SchedulerTables {
  scheduler_gateways: SchedulerGatewaysTable;
  execution_intents: ExecutionIntentsTable;
  execution_attempts: ExecutionAttemptsTable;
  payg_charges: PaygChargesTable;
  payg_usage: PaygUsageTable;
  payg_served_marks: PaygServedMarksTable;
  service_events: ServiceEventsTable;
}
