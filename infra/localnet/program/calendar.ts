/**
 * The program's due-date arithmetic: fixed steps skip every missed period in one jump;
 * calendar months (Monthly and longer) step month by month, clamping the day to the
 * month's length. The clamp carries into the next step, as the program keeps only the
 * last due date: Jan 31 → Feb 29 → Mar 29. Time of day is kept.
 */
import { programError } from './errors.js';

const DAY = 86_400;
/** the program gives up after 1,200 monthly steps (about a century) */
export const MAX_MONTH_STEPS = 1_200;

/** One calendar step of `months` from a unix timestamp (UTC, as the program counts days). */
export function addMonths(ts: number, months: number): number {
  const days = Math.floor(ts / DAY);
  const secondOfDay = ts - days * DAY;
  const d = new Date(days * DAY * 1000);
  const monthIndex = d.getUTCMonth() + months;
  const year = d.getUTCFullYear() + Math.floor(monthIndex / 12);
  const month = ((monthIndex % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const day = Math.min(d.getUTCDate(), lastDay);
  return Date.UTC(year, month, day) / 1000 + secondOfDay;
}

/** The first due date after `now`, from a due date at or before it. */
export function skipFixed(due: number, now: number, step: number): number {
  if (due > now) return due;
  return due + (Math.floor((now - due) / step) + 1) * step;
}

export function skipMonths(due: number, now: number, months: number): number {
  let next = due;
  for (let i = 0; next <= now; i += 1) {
    if (i >= MAX_MONTH_STEPS) throw programError('ArithmeticOverflow');
    next = addMonths(next, months);
  }
  return next;
}
