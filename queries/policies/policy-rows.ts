/**
 * Reads of the policy read models (payment_policies, composable_policies): lists by the
 * resolved filters, one policy by address, the owner and mint of a user payment. Every
 * list is newest first (creation slot, then address) and leaves out deleted policies,
 * whose accounts are closed on chain; each filter combination has an index (migration 0100).
 */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { PolicyRowTable } from '../../projections/policies/tables.js';
import type { PolicyFacts, PolicyKind } from '../../src/domain/policy.js';
import type { PolicyStatus, PolicyType } from '../../src/domain/policy-type.js';
import type { Json } from '../../src/events/codec.js';
import type { PolicyFilter } from './filters.js';

export type PolicyRow = Selectable<PolicyRowTable>;
export interface Page { limit: number; offset: number }

const TABLE = { payment: 'payment_policies', composable: 'composable_policies' } as const;

export function rowToFacts(kind: PolicyKind, r: PolicyRow): PolicyFacts {
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
    policyType: r.policy_type as unknown as PolicyType,
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

export async function listPolicies(db: Db, kind: PolicyKind, f: PolicyFilter, page: Page): Promise<PolicyRow[]> {
  let q = db.selectFrom(TABLE[kind]).selectAll()
    // a literal predicate, so the partial indexes (WHERE NOT deleted) apply under generic plans too
    .where(sql<boolean>`NOT deleted`)
    .where('token_mint', '=', f.tokenMint);
  if (f.gateway !== undefined) q = q.where('gateway', '=', f.gateway);
  if (f.recipient !== undefined) q = q.where('recipient', '=', f.recipient);
  if (f.owner !== undefined) q = q.where('owner', '=', f.owner);
  for (const up of f.userPayments) q = q.where('user_payment', '=', up);
  if (f.memo !== undefined) q = q.where('memo', '=', f.memo);
  if (f.subscriptionsOnly) q = q.where('variant', '=', 'Subscription');
  return q.orderBy('created_slot', 'desc').orderBy('address', 'desc').limit(page.limit).offset(page.offset).execute();
}

/** The read model's row of a policy, deleted or not; undefined when it never saw one. */
export async function findPolicy(db: Db, kind: PolicyKind, address: string): Promise<PolicyRow | undefined> {
  return db.selectFrom(TABLE[kind]).selectAll().where('address', '=', address).executeTakeFirst();
}

/** Owner and mint of a user payment, from the user payments read model. */
export async function findUserPayment(db: Db, address: string): Promise<{ owner: string; token_mint: string } | undefined> {
  return db.selectFrom('user_payments').select(['owner', 'token_mint']).where('address', '=', address).executeTakeFirst();
}
