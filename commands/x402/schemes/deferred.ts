/**
 * `deferred`: a subscription (the program's Subscription policy). The Payment transaction
 * creates it and pays its first period; a bearer is admitted while it is paid through, plus
 * the requirement's grace (access follows payment). A fixed-term subscription (max_renewals,
 * or auto_renew off) is Completed by its last payment and still serves through the period
 * that payment bought: the grace bounds it.
 */
import { asPolicyType, type PolicyStatus } from '../../../src/kernel/domain/policy-type.js';
import { requirementGrace, type DeferredRequirement } from '../requirements.js';
import { overdueReason } from '../settle.js';
import { grantOf, policyScheme, servingPolicy } from './policy.js';

// a deferred JWT is issued only once the first period is paid on chain (a PaymentRecord)
const serving = (status: PolicyStatus, paymentCount: number): string | undefined => {
  if (status !== 'Active' && status !== 'Completed') return `is ${status}`;
  return paymentCount < 1 ? 'has not paid its first period' : undefined;
};

export const deferredScheme = policyScheme<DeferredRequirement>({
  scheme: 'deferred',
  serving,
  firstPayment: { payment: 'a deferred payment pays its first period', policy: 'a subscription' },

  async admit(ctx, claims, r) {
    const read = await servingPolicy(ctx, claims, r, serving);
    if (typeof read === 'string') return read;
    const overdue = overdueReason(asPolicyType(read.data['policy_type']), ctx.nowSeconds(), requirementGrace(r, ctx.graceSeconds));
    return overdue ? `the payment policy ${claims.policy} ${overdue}` : grantOf(claims, r);
  },
});
