/**
 * How much a payer approves the program's delegate for, as the SDK computes it
 * (PROGRAM.md §4): the sum over the payer's Subscription, Milestone and PayAsYouGo
 * policies of the mint, plus the new one. Fees are not included.
 *   - Subscription: amount × (remaining renewals, else payments per year: 365 / 52 / 12 /
 *     4 / 2 / 1, and floor(31,536,000 / seconds) for Custom);
 *   - PayAsYouGo: max per period × floor(31,536,000 / period length);
 *   - Milestone: the sum of its amounts.
 * The verifier can check only the new policy's share without reading the chain: an
 * approve below it cannot pay the policy for a year, so it is refused.
 */
import type { Frequency, PolicyType } from '../../src/kernel/domain/policy-type.js';
import { U64_MAX } from '../../src/kernel/domain/spl-token.js';
export const YEAR_SECONDS = 31_536_000n;
const PER_YEAR: Readonly<Record<Exclude<Frequency, { kind: 'Custom' }>, bigint>> = {
  Daily: 365n, Weekly: 52n, Monthly: 12n, Quarterly: 4n, SemiAnnually: 2n, Annually: 1n,
};

export function paymentsPerYear(f: Frequency): bigint {
  if (typeof f === 'string') return PER_YEAR[f];
  const seconds = BigInt(f.value);
  return seconds > 0n ? YEAR_SECONDS / seconds : 0n;
}

export const cap = (v: bigint): bigint => (v > U64_MAX ? U64_MAX : v);

/** One existing policy's share of the approval (0 for OneTime and completed policies). */
export function policyAllowance(t: PolicyType): bigint {
  if (t.kind === 'Subscription') {
    const count = t.max_renewals !== null ? BigInt(t.max_renewals) : paymentsPerYear(t.payment_frequency);
    return BigInt(t.amount) * count;
  }
  if (t.kind === 'PayAsYouGo') {
    const period = BigInt(t.period_length_seconds);
    return period > 0n ? BigInt(t.max_amount_per_period) * (YEAR_SECONDS / period) : 0n;
  }
  if (t.kind === 'Milestone') return t.milestone_amounts.slice(0, t.total_milestones).reduce((a, b) => a + BigInt(b), 0n);
  // an UpTo authorization not yet settled keeps its maximum approved (a new approve replaces the old one)
  if (t.kind === 'UpTo') return BigInt(t.max_amount);
  return 0n;
}

/** The approval for the new policy (`share`: its scheme's allowance) on top of the payer's existing ones. */
export function totalAllowance(share: bigint, existing: readonly PolicyType[]): bigint {
  return cap(existing.reduce((sum, t) => sum + policyAllowance(t), share));
}
