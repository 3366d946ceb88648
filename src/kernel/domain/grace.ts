/**
 * Access follows payment: how long past next_payment_due a subscription is still honoured
 * (the payer's payment may land late; the scheduler may retry). A fixed grace would be a
 * standing discount on short periods (a Daily plan paid once would keep access for days),
 * so it scales with the period: a tenth of it, or what the requirement declares, never
 * more than the operator's cap (SUBSCRIPTION_GRACE_SECONDS, 3 days by default).
 */
import { frequencySeconds } from './frequency.js';
import type { Frequency } from './policy-type.js';

export const DEFAULT_GRACE_CAP_SECONDS = 259_200;

/** The grace of a subscription of frequency `f`: `declared` (else a tenth of the period), at most `capSeconds`. */
export function subscriptionGraceSeconds(f: Frequency, capSeconds = DEFAULT_GRACE_CAP_SECONDS, declared?: number): number {
  const tenth = Number(frequencySeconds(f) / 10n);
  return Math.max(0, Math.min(declared ?? tenth, capSeconds));
}
