/**
 * A gateway's payment policies from the read model (projections/policies), newest first
 * (the gateway index: gateway, token_mint, created_slot DESC, address DESC), shaped as
 * the one normalized policy object of src/domain/policy.ts.
 */
import type { Selectable } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { PolicyRowTable } from '../../projections/policies/tables.js';
import { normalizePolicy, type NormalizedPolicy, type PolicyFacts } from '../../src/domain/policy.js';
import { asPolicyType, asStatus } from '../../src/domain/policy-type.js';
import { upstreamUnavailable } from '../../src/http/errors.js';

export interface Page { limit: number; offset: number }

export type MerchantPolicies = (gateway: string, page: Page) => Promise<{ items: NormalizedPolicy[]; total: number }>;

export type PolicyRow = Selectable<PolicyRowTable>;

/** A payment_policies row as the facts the normalizer shapes. */
export function factsFromPaymentRow(r: PolicyRow): PolicyFacts {
  return {
    address: r.address,
    kind: 'payment',
    policyId: Number(r.policy_id),
    userPayment: r.user_payment,
    owner: r.owner,
    tokenMint: r.token_mint,
    gateway: r.gateway,
    recipient: r.recipient,
    policyType: asPolicyType(r.policy_type),
    status: asStatus(r.status),
    memo: r.memo,
    totalPaid: r.total_paid,
    paymentCount: r.payment_count,
    lastPaymentAt: r.last_payment_at,
    lastPaymentSignature: r.last_payment_signature,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    composable: null,
  };
}

export function readModelMerchantPolicies(db: Db): MerchantPolicies {
  return async (gateway, page) => {
    const live = db.selectFrom('payment_policies').where('gateway', '=', gateway).where('deleted', '=', false);
    const [rows, count] = await Promise.all([
      live.selectAll()
        .orderBy('created_slot', 'desc')
        .orderBy('address', 'desc')
        .limit(page.limit)
        .offset(page.offset)
        .execute(),
      live.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]).catch(() => { throw upstreamUnavailable('policy read model unavailable'); });
    return { items: rows.map((r) => normalizePolicy(factsFromPaymentRow(r), 'read-model')), total: Number(count.n) };
  };
}
