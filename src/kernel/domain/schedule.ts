/**
 * What one payment does to a policy's type and status, and when the next one falls due:
 * the program's rules (execute_payment / execute_composable, shared/schedule.rs) as pure
 * functions of the policy and the payment, so a read model folds PaymentRecord events into
 * exactly the state the chain holds. The payment's `timestamp` is the program's clock.
 *   Subscription: next_payment_due moves to the first due date after the payment (missed
 *     periods are skipped, never charged): fixed steps in one jump, calendar months for
 *     Monthly and longer (calendar.ts); max_renewals, when set, counts down and the policy
 *     completes at 0 or whenever auto_renew is false; with no max_renewals it never does.
 *   Milestone: current_milestone advances (the escrow figure stays as created);
 *     Completed at the last milestone.
 *   PayAsYouGo: a payment at or past the period's end starts a new period at the payment's
 *     time with the payment as its total; otherwise the total accumulates; never Completed.
 *   OneTime, UpTo: Completed after one execution.
 * i64 arithmetic saturates: the program rejects an overflowing payment, so such an event
 * cannot occur, but a read model must never fail on one.
 */
import { calendarMonths, skipFixed, skipMonths } from './calendar.js';
import { frequencySeconds } from './frequency.js';
import type { PolicyStatus, PolicyType } from './policy-type.js';

const I64_MAX = 9_223_372_036_854_775_807n;
const I64_MIN = -9_223_372_036_854_775_808n;

const clampI64 = (v: bigint): bigint => (v > I64_MAX ? I64_MAX : v < I64_MIN ? I64_MIN : v);

export interface Payment {
  amount: bigint;
  /** the program's clock at the payment, unix seconds */
  timestamp: bigint;
}

export interface Charged {
  policyType: PolicyType;
  completes: boolean;
}

/** The policy type after one payment (the count of payments including this one is not needed: the program counts renewals down). */
export function applyPayment(type: PolicyType, _paymentCount: number, p: Payment): Charged {
  switch (type.kind) {
    case 'Subscription': {
      const renewals = type.max_renewals === null ? null : Math.max(0, type.max_renewals - 1);
      const completes = renewals !== null && (renewals === 0 || !type.auto_renew);
      const policyType = { ...type, next_payment_due: nextDueAfter(type, p.timestamp), max_renewals: renewals };
      return { policyType, completes };
    }
    case 'Milestone': {
      const current = Math.min(type.current_milestone + 1, 255);
      return { policyType: { ...type, current_milestone: current }, completes: current >= type.total_milestones };
    }
    case 'PayAsYouGo': {
      const period = BigInt(type.period_length_seconds);
      const start = BigInt(type.current_period_start);
      const rolled = p.timestamp >= clampI64(start + period);
      const total = rolled ? p.amount : BigInt(type.current_period_total) + p.amount;
      return {
        policyType: { ...type, current_period_start: (rolled ? p.timestamp : start).toString(), current_period_total: total.toString() },
        completes: false,
      };
    }
    case 'OneTime':
    case 'UpTo':
      return { policyType: type, completes: true };
    default: {
      const never: never = type;
      throw new Error(`unknown policy type ${JSON.stringify(never)}`);
    }
  }
}

/** A subscription's next due date after a payment at `now` (unchanged when not yet reached). */
function nextDueAfter(type: Extract<PolicyType, { kind: 'Subscription' }>, now: bigint): string {
  const due = BigInt(type.next_payment_due);
  const months = calendarMonths(type.payment_frequency);
  if (months === undefined) return clampI64(skipFixed(due, now, frequencySeconds(type.payment_frequency))).toString();
  const next = skipMonths(Number(due), Number(now), months);
  return next === undefined ? I64_MAX.toString() : String(next);
}

/**
 * When the next payment is due (unix seconds), or null when none is scheduled: a
 * Subscription's next_payment_due, a Milestone's next milestone time, a OneTime's due
 * date; never for PayAsYouGo and UpTo (charged on demand) nor for a Completed policy.
 */
export function nextPaymentDue(type: PolicyType, status: PolicyStatus): string | null {
  if (status === 'Completed') return null;
  switch (type.kind) {
    case 'Subscription':
      return type.next_payment_due;
    case 'Milestone':
      return type.current_milestone < type.total_milestones ? (type.milestone_timestamps[type.current_milestone] ?? null) : null;
    case 'OneTime':
      return type.due_date;
    case 'PayAsYouGo':
    case 'UpTo':
      return null;
    default: {
      const never: never = type;
      throw new Error(`unknown policy type ${JSON.stringify(never)}`);
    }
  }
}

/** Status after a payment: Completed is terminal, otherwise the status stays. */
export function statusAfterPayment(status: PolicyStatus, completes: boolean): PolicyStatus {
  return completes ? 'Completed' : status;
}
