/**
 * Payment frequency → seconds of one period, as the program counts them: fixed day
 * counts (a "month" is 30 days, a quarter 90, half a year 180, a year 365), never
 * calendar arithmetic, so that a schedule is a pure function of its start.
 */
import type { Frequency } from './policy-type.js';

const DAY = 86_400n;

export const FREQUENCY_SECONDS: Readonly<Record<Exclude<Frequency, { kind: 'Custom' }>, bigint>> = {
  Daily: DAY,
  Weekly: 7n * DAY,
  Monthly: 30n * DAY,
  Quarterly: 90n * DAY,
  SemiAnnually: 180n * DAY,
  Annually: 365n * DAY,
};

export function frequencySeconds(f: Frequency): bigint {
  if (typeof f === 'string') return FREQUENCY_SECONDS[f];
  return BigInt(f.value);
}

/** The frequency's name: a unit variant's, or "Custom". */
export function frequencyName(f: Frequency): string {
  return typeof f === 'string' ? f : f.kind;
}
