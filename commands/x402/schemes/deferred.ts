/**
 * `deferred`: a subscription (the program's Subscription policy). The Payment transaction
 * creates it and pays its first period; a bearer is admitted while it is paid through, plus
 * the requirement's grace (access follows payment). A fixed-term subscription (max_renewals,
 * or auto_renew off) is Completed by its last payment and still serves through the period
 * that payment bought: the grace bounds it. So does one its payer paused.
 */
import { subscriptionGraceSeconds } from '../../../src/kernel/domain/grace.js';
import { asPolicyType, type PolicyStatus, type PolicyType } from '../../../src/kernel/domain/policy-type.js';
import { frequencyText, hashId, parseFrequency, RequirementError, type DeferredRequirement } from '../requirements.js';
import { cap, paymentsPerYear } from '../allowance.js';
import { policyTypeArgs } from '../program.js';
import { overdueReason } from '../settle.js';
import { DUE_SKEW_SECONDS, grantOf, policyScheme, servingPolicy } from './policy.js';

// a deferred JWT is issued only once the first period is paid on chain (a PaymentRecord)
const serving = (status: PolicyStatus, paymentCount: number): string | undefined => {
  if (status !== 'Active' && status !== 'Completed') return `is ${status}`;
  return paymentCount < 1 ? 'has not paid its first period' : undefined;
};
/**
 * A bearer of a subscription its payer paused is served through the period already paid (and
 * its grace), as a Completed one is: the pause stops the next charge, not what was paid for.
 * Nothing is charged while it is paused, so the grace then ends its access. A paused policy is
 * still not offered as an existing one to pay with (`serving`).
 */
const servingBearer = (status: PolicyStatus, paymentCount: number): string | undefined =>
  serving(status === 'Paused' ? 'Active' : status, paymentCount);

function terms(r: DeferredRequirement, type: PolicyType, paid: number): string | undefined {
  if (type.kind !== 'Subscription') return `the policy type is ${type.kind}; scheme deferred needs a Subscription`;
  if (type.amount !== r.amount.toString()) return `the subscription amount is ${type.amount}; the requirement asks ${r.amount}`;
  const f = typeof type.payment_frequency === 'string' ? type.payment_frequency : `Custom:${type.payment_frequency.value}`;
  if (f !== frequencyText(r.paymentFrequency)) return `the payment frequency is ${f}; the requirement asks ${frequencyText(r.paymentFrequency)}`;
  if (type.auto_renew !== r.autoRenew) return `auto_renew is ${type.auto_renew}; the requirement asks ${r.autoRenew}`;
  // each payment takes one off max_renewals
  const renewals = type.max_renewals === null ? null : type.max_renewals + paid;
  if (renewals !== r.maxRenewals) return `max_renewals is ${String(renewals)}; the requirement asks ${String(r.maxRenewals)}`;
  return undefined;
}

const grace = (r: DeferredRequirement, capSeconds: number): number => Math.min(r.gracePeriodSeconds, capSeconds);

export const deferredScheme = policyScheme<DeferredRequirement>({
  scheme: 'deferred',
  serving,
  terms,
  grace,
  firstPayment: { payment: 'a deferred payment pays its first period', policy: 'a subscription' },

  requirement(input, base, head, graceCapSeconds) {
    const paymentFrequency = parseFrequency(input.paymentFrequency ?? 'Monthly');
    const autoRenew = input.autoRenew ?? true;
    const maxRenewals = input.maxRenewals ?? null;
    if (maxRenewals !== null && (!Number.isInteger(maxRenewals) || maxRenewals < 1 || maxRenewals > 0xffffffff)) {
      throw new RequirementError('maxRenewals must be null or a positive u32');
    }
    const declared = input.gracePeriodSeconds;
    if (declared !== undefined && (!Number.isSafeInteger(declared) || declared < 0)) throw new RequirementError('gracePeriodSeconds must be a non-negative integer');
    const gracePeriodSeconds = subscriptionGraceSeconds(paymentFrequency, graceCapSeconds, declared);
    const id = hashId([...head, frequencyText(paymentFrequency), autoRenew, maxRenewals]);
    return { ...base, id, scheme: 'deferred', paymentFrequency, autoRenew, maxRenewals, gracePeriodSeconds };
  },

  allowance: (r) => ({
    amount: cap(r.amount * (r.maxRenewals !== null ? BigInt(r.maxRenewals) : paymentsPerYear(r.paymentFrequency))),
    formula: 'SDK formula: amount × renewals or payments per year',
  }),

  policyType: (r) => policyTypeArgs.subscription(r),

  accepted: (r) => ({ paymentFrequency: frequencyText(r.paymentFrequency), autoRenew: r.autoRenew, maxRenewals: r.maxRenewals, gracePeriodSeconds: r.gracePeriodSeconds }),

  // a subscription must fall due now: a due date far ahead would buy access without paying until then
  newPolicy(_r, type, nowSeconds) {
    if (type.kind === 'Subscription' && BigInt(type.next_payment_due) > BigInt(nowSeconds + DUE_SKEW_SECONDS)) {
      return `the first payment falls due at ${type.next_payment_due}, not now`;
    }
    return undefined;
  },

  async admit(ctx, claims, r) {
    const read = await servingPolicy(ctx, claims, r, { serving: servingBearer, terms });
    if (typeof read === 'string') return read;
    const overdue = overdueReason(asPolicyType(read.data['policy_type']), ctx.nowSeconds(), grace(r, ctx.graceSeconds));
    return overdue ? `the payment policy ${claims.policy} ${overdue}` : grantOf(claims, r);
  },
});
