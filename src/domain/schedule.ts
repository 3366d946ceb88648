/**
 * What one payment does to a policy's type and status, and when the next one falls due:
 * the program's rules (execute_payment / execute_composable) as pure functions of the
 * policy and the payment, so a read model folds PaymentRecord events into exactly the
 * state the chain holds.
 *   Subscription: next_payment_due advances by one period from the previous due date;
 *     Completed once payment_count reaches max_renewals.
 *   Milestone: current_milestone advances and the escrow shrinks by the amount paid;
 *     Completed at the last milestone.
 *   PayAsYouGo: the period rolls forward by whole periods when the payment falls past its
 *     end, and the period total accumulates; never Completed.
 *   OneTime, UpTo: Completed after one execution.
 * i64 arithmetic saturates: the program rejects an overflowing payment, so such an event
 * cannot occur, but a read model must never fail on one.
 */
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

/** The policy type after one payment; `paymentCount` counts payments including this one. */
export function applyPayment(type: PolicyType, paymentCount: number, p: Payment): Charged {
  switch (type.kind) {
    case 'Subscription': {
      const next = clampI64(BigInt(type.next_payment_due) + frequencySeconds(type.payment_frequency));
      const completes = type.max_renewals !== null && paymentCount >= type.max_renewals;
      return { policyType: { ...type, next_payment_due: next.toString() }, completes };
    }
    case 'Milestone': {
      const current = Math.min(type.current_milestone + 1, 255);
      const escrow = BigInt(type.escrow_amount) - p.amount;
      return {
        policyType: { ...type, current_milestone: current, escrow_amount: (escrow < 0n ? 0n : escrow).toString() },
        completes: current >= type.total_milestones,
      };
    }
    case 'PayAsYouGo': {
      const period = BigInt(type.period_length_seconds);
      let start = BigInt(type.current_period_start);
      let total = BigInt(type.current_period_total);
      if (period > 0n && p.timestamp >= start + period) {
        start = clampI64(start + ((p.timestamp - start) / period) * period);
        total = 0n;
      }
      return {
        policyType: { ...type, current_period_start: start.toString(), current_period_total: (total + p.amount).toString() },
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
