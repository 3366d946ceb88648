/**
 * The policy read model's logic as a pure fold: given the rows a batch touches and the
 * batch's events in stream order, the rows after the batch and the status history it
 * adds. Payment and composable policies share it, told apart by a PolicyKindSpec.
 * Nothing here reads a clock: times come from the events (block time for instructions
 * without a timestamp, the program's clock carried by payment events otherwise).
 */
import type { EventName } from '../../src/events/catalog.js';
import type { EventData, Json } from '../../src/events/codec.js';
import type { TributaryEvent } from '../../src/events/envelope.js';
import { big, field, int, pgText, text } from '../../src/domain/event-data.js';
import { memoFromData, memoToTrackingId } from '../../src/domain/memo.js';
import type { PdaDeriver } from '../../src/domain/pda.js';
import { asPolicyType, asStatus, type PolicyStatus, type PolicyType } from '../../src/domain/policy-type.js';
import { applyPayment, nextPaymentDue, statusAfterPayment } from '../../src/domain/schedule.js';

export interface PolicyKindSpec {
  kind: 'payment' | 'composable';
  memoBytes: number;
  events: { created: EventName; statusChanged: EventName; deleted: EventName; executed: EventName };
  /** the field naming the policy in every event but the creation */
  addressField: string;
  addressOfCreated(pda: PdaDeriver, d: EventData): string;
  /** id of a created policy (the seed of its address) */
  policyIdOfCreated(d: EventData): number;
  /** amounts of one execution: what counts toward totalPaid, and (composable) the output */
  executedAmounts(d: EventData): { input: bigint; output: bigint | null };
  /** variant-independent extras kept as JSON (composable: forward config, validations) */
  extraOfCreated(d: EventData): Json | null;
  tables: { policies: 'payment_policies' | 'composable_policies'; owners: 'payment_policy_user_payments' | 'composable_policy_user_payments'; history: 'payment_policy_status_history' | 'composable_policy_status_history' };
}

export interface PolicyRow {
  address: string;
  policy_id: string;
  user_payment: string;
  owner: string | null;
  token_mint: string | null;
  gateway: string;
  recipient: string;
  variant: string;
  policy_type: PolicyType;
  memo: Buffer;
  tracking_id: string;
  status: PolicyStatus;
  total_paid: string;
  total_output: string | null;
  extra: Json | null;
  payment_count: number;
  last_payment_at: string | null;
  last_payment_signature: string | null;
  next_payment_due: string | null;
  created_at: string | null;
  updated_at: string | null;
  created_slot: string;
  created_signature: string;
  deleted: boolean;
  deleted_at: string | null;
}

export interface HistoryRow {
  event_id: string;
  policy: string;
  old_status: string | null;
  new_status: string;
  cause: 'created' | 'status_changed' | 'payment';
  at: string | null;
  slot: string;
  signature: string;
}

export interface Owner { owner: string; token_mint: string }

export interface FoldState {
  policies: Map<string, PolicyRow>;
  owners: Map<string, Owner>;
}

export interface FoldResult {
  dirty: Set<string>;
  history: HistoryRow[];
  /** user payments first seen in this batch: to remember, and to fill into rows not loaded */
  newOwners: Map<string, Owner>;
}

const seconds = (v: number | bigint | null): string | null => (v === null ? null : v.toString());

/** The policy address an event is about, or undefined when the event is not this model's. */
export function policyAddressOf(spec: PolicyKindSpec, pda: PdaDeriver, e: TributaryEvent): string | undefined {
  const ev = spec.events;
  if (e.name === ev.created) return spec.addressOfCreated(pda, e.data);
  if (e.name === ev.statusChanged || e.name === ev.deleted || e.name === ev.executed) return text(e.data, spec.addressField);
  return undefined;
}

function created(spec: PolicyKindSpec, address: string, e: TributaryEvent, owner: Owner | undefined): PolicyRow {
  const d = e.data;
  const policyType = asPolicyType(field(d, 'policy_type'));
  const memo = memoFromData(d, spec.memoBytes);
  const at = seconds(e.blockTime);
  return {
    address, policy_id: String(spec.policyIdOfCreated(d)), user_payment: text(d, 'user_payment'),
    owner: owner?.owner ?? null, token_mint: owner?.token_mint ?? null,
    gateway: text(d, 'gateway'), recipient: text(d, 'recipient'), variant: policyType.kind, policy_type: policyType,
    memo, tracking_id: pgText(memoToTrackingId(memo)), status: 'Active', total_paid: '0',
    total_output: spec.kind === 'composable' ? '0' : null, extra: spec.extraOfCreated(d), payment_count: 0,
    last_payment_at: null, last_payment_signature: null, next_payment_due: nextPaymentDue(policyType, 'Active'),
    created_at: at, updated_at: at, created_slot: String(e.slot), created_signature: e.signature, deleted: false, deleted_at: null,
  };
}

function history(e: TributaryEvent, policy: string, from: PolicyStatus | null, to: PolicyStatus, cause: HistoryRow['cause'], at: string | null): HistoryRow {
  return { event_id: e.id, policy, old_status: from, new_status: to, cause, at, slot: String(e.slot), signature: e.signature };
}

function executed(spec: PolicyKindSpec, row: PolicyRow, e: TributaryEvent, out: FoldResult): PolicyRow {
  const { input, output } = spec.executedAmounts(e.data);
  const timestamp = big(e.data, 'timestamp');
  const count = row.payment_count + 1;
  const charged = applyPayment(row.policy_type, count, { amount: input, timestamp });
  const status = statusAfterPayment(row.status, charged.completes);
  if (status !== row.status) out.history.push(history(e, row.address, row.status, status, 'payment', timestamp.toString()));
  return {
    ...row,
    policy_type: charged.policyType,
    status,
    total_paid: (BigInt(row.total_paid) + input).toString(),
    total_output: output === null ? row.total_output : (BigInt(row.total_output ?? '0') + output).toString(),
    payment_count: count,
    last_payment_at: timestamp.toString(),
    last_payment_signature: e.signature,
    next_payment_due: nextPaymentDue(charged.policyType, status),
    updated_at: timestamp.toString(),
  };
}

/** Folds a batch into `state` (mutated) and reports what changed. */
export function foldPolicies(spec: PolicyKindSpec, pda: PdaDeriver, state: FoldState, events: readonly TributaryEvent[]): FoldResult {
  const out: FoldResult = { dirty: new Set(), history: [], newOwners: new Map() };
  const put = (row: PolicyRow) => { state.policies.set(row.address, row); out.dirty.add(row.address); };
  for (const e of events) {
    if (e.name === 'UserPaymentCreated') {
      const up = pda.userPayment(text(e.data, 'owner'), text(e.data, 'token_mint'));
      const owner = { owner: text(e.data, 'owner'), token_mint: text(e.data, 'token_mint') };
      if (!state.owners.has(up)) out.newOwners.set(up, owner);
      state.owners.set(up, owner);
      for (const row of state.policies.values()) {
        if (row.user_payment === up && row.owner === null) put({ ...row, ...owner });
      }
      continue;
    }
    const address = policyAddressOf(spec, pda, e);
    if (address === undefined) continue;
    if (e.name === spec.events.created) {
      const row = created(spec, address, e, state.owners.get(text(e.data, 'user_payment')));
      put(row);
      out.history.push(history(e, address, null, 'Active', 'created', row.created_at));
      continue;
    }
    // events about a policy whose creation this model never saw change nothing
    const row = state.policies.get(address);
    if (!row) continue;
    const at = seconds(e.blockTime);
    if (e.name === spec.events.statusChanged) {
      const from = asStatus(field(e.data, 'old_status'));
      const to = asStatus(field(e.data, 'new_status'));
      out.history.push(history(e, address, from, to, 'status_changed', at));
      put({ ...row, status: to, next_payment_due: nextPaymentDue(row.policy_type, to), updated_at: at ?? row.updated_at });
    } else if (e.name === spec.events.deleted) {
      put({ ...row, deleted: true, deleted_at: at, updated_at: at ?? row.updated_at });
    } else {
      put(executed(spec, row, e, out));
    }
  }
  return out;
}

export const paymentPolicySpec: PolicyKindSpec = {
  kind: 'payment',
  memoBytes: 64,
  events: { created: 'PaymentPolicyCreated', statusChanged: 'PaymentPolicyStatusChanged', deleted: 'PaymentPolicyDeleted', executed: 'PaymentRecord' },
  addressField: 'payment_policy',
  // policy_id is the new policy's id, the user payment's created_policies_count + 1 (the
  // event's created_policies_count is the count before the increment): the address seed
  addressOfCreated: (pda, d) => pda.paymentPolicy(text(d, 'user_payment'), int(d, 'policy_id')),
  policyIdOfCreated: (d) => int(d, 'policy_id'),
  executedAmounts: (d) => ({ input: big(d, 'amount'), output: null }),
  extraOfCreated: () => null,
  tables: { policies: 'payment_policies', owners: 'payment_policy_user_payments', history: 'payment_policy_status_history' },
};

export const composablePolicySpec: PolicyKindSpec = {
  kind: 'composable',
  memoBytes: 32,
  events: { created: 'ComposablePolicyCreated', statusChanged: 'ComposablePolicyStatusChanged', deleted: 'ComposablePolicyDeleted', executed: 'ComposableExecuted' },
  addressField: 'composable_policy',
  // the event names its address; it is PDA("composable_policy", user_payment, policy_id)
  addressOfCreated: (_pda, d) => text(d, 'composable_policy'),
  policyIdOfCreated: (d) => int(d, 'policy_id'),
  executedAmounts: (d) => ({ input: big(d, 'input_amount'), output: big(d, 'output_amount') }),
  extraOfCreated: (d) => ({
    forward_config: field(d, 'forward_config'),
    pre_validation: field(d, 'pre_validation'),
    post_validation: field(d, 'post_validation'),
    has_pre_validation_pda: field(d, 'has_pre_validation_pda'),
    has_post_validation_pda: field(d, 'has_post_validation_pda'),
  }),
  tables: { policies: 'composable_policies', owners: 'composable_policy_user_payments', history: 'composable_policy_status_history' },
};
