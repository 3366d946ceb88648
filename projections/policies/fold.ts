/**
 * The policy read model's logic as a pure fold: given the rows a batch touches and the
 * batch's events in stream order, the rows after the batch and the status history it
 * adds. Payment and composable policies share it, told apart by a PolicyKindSpec.
 * Nothing here reads a clock: times come from the events (block time for instructions
 * without a timestamp, the program's clock carried by payment events otherwise).
 */
import type { Insertable, Selectable } from 'kysely';
import type { Json } from '../../src/kernel/events/codec.js';
import type { PolicyRowTable, StatusHistoryTable } from './tables.js';
import { assertNever, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import { pgText } from '../../src/kernel/domain/event-data.js';
import { memoToTrackingId } from '../../src/kernel/domain/memo.js';
import type { PdaDeriver } from '../../src/kernel/domain/pda.js';
import { asPolicyType, asStatus, type PolicyStatus, type PolicyType } from '../../src/kernel/domain/policy-type.js';
import { applyPayment, nextPaymentDue, statusAfterPayment } from '../../src/kernel/domain/schedule.js';

/** What one event means to a policy model: its creation, a status change, its deletion, or one execution. */
export type PolicyChange =
  | { kind: 'created'; address: string; userPayment: string; policyId: number; gateway: string; recipient: string; policyType: Json; memo: Buffer; extra: Json | null }
  | { kind: 'status'; address: string; from: Json; to: Json }
  | { kind: 'deleted'; address: string }
  /** input counts toward totalPaid; output is the composable policy's forwarded amount */
  | { kind: 'executed'; address: string; input: bigint; output: bigint | null; timestamp: bigint };

export interface PolicyKindSpec {
  kind: 'payment' | 'composable';
  /** this model's reading of an event; undefined for the events that are not about its policies */
  changeOf(pda: PdaDeriver, e: TributaryEvent): PolicyChange | undefined;
  tables: { policies: 'payment_policies' | 'composable_policies'; owners: 'payment_policy_user_payments' | 'composable_policy_user_payments'; history: 'payment_policy_status_history' | 'composable_policy_status_history' };
}

/** A policy row as the fold keeps it: the table's row (tables.ts) with its policy type and status typed. */
export type PolicyRow = Omit<Selectable<PolicyRowTable>, 'doc' | 'policy_type' | 'status'> & { policy_type: PolicyType; status: PolicyStatus };

/** A status history row as the fold adds it. */
export type HistoryRow = Omit<Insertable<StatusHistoryTable>, 'cause'> & { cause: 'created' | 'status_changed' | 'payment'; at: string | null; slot: string };

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

function created(spec: PolicyKindSpec, c: Extract<PolicyChange, { kind: 'created' }>, e: TributaryEvent, owner: Owner | undefined): PolicyRow {
  const policyType = asPolicyType(c.policyType);
  const at = seconds(e.blockTime);
  return {
    address: c.address, policy_id: String(c.policyId), user_payment: c.userPayment,
    owner: owner?.owner ?? null, token_mint: owner?.token_mint ?? null,
    gateway: c.gateway, recipient: c.recipient, variant: policyType.kind, policy_type: policyType,
    memo: c.memo, tracking_id: pgText(memoToTrackingId(c.memo)), status: 'Active', total_paid: '0',
    total_output: spec.kind === 'composable' ? '0' : null, extra: c.extra, payment_count: 0,
    last_payment_at: null, last_payment_signature: null, next_payment_due: nextPaymentDue(policyType, 'Active'),
    created_at: at, updated_at: at, created_slot: String(e.slot), created_signature: e.signature, deleted: false, deleted_at: null,
  };
}

function history(e: TributaryEvent, policy: string, from: PolicyStatus | null, to: PolicyStatus, cause: HistoryRow['cause'], at: string | null): HistoryRow {
  return { event_id: e.id, policy, old_status: from, new_status: to, cause, at, slot: String(e.slot), signature: e.signature };
}

function executed(row: PolicyRow, c: Extract<PolicyChange, { kind: 'executed' }>, e: TributaryEvent, out: FoldResult): PolicyRow {
  const { input, output, timestamp } = c;
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
      const owner = { owner: e.data.owner, token_mint: e.data.token_mint };
      const up = pda.userPayment(owner.owner, owner.token_mint);
      if (!state.owners.has(up)) out.newOwners.set(up, owner);
      state.owners.set(up, owner);
      for (const row of state.policies.values()) {
        if (row.user_payment === up && row.owner === null) put({ ...row, ...owner });
      }
      continue;
    }
    const c = spec.changeOf(pda, e);
    if (c === undefined) continue;
    if (c.kind === 'created') {
      const row = created(spec, c, e, state.owners.get(c.userPayment));
      put(row);
      out.history.push(history(e, c.address, null, 'Active', 'created', row.created_at));
      continue;
    }
    // events about a policy whose creation this model never saw change nothing
    const row = state.policies.get(c.address);
    if (!row) continue;
    const at = seconds(e.blockTime);
    switch (c.kind) {
      case 'status': {
        const from = asStatus(c.from);
        const to = asStatus(c.to);
        out.history.push(history(e, c.address, from, to, 'status_changed', at));
        put({ ...row, status: to, next_payment_due: nextPaymentDue(row.policy_type, to), updated_at: at ?? row.updated_at });
        break;
      }
      case 'deleted':
        put({ ...row, deleted: true, deleted_at: at, updated_at: at ?? row.updated_at });
        break;
      case 'executed':
        put(executed(row, c, e, out));
        break;
      default:
        assertNever(c);
    }
  }
  return out;
}
