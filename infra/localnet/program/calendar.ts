/**
 * The program's due-date arithmetic on the localnet: the shared calendar
 * (src/kernel/domain/calendar.ts), failing as the program fails past 1,200 monthly steps.
 */
import { addMonths, MAX_MONTH_STEPS, skipMonths as skip } from '../../../src/kernel/domain/calendar.js';
import { programError } from './errors.js';

export { addMonths, MAX_MONTH_STEPS };

export function skipFixed(due: number, now: number, step: number): number {
  if (due > now) return due;
  return due + (Math.floor((now - due) / step) + 1) * step;
}

export function skipMonths(due: number, now: number, months: number): number {
  const next = skip(due, now, months);
  if (next === undefined) throw programError('ArithmeticOverflow');
  return next;
}
