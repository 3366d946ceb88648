/**
 * Does a policy's type carry a requirement's terms? One comparison for the three places
 * that ask: the instruction in a Payment transaction (before anything is sent), the
 * account the chain created (after confirmation), and a payer's existing policies.
 *
 * Terms must match exactly: a lower amount, another frequency or a looser cap is another
 * agreement than the one the resource is sold under, and a higher one is not what the
 * payer was asked for. Schedule state (next_payment_due, the current period) is not a
 * term; `checkNewPolicyTerms` adds the checks that apply to a policy being created.
 */
import { frequencyText } from './requirements.js';
import type { PaymentRequirement } from './requirements.js';
import type { PolicyType, UpToType } from '../../src/kernel/domain/policy-type.js';

/**
 * Why `type` does not carry the requirement's terms, or undefined when it does. `paid`: the
 * policy's payment_count; each payment takes one off a subscription's max_renewals.
 */
export function termsMismatch(r: PaymentRequirement, type: PolicyType, paid = 0): string | undefined {
  if (r.scheme === 'deferred') {
    if (type.kind !== 'Subscription') return `the policy type is ${type.kind}; scheme deferred needs a Subscription`;
    if (type.amount !== r.amount.toString()) return `the subscription amount is ${type.amount}; the requirement asks ${r.amount}`;
    const f = typeof type.payment_frequency === 'string' ? type.payment_frequency : `Custom:${type.payment_frequency.value}`;
    if (f !== frequencyText(r.paymentFrequency)) return `the payment frequency is ${f}; the requirement asks ${frequencyText(r.paymentFrequency)}`;
    if (type.auto_renew !== r.autoRenew) return `auto_renew is ${type.auto_renew}; the requirement asks ${r.autoRenew}`;
    const renewals = type.max_renewals === null ? null : type.max_renewals + paid;
    if (renewals !== r.maxRenewals) return `max_renewals is ${String(renewals)}; the requirement asks ${String(r.maxRenewals)}`;
    return undefined;
  }
  if (r.scheme === 'x402://upto') {
    if (type.kind !== 'UpTo') return `the policy type is ${type.kind}; scheme x402://upto needs an UpTo policy`;
    if (type.max_amount !== r.amount.toString()) return `max_amount is ${type.max_amount}; the requirement asks ${r.amount}`;
    return undefined;
  }
  if (r.scheme === 'x402://prepaid') {
    if (type.kind !== 'OneTime') return `the policy type is ${type.kind}; scheme x402://prepaid needs a OneTime policy (the credit)`;
    if (type.amount !== r.amount.toString()) return `the credit (the OneTime amount) is ${type.amount}; the requirement asks ${r.amount}`;
    return undefined;
  }
  if (type.kind !== 'PayAsYouGo') return `the policy type is ${type.kind}; scheme x402://payg needs a PayAsYouGo policy`;
  if (type.max_amount_per_period !== r.maxAmountPerPeriod.toString()) {
    return `max_amount_per_period is ${type.max_amount_per_period}; the requirement asks ${r.maxAmountPerPeriod}`;
  }
  if (type.period_length_seconds !== r.periodLengthSeconds.toString()) {
    return `period_length_seconds is ${type.period_length_seconds}; the requirement asks ${r.periodLengthSeconds}`;
  }
  if (type.max_chunk_amount !== r.maxChunkAmount.toString()) return `max_chunk_amount is ${type.max_chunk_amount}; the requirement asks ${r.maxChunkAmount}`;
  return undefined;
}

/** Seconds a new subscription's first due date may lie ahead of the server's clock. */
export const DUE_SKEW_SECONDS = 60;

/**
 * The schedule of a policy about to be created: a subscription must fall due now (a due
 * date far ahead would buy access without paying until then), and a pay-as-you-go policy
 * must not be expired already; a prepaid credit (OneTime) falls due now and has not expired,
 * since the same transaction executes it.
 */
export function checkNewPolicyTerms(r: PaymentRequirement, type: PolicyType, nowSeconds: number): string | undefined {
  const terms = termsMismatch(r, type);
  if (terms) return terms;
  if (type.kind === 'Subscription' && BigInt(type.next_payment_due) > BigInt(nowSeconds + DUE_SKEW_SECONDS)) {
    return `the first payment falls due at ${type.next_payment_due}, not now`;
  }
  if (type.kind === 'PayAsYouGo' && r.scheme === 'x402://payg') return paygExpiryProblem(type.expiry_date, r.minExpirySeconds, nowSeconds);
  if (type.kind === 'OneTime' && BigInt(type.due_date) > BigInt(nowSeconds + DUE_SKEW_SECONDS)) {
    return `the credit falls due at ${type.due_date}, not now`;
  }
  if (type.kind === 'OneTime' && type.expiry_date !== null && BigInt(type.expiry_date) < BigInt(nowSeconds)) {
    return 'the credit\'s OneTime policy has already expired';
  }
  if (type.kind === 'UpTo' && r.scheme === 'x402://upto') return uptoWindowProblem(type, r.maxTimeoutSeconds, nowSeconds);
  return undefined;
}

/**
 * An UpTo authorization being created: usable from (about) now, its deadline ahead and no
 * further than the requirement's longest window. The deadline bounds the JWT too.
 */
export function uptoWindowProblem(type: UpToType, maxTimeoutSeconds: bigint, nowSeconds: number): string | undefined {
  const now = BigInt(nowSeconds);
  const validAfter = BigInt(type.valid_after);
  const deadline = BigInt(type.deadline);
  if (validAfter > now + BigInt(DUE_SKEW_SECONDS)) return `the authorization starts at ${validAfter}, not now`;
  if (deadline <= now) return `the authorization's deadline ${deadline} has passed`;
  if (deadline <= validAfter) return 'the deadline is not after valid_after';
  if (deadline > now + maxTimeoutSeconds + BigInt(DUE_SKEW_SECONDS)) {
    return `the deadline ${deadline} is more than maxTimeoutSeconds (${maxTimeoutSeconds}) ahead`;
  }
  return undefined;
}

/**
 * A pay-as-you-go policy being created must live at least `minExpirySeconds` (a period and
 * the time its last usage takes to be charged): usage served shortly before an expiry could
 * otherwise never be charged, since the program refuses execute_payment once it has passed.
 */
export function paygExpiryProblem(expiry: string | null, minExpirySeconds: bigint, nowSeconds: number): string | undefined {
  if (expiry === null || BigInt(expiry) === 0n) return undefined;
  const earliest = BigInt(nowSeconds) + minExpirySeconds;
  if (BigInt(expiry) >= earliest) return undefined;
  return `the pay-as-you-go policy expires at ${expiry}, sooner than the requirement's minExpirySeconds (${minExpirySeconds}) from now allows (${earliest} at the earliest): usage near its end could not be charged`;
}
