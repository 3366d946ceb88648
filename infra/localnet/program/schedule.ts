/**
 * When a policy may be charged and how much: the rules of execute_payment and
 * execute_composable, as one pure function of the policy type and the clock.
 */
import type { PublicKey } from '@solana/web3.js';
import type BN from 'bn.js';
import { skipFixed, skipMonths } from './calendar.js';
import { programError } from './errors.js';
import { bn, frequencySeconds, type PaymentFrequency, type PolicyType } from './model.js';

export interface Charge {
  amount: BN;
  /** the policy type with its schedule advanced */
  next: PolicyType;
  /** the policy reached its terminal state with this payment */
  completes: boolean;
}

/** Who calls, for the milestone signer bits (1 = gateway signer, 2 = owner, 3 = recipient). */
export interface Callers { caller: PublicKey; gatewaySigner: PublicKey; owner: PublicKey; recipient: PublicKey }

const MONTHS: Record<string, number> = { Monthly: 1, Quarterly: 3, SemiAnnually: 6, Annually: 12 };

/** The next due date after a payment at `now`: missed periods are skipped, never charged. */
export function nextPaymentDue(due: number, frequency: PaymentFrequency, now: number): number {
  const name = Object.keys(frequency)[0] ?? '';
  const months = MONTHS[name];
  if (months !== undefined) return skipMonths(due, now, months);
  const step = frequencySeconds(frequency);
  if (step <= 0) throw programError('InvalidFrequency');
  return skipFixed(due, now, step);
}

/**
 * Throws the program's error when the policy cannot be charged now, else the amount and
 * the advanced schedule (validate_policy_execution then advance_policy of the program).
 */
export function charge(type: PolicyType, requested: BN | null, now: number, callers?: Callers): Charge | never {
  if ('Subscription' in type) {
    const s = type.Subscription;
    if (now < s.next_payment_due.toNumber()) throw programError('PaymentNotDue');
    const due = nextPaymentDue(s.next_payment_due.toNumber(), s.payment_frequency, now);
    const renewals = s.max_renewals === null ? null : Math.max(0, s.max_renewals - 1);
    const next = { Subscription: { ...s, next_payment_due: bn(due), max_renewals: renewals } };
    const completes = renewals !== null && (renewals === 0 || !s.auto_renew);
    return { amount: s.amount, next, completes };
  }
  if ('Milestone' in type) {
    const m = type.Milestone;
    const idx = m.current_milestone;
    const amount = m.milestone_amounts[idx];
    if (idx >= m.total_milestones || !amount) throw programError('PolicyPaused');
    if ((m.release_condition & 1) !== 0 && now < (m.milestone_timestamps[idx]?.toNumber() ?? 0)) throw programError('PaymentNotDue');
    if (callers) {
      const bit = (b: number): boolean => (m.release_condition & b) !== 0;
      const must = bit(2) ? callers.gatewaySigner : bit(4) ? callers.owner : bit(8) ? callers.recipient : undefined;
      if (must && !must.equals(callers.caller)) throw programError('Unauthorized');
    }
    const current = idx + 1;
    return { amount, next: { Milestone: { ...m, current_milestone: current } }, completes: current >= m.total_milestones };
  }
  if ('PayAsYouGo' in type) {
    const p = type.PayAsYouGo;
    const expiry = p.expiry_date?.toNumber() ?? 0;
    if (expiry > 0 && now > expiry) throw programError('PolicyExpired');
    if (!requested || requested.isZero() || requested.gt(p.max_chunk_amount)) throw programError('InvalidAmount');
    // a new period starts at the first charge after the old one elapsed, not on a grid
    const rolled = now >= p.current_period_start.toNumber() + p.period_length_seconds.toNumber();
    const total = rolled ? requested : p.current_period_total.add(requested);
    if (total.gt(p.max_amount_per_period)) throw programError('InsufficientDelegatedAmount');
    const start = rolled ? bn(now) : p.current_period_start;
    return { amount: requested, next: { PayAsYouGo: { ...p, current_period_start: start, current_period_total: total } }, completes: false };
  }
  if ('OneTime' in type) {
    const o = type.OneTime;
    if (o.due_date.toNumber() > 0 && now < o.due_date.toNumber()) throw programError('PaymentNotDue');
    if (o.expiry_date !== null && now > o.expiry_date.toNumber()) throw programError('PolicyExpired');
    return { amount: o.amount, next: type, completes: true };
  }
  const u = type.UpTo;
  // zero is a valid amount for UpTo: the payee settles for nothing
  if (!requested || requested.gt(u.max_amount)) throw programError('InvalidAmount');
  if (u.valid_after.toNumber() > 0 && now < u.valid_after.toNumber()) throw programError('PaymentNotDue');
  if (now >= u.deadline.toNumber()) throw programError('PolicyExpired');
  return { amount: requested, next: type, completes: true };
}

const I64_MAX = (1n << 63n) - 1n;
const RELEASE_DUE_DATE = 0x01;

/** bits set in a byte */
const bitCount = (b: number): number => b.toString(2).replace(/0/g, '').length;

/**
 * Creation rules (PolicyType::validate, policies/*.rs), then the program's adjustments:
 * a Subscription due in the past falls due now and a PayAsYouGo period starts now. The
 * caller's current_period_total and current_milestone are stored as given.
 */
export function admitPolicyType(type: PolicyType, now: number): PolicyType {
  if ('Subscription' in type) {
    const s = type.Subscription;
    if (s.amount.isZero()) throw programError('InvalidAmount');
    if ('Custom' in s.payment_frequency) {
      const step = BigInt(s.payment_frequency.Custom[0].toString());
      if (step === 0n || step > I64_MAX) throw programError('InvalidFrequency');
    }
    if (s.max_renewals === 0) throw programError('InvalidInterval');
    const due = s.next_payment_due.toNumber() <= now ? bn(now) : s.next_payment_due;
    return { Subscription: { ...s, next_payment_due: due } };
  }
  if ('Milestone' in type) {
    const m = type.Milestone;
    const total = m.total_milestones;
    if (total < 1 || total > 4 || m.current_milestone >= total || m.escrow_amount.isZero()) throw programError('InvalidAmount');
    if (m.milestone_amounts.slice(0, total).some((a) => a.isZero())) throw programError('InvalidAmount');
    // at most one of the signer bits (any bit but the due-date bit counts)
    if (bitCount(m.release_condition & ~RELEASE_DUE_DATE & 0xff) > 1) throw programError('InvalidAmount');
    return type;
  }
  if ('PayAsYouGo' in type) {
    const p = type.PayAsYouGo;
    if (p.max_amount_per_period.isZero() || p.max_chunk_amount.isZero()) throw programError('InvalidAmount');
    if (p.max_chunk_amount.gt(p.max_amount_per_period)) throw programError('InvalidAmount');
    const period = BigInt(p.period_length_seconds.toString());
    if (period === 0n || period > I64_MAX) throw programError('InvalidInterval');
    return { PayAsYouGo: { ...p, current_period_start: bn(now) } };
  }
  if ('OneTime' in type) {
    const o = type.OneTime;
    if (o.amount.isZero()) throw programError('InvalidAmount');
    // an expiry is ordered against a due date only when the due date is set (> 0); a past expiry is accepted
    if (o.expiry_date !== null && o.due_date.gtn(0) && o.expiry_date.lte(o.due_date)) throw programError('InvalidPaymentDueDate');
    return type;
  }
  const u = type.UpTo;
  if (u.max_amount.isZero()) throw programError('InvalidAmount');
  if (u.deadline.lten(0)) throw programError('InvalidPaymentDueDate');
  if (u.valid_after.gtn(0) && u.deadline.lte(u.valid_after)) throw programError('InvalidPaymentDueDate');
  return type;
}
