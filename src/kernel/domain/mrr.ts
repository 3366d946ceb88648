/**
 * Monthly recurring revenue of one Subscription policy: its amount normalized to a month
 * of 1/12 year, counting payments per year as the SDK does (Daily 365, Weekly 52,
 * Monthly 12, Quarterly 4, SemiAnnually 2, Annually 1, Custom(n) 31,536,000 / n, exact
 * rather than floored). Kept in micro base units (10⁻⁶ of the token's smallest unit),
 * rounded half up, so that sums are exact and a month of a Quarterly plan is amount / 3
 * to six decimals. Policies that are not Subscriptions have no recurring rate.
 */
import type { Frequency, PolicyType } from './policy-type.js';

export const MICRO = 1_000_000n;
const YEAR_SECONDS = 31_536_000n;

/** Payments per year as a fraction [numerator, denominator]. */
export function paymentsPerYear(f: Frequency): [bigint, bigint] {
  if (typeof f !== 'string') return [YEAR_SECONDS, BigInt(f.value)];
  const n = { Daily: 365n, Weekly: 52n, Monthly: 12n, Quarterly: 4n, SemiAnnually: 2n, Annually: 1n }[f];
  return [n, 1n];
}

/** amount · perYear / 12, in micro units, rounded half up; 0 for a Custom(0) (the program refuses it). */
export function monthlyMicro(type: PolicyType): bigint {
  if (type.kind !== 'Subscription') return 0n;
  const [num, den] = paymentsPerYear(type.payment_frequency);
  if (den === 0n) return 0n;
  const scaledNum = BigInt(type.amount) * num * MICRO;
  const scaledDen = den * 12n;
  return (2n * scaledNum + scaledDen) / (2n * scaledDen);
}

/** Micro units as a decimal string of base units: 1500000 → "1.5", 3 → "0.000003". */
export function microToDecimal(micro: bigint): string {
  const neg = micro < 0n;
  const abs = neg ? -micro : micro;
  const whole = abs / MICRO;
  const frac = (abs % MICRO).toString().padStart(6, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${whole.toString()}${frac ? `.${frac}` : ''}`;
}
