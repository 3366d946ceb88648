/**
 * When a policy may be charged and how much: the rules of execute_payment and
 * execute_composable, as one pure function of the policy type and the clock.
 */
import type BN from 'bn.js';
import { ProgramError, programError } from './errors.js';
import { bn, frequencySeconds, type PolicyType } from './model.js';

export interface Charge {
  amount: BN;
  /** the policy type with its schedule advanced */
  next: PolicyType;
  /** the policy reached its terminal state with this payment */
  completes: boolean;
}

/** Throws the program's error when the policy cannot be charged now; `paymentCount` is before this payment. */
export function charge(type: PolicyType, paymentCount: number, requested: BN | null, now: number): Charge | never {
  if ('Subscription' in type) {
    const s = type.Subscription;
    if (s.next_payment_due.toNumber() > now) throw programError('PaymentNotDue');
    const period = frequencySeconds(s.payment_frequency);
    const next = { Subscription: { ...s, next_payment_due: s.next_payment_due.addn(period) } };
    const completes = s.max_renewals !== null && paymentCount + 1 >= s.max_renewals;
    return { amount: s.amount, next, completes };
  }
  if ('Milestone' in type) {
    const m = type.Milestone;
    const at = m.milestone_timestamps[m.current_milestone];
    const amount = m.milestone_amounts[m.current_milestone];
    if (!at || !amount || m.current_milestone >= m.total_milestones) throw programError('InvalidPolicyStatusTransition');
    if (at.toNumber() > now) throw programError('PaymentNotDue');
    const current = m.current_milestone + 1;
    const next = { Milestone: { ...m, current_milestone: current, escrow_amount: atLeastZero(m.escrow_amount.sub(amount)) } };
    return { amount, next, completes: current >= m.total_milestones };
  }
  if ('PayAsYouGo' in type) {
    const p = type.PayAsYouGo;
    if (p.expiry_date !== null && p.expiry_date.toNumber() < now) throw programError('PolicyExpired');
    if (!requested || requested.isZero() || requested.gt(p.max_chunk_amount)) throw programError('InvalidAmount');
    const period = p.period_length_seconds.toNumber();
    let start = p.current_period_start.toNumber();
    let total = p.current_period_total;
    if (now >= start + period) {
      start += Math.floor((now - start) / period) * period;
      total = bn(0);
    }
    if (total.add(requested).gt(p.max_amount_per_period)) throw programError('InsufficientDelegatedAmount');
    const next = { PayAsYouGo: { ...p, current_period_start: bn(start), current_period_total: total.add(requested) } };
    return { amount: requested, next, completes: false };
  }
  if ('OneTime' in type) {
    const o = type.OneTime;
    if (o.due_date.toNumber() > now) throw programError('PaymentNotDue');
    if (o.expiry_date !== null && o.expiry_date.toNumber() < now) throw programError('PolicyExpired');
    return { amount: o.amount, next: type, completes: true };
  }
  const u = type.UpTo;
  if (u.valid_after.toNumber() > now) throw programError('PaymentNotDue');
  if (u.deadline.toNumber() < now) throw programError('PolicyExpired');
  const amount = requested ?? u.max_amount;
  if (amount.isZero() || amount.gt(u.max_amount)) throw programError('InvalidAmount');
  return { amount, next: type, completes: true };
}

function atLeastZero(v: BN): BN {
  return v.isNeg() ? bn(0) : v;
}

/** Creation rules: amounts positive, frequencies and windows sane; returns the type as stored. */
export function admitPolicyType(type: PolicyType, now: number): PolicyType {
  if ('Subscription' in type) {
    const s = type.Subscription;
    if (s.amount.isZero()) throw programError('InvalidAmount');
    if ('Custom' in s.payment_frequency && s.payment_frequency.Custom[0].isZero()) throw programError('InvalidFrequency');
    // the program starts a subscription whose first due date is in the past at "now"
    const due = s.next_payment_due.toNumber() < now ? bn(now) : s.next_payment_due;
    return { Subscription: { ...s, next_payment_due: due } };
  }
  if ('Milestone' in type) {
    const m = type.Milestone;
    if (m.total_milestones < 1 || m.total_milestones > 4 || m.current_milestone !== 0) throw programError('InvalidAmount');
    if (m.milestone_amounts.slice(0, m.total_milestones).some((a) => a.isZero())) throw programError('InvalidAmount');
    return type;
  }
  if ('PayAsYouGo' in type) {
    const p = type.PayAsYouGo;
    if (p.period_length_seconds.isZero()) throw programError('InvalidInterval');
    if (p.max_amount_per_period.isZero() || p.max_chunk_amount.isZero()) throw programError('InvalidAmount');
    return { PayAsYouGo: { ...p, current_period_start: bn(now), current_period_total: bn(0) } };
  }
  if ('OneTime' in type) {
    const o = type.OneTime;
    if (o.amount.isZero()) throw programError('InvalidAmount');
    if (o.expiry_date !== null && o.expiry_date.toNumber() < now) throw programError('PolicyExpired');
    return type;
  }
  const u = type.UpTo;
  if (u.max_amount.isZero()) throw programError('InvalidAmount');
  if (u.deadline.lte(u.valid_after)) throw programError('InvalidPaymentDueDate');
  return type;
}

export function isProgramError(e: unknown): e is ProgramError {
  return e instanceof ProgramError;
}
