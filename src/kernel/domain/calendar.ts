/**
 * The program's due-date arithmetic (shared/schedule.rs), for the read models and the
 * localnet alike. A payment moves a subscription's due date to the first one after the
 * program's clock: fixed steps (Daily, Weekly, Custom) in one jump; calendar months
 * (Monthly 1, Quarterly 3, SemiAnnually 6, Annually 12) step by step, each clamping the
 * day of month to the month's length, the clamp carried into the next step (Jan 31 →
 * Feb 29 → Mar 29), time of day kept. The program gives up after 1,200 monthly steps.
 */
import type { Frequency } from './policy-type.js';

const DAY = 86_400;
export const MAX_MONTH_STEPS = 1_200;
/** Dates JavaScript can represent (±8.64e15 ms); the program's i64 goes further, but no real due date does. */
const MAX_DATE_SECONDS = 8_640_000_000_000;

export const CALENDAR_MONTHS: Readonly<Record<string, number>> = { Monthly: 1, Quarterly: 3, SemiAnnually: 6, Annually: 12 };

/** One calendar step of `months` from a unix timestamp (UTC days, as the program counts them). */
export function addMonths(ts: number, months: number): number {
  const days = Math.floor(ts / DAY);
  const secondOfDay = ts - days * DAY;
  const d = new Date(days * DAY * 1000);
  const monthIndex = d.getUTCMonth() + months;
  const year = d.getUTCFullYear() + Math.floor(monthIndex / 12);
  const month = ((monthIndex % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Date.UTC(year, month, Math.min(d.getUTCDate(), lastDay)) / 1000 + secondOfDay;
}

/** The first due date after `now` by a fixed step, from a due date at or before it. */
export function skipFixed(due: bigint, now: bigint, step: bigint): bigint {
  if (due > now || step <= 0n) return due;
  return due + ((now - due) / step + 1n) * step;
}

/** The first due date after `now` by calendar months; undefined past 1,200 steps (the program's ArithmeticOverflow). */
export function skipMonths(due: number, now: number, months: number): number | undefined {
  let next = due;
  for (let i = 0; next <= now; i += 1) {
    if (i >= MAX_MONTH_STEPS || Math.abs(next) > MAX_DATE_SECONDS) return undefined;
    next = addMonths(next, months);
  }
  return next;
}

/** The calendar step of a frequency in months, or undefined for the fixed ones. */
export function calendarMonths(f: Frequency): number | undefined {
  return typeof f === 'string' ? CALENDAR_MONTHS[f] : undefined;
}
