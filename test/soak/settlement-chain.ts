/**
 * What the chain says about the served gateways' policies, for the soak's settlement
 * drain and checks: every payment policy created on a served gateway (from the ledger's
 * PaymentPolicyCreated: the address is the PDA of its user payment and id), its account
 * as the chain holds it now, and its PaymentRecords in the ledger.
 */
import { readProgramAccounts } from '../../infra/solana/accounts.js';
import { createRpcClient } from '../../infra/solana/rpc-client.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { asPolicyType, asStatus, type PolicyStatus, type PolicyType } from '../../src/kernel/domain/policy-type.js';
import { nextPaymentDue } from '../../src/kernel/domain/schedule.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';

export interface ServedPolicy {
  address: string;
  gateway: string;
  variant: PolicyType['kind'];
  /** the signature of the transaction that created it */
  createdBy: string;
  /**
   * how many policies the ledger created at this address, at any gateway: a user payment deleted
   * and created again restarts its policy ids, so one address may name a policy of an unserved
   * gateway first (its PaymentRecords, by the workload, are under the same address) and a served one next
   */
  incarnations: number;
}

export interface PolicyOnChain { status: PolicyStatus; type: PolicyType; paymentCount: number; due: number | null }

export interface ChainRecord { signature: string; recordId: number; amount: bigint; timestamp: number }

/** The variants the scheduler executes on their schedule (pay-as-you-go is the settler's). */
export const SCHEDULED = new Set<string>(['Subscription', 'Milestone', 'OneTime']);

export function servedPolicies(ledger: readonly TributaryEvent[], gateways: ReadonlySet<string>): ServedPolicy[] {
  const pda = createPdaDeriver(PROGRAM_ID);
  const out: ServedPolicy[] = [];
  const created = new Map<string, number>();
  for (const e of ledger) {
    if (e.name !== 'PaymentPolicyCreated') continue;
    const address = pda.paymentPolicy(e.data.user_payment, e.data.policy_id);
    created.set(address, (created.get(address) ?? 0) + 1);
    if (!gateways.has(e.data.gateway)) continue;
    out.push({ address, gateway: e.data.gateway, variant: asPolicyType(e.data.policy_type).kind, createdBy: e.signature, incarnations: 0 });
  }
  for (const p of out) p.incarnations = created.get(p.address) ?? 1;
  return out;
}

/** PaymentRecords by policy, in record order. */
export function recordsByPolicy(ledger: readonly TributaryEvent[]): Map<string, ChainRecord[]> {
  const out = new Map<string, ChainRecord[]>();
  for (const e of ledger) {
    if (e.name !== 'PaymentRecord') continue;
    const list = out.get(e.data.payment_policy) ?? [];
    list.push({ signature: e.signature, recordId: e.data.record_id, amount: BigInt(e.data.amount), timestamp: Number(e.data.timestamp) });
    out.set(e.data.payment_policy, list);
  }
  for (const l of out.values()) l.sort((a, b) => a.recordId - b.recordId);
  return out;
}

/** A loaded machine's localnet now and then drops a connection: a read is tried a few times. */
async function retried<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await read();
    } catch (err) {
      if (attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/** The accounts of the policies now (a deleted policy is absent). */
export async function readPolicies(rpcUrl: string, addresses: readonly string[]): Promise<Map<string, PolicyOnChain>> {
  const rpc = createRpcClient({ url: rpcUrl, timeoutMs: 10_000 });
  const out = new Map<string, PolicyOnChain>();
  for (let i = 0; i < addresses.length; i += 100) {
    const reads = await retried(() => readProgramAccounts(rpc, addresses.slice(i, i + 100), 'PaymentPolicy', { programId: PROGRAM_ID, commitment: 'confirmed' }));
    for (const r of reads) {
      if (r.kind !== 'found') continue;
      const type = asPolicyType(r.data['policy_type']);
      const status = asStatus(r.data['status']);
      const due = nextPaymentDue(type, status);
      out.set(r.address, { status, type, paymentCount: Number(r.data['payment_count']), due: due === null ? null : Number(due) });
    }
  }
  return out;
}

/** Active policies of a scheduled variant whose due date has come by `cutS` (unix seconds). */
export function dueBy(policies: readonly ServedPolicy[], chain: ReadonlyMap<string, PolicyOnChain>, cutS: number): { policy: ServedPolicy; due: number }[] {
  const out: { policy: ServedPolicy; due: number }[] = [];
  for (const p of policies) {
    const c = chain.get(p.address);
    if (!c || !SCHEDULED.has(p.variant) || c.status !== 'Active' || c.due === null) continue;
    if (c.due <= cutS) out.push({ policy: p, due: c.due });
  }
  return out;
}
