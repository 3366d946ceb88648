/**
 * The stored answer of a policy row: its normalized policy (src/kernel/domain/policy.ts, the
 * same normalizer as chain reads) rendered as JSON text whenever the row changes, so
 * that lists are assembled from text. Pure: a function of the row alone.
 */
import type { Json } from '../../src/kernel/events/codec.js';
import { normalizePolicy, type PolicyFacts, type PolicyKind } from '../../src/kernel/domain/policy.js';
import type { PolicyStatus, PolicyType } from '../../src/kernel/domain/policy-type.js';
import type { Selectable } from 'kysely';
import type { PolicyRowTable } from './tables.js';

/** The columns a policy row has, whether folded in memory or read back from Postgres (tables.ts declares them once). */
export type PolicyRowLike = Omit<Selectable<PolicyRowTable>, 'doc'>;

export function factsFromRow(kind: PolicyKind, r: PolicyRowLike): PolicyFacts {
  const extra = (r.extra ?? {}) as { [k: string]: Json };
  return {
    address: r.address,
    kind,
    policyId: Number(r.policy_id),
    userPayment: r.user_payment,
    owner: r.owner,
    tokenMint: r.token_mint,
    gateway: r.gateway,
    recipient: r.recipient,
    policyType: r.policy_type as PolicyType,
    status: r.status as PolicyStatus,
    memo: r.memo,
    totalPaid: r.total_paid,
    paymentCount: r.payment_count,
    lastPaymentAt: r.last_payment_at,
    lastPaymentSignature: r.last_payment_signature,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    composable: kind === 'composable'
      ? {
        totalOutput: r.total_output ?? '0',
        forwardConfig: extra['forward_config'] ?? null,
        preValidation: extra['pre_validation'] ?? null,
        postValidation: extra['post_validation'] ?? null,
      }
      : null,
  };
}

export function policyDoc(kind: PolicyKind, r: PolicyRowLike): string {
  return JSON.stringify(normalizePolicy(factsFromRow(kind, r), 'read-model'));
}
