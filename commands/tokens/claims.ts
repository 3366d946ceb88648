/**
 * What a token bundle proves, as plain functions of the read model and the clock:
 * PolicyClaim (authorization proof, one shape per variant with the state a merchant
 * needs) and PaymentRecordClaim (payment proof). Times are unix seconds (the chain's
 * unit, and the JWT's NumericDate); amounts are decimal strings.
 *
 * validUntil: until when the policy, by its own terms, is known to hold without another
 * on-chain event; null when its terms set no end (the token cap then applies):
 *   Subscription  next payment due + its grace (access follows payment): a tenth of the
 *                 period, at most SUBSCRIPTION_GRACE_SECONDS; once that has passed the claim
 *                 says paymentStanding "overdue" and lasts DUE_GRACE_SECONDS, long enough to
 *                 be read, not to be honoured. One never paid (payment count 0) says "unpaid"
 *                 and lasts DUE_GRACE_SECONDS likewise, whatever its due date: the program lets
 *                 any wallet create one due when it likes without paying, so the date proves
 *                 nothing until a payment does. A Completed one (its last renewal paid) holds
 *                 likewise through the period that payment bought: next payment due is its end
 *   Milestone     the next milestone's time; when due already, DUE_GRACE_SECONDS
 *   PayAsYouGo    expiry_date, else null
 *   OneTime       expiry_date, else null
 *   UpTo          deadline
 * A claim whose validUntil has passed is not an active authorization and is left out.
 */
import { frequencyName, frequencySeconds } from '../../src/kernel/domain/frequency.js';
import type { PolicyType } from '../../src/kernel/domain/policy-type.js';
import { subscriptionGraceSeconds } from '../../src/kernel/domain/grace.js';

/** How long a token lasts on a subscription or milestone whose payment is due now. */
export const DUE_GRACE_SECONDS = 300;

interface ClaimBase {
  address: string;
  gateway: string;
  recipient: string;
  tokenMint: string | null;
  trackingId: string;
  /** Completed: a fixed-term subscription whose last renewal is paid, within the period it bought */
  status: 'Active' | 'Completed';
  totalPaid: string;
  paymentCount: number;
  /** unix seconds; null when the policy's terms set no end */
  validUntil: number | null;
}

export interface SubscriptionClaim extends ClaimBase {
  variant: 'Subscription';
  amount: string;
  paymentFrequency: string;
  frequencySeconds: string;
  autoRenew: boolean;
  /** the renewals agreed at creation; null when unlimited */
  maxRenewals: number | null;
  /** null when unlimited (the program counts max_renewals down at each payment) */
  renewalsRemaining: number | null;
  nextPaymentDue: number;
  paymentStanding: PaymentStanding;
}
export interface MilestoneClaim extends ClaimBase {
  variant: 'Milestone';
  currentMilestone: number;
  totalMilestones: number;
  nextMilestoneAmount: string | null;
  nextMilestoneAt: number | null;
  escrowAmount: string;
}
export interface PayAsYouGoClaim extends ClaimBase {
  variant: 'PayAsYouGo';
  maxAmountPerPeriod: string;
  maxChunkAmount: string;
  periodLengthSeconds: string;
  /** the period the clock is in (rolled forward if no payment has rolled it yet) */
  currentPeriodStart: number;
  currentPeriodEnd: number;
  /** what may still be charged in the current period */
  remainingThisPeriod: string;
  expiryDate: number | null;
}
export interface OneTimeClaim extends ClaimBase { variant: 'OneTime'; amount: string; dueDate: number; expiryDate: number | null }
export interface UpToClaim extends ClaimBase { variant: 'UpTo'; maxAmount: string; validAfter: number; deadline: number }

export type PolicyClaim = SubscriptionClaim | MilestoneClaim | PayAsYouGoClaim | OneTimeClaim | UpToClaim;

export interface PaymentRecordClaim {
  signature: string;
  slot: number;
  /** unix seconds (the program's clock at the payment) */
  timestamp: number;
  amount: string;
  gateway: string;
  paymentPolicy: string;
  payer: string;
  recipient: string;
  tokenMint: string;
  recordId: number;
  trackingId: string;
}

/** The policy facts a claim is made from (a payment_policies row, decoded). */
export interface ActivePolicy {
  address: string;
  gateway: string;
  recipient: string;
  tokenMint: string | null;
  trackingId: string;
  /** Completed only for a subscription: the read model's status */
  status?: 'Active' | 'Completed';
  totalPaid: string;
  paymentCount: number;
  policyType: PolicyType;
}

/**
 * paid: next payment not due yet; due: due, within the grace (a tenth of the period, at most SUBSCRIPTION_GRACE_SECONDS);
 * overdue: past the grace period; unpaid: no payment yet (its due date is the creator's choice). Neither overdue nor
 * unpaid is to be honoured as access.
 */
export type PaymentStanding = 'paid' | 'due' | 'overdue' | 'unpaid';

const n = (s: string): number => Number(s);
const dueOr = (at: number, now: number): number => (at > now ? at : now + DUE_GRACE_SECONDS);

/**
 * How a subscription stands at `now`: never paid, paid through, due within the grace period, or overdue. A due date
 * alone proves nothing: create_payment_policy takes the creator's and charges nothing (the x402 bearer path likewise
 * asks for a first payment, deferred.ts `serving`).
 */
export function subscriptionStanding(nextPaymentDue: number, paymentCount: number, now: number, graceSeconds: number): PaymentStanding {
  if (paymentCount < 1) return 'unpaid';
  if (nextPaymentDue > now) return 'paid';
  return nextPaymentDue + graceSeconds > now ? 'due' : 'overdue';
}

/**
 * The claim of an Active policy (or a Completed subscription) at `now` (unix s), or undefined
 * when its terms have ended. `graceCapSeconds`: SUBSCRIPTION_GRACE_SECONDS.
 */
export function policyClaim(p: ActivePolicy, now: number, graceCapSeconds = 0): PolicyClaim | undefined {
  const status = p.status ?? 'Active';
  const t = p.policyType;
  if (status === 'Completed' && t.kind !== 'Subscription') return undefined;
  const base = {
    address: p.address, gateway: p.gateway, recipient: p.recipient, tokenMint: p.tokenMint,
    trackingId: p.trackingId, status, totalPaid: p.totalPaid, paymentCount: p.paymentCount,
  };
  let claim: PolicyClaim;
  switch (t.kind) {
    case 'Subscription': {
      const due = n(t.next_payment_due);
      const grace = subscriptionGraceSeconds(t.payment_frequency, graceCapSeconds);
      const standing = subscriptionStanding(due, p.paymentCount, now, grace);
      // nothing more is due on a Completed one: past its grace it has ended, not fallen behind
      if (status === 'Completed' && standing === 'overdue') return undefined;
      claim = {
        ...base, variant: 'Subscription', amount: t.amount, paymentFrequency: frequencyName(t.payment_frequency),
        frequencySeconds: frequencySeconds(t.payment_frequency).toString(), autoRenew: t.auto_renew,
        maxRenewals: t.max_renewals === null ? null : t.max_renewals + p.paymentCount, renewalsRemaining: t.max_renewals,
        nextPaymentDue: due, paymentStanding: standing,
        validUntil: standing === 'overdue' || standing === 'unpaid' ? now + DUE_GRACE_SECONDS : due + grace,
      };
      break;
    }
    case 'Milestone': {
      const pending = t.current_milestone < t.total_milestones;
      const at = pending ? t.milestone_timestamps[t.current_milestone] : undefined;
      claim = {
        ...base, variant: 'Milestone', currentMilestone: t.current_milestone, totalMilestones: t.total_milestones,
        nextMilestoneAmount: pending ? (t.milestone_amounts[t.current_milestone] ?? null) : null,
        nextMilestoneAt: at === undefined ? null : n(at), escrowAmount: t.escrow_amount,
        validUntil: at === undefined ? null : dueOr(n(at), now),
      };
      break;
    }
    case 'PayAsYouGo': {
      const period = BigInt(t.period_length_seconds);
      let start = BigInt(t.current_period_start);
      let used = BigInt(t.current_period_total);
      const nowBig = BigInt(now);
      // The program rolls the period on the next charge; the claim shows the period the clock is in.
      if (period > 0n && nowBig >= start + period) {
        start += ((nowBig - start) / period) * period;
        used = 0n;
      }
      const cap = BigInt(t.max_amount_per_period);
      claim = {
        ...base, variant: 'PayAsYouGo', maxAmountPerPeriod: t.max_amount_per_period, maxChunkAmount: t.max_chunk_amount,
        periodLengthSeconds: t.period_length_seconds, currentPeriodStart: Number(start), currentPeriodEnd: Number(start + period),
        remainingThisPeriod: (cap > used ? cap - used : 0n).toString(),
        expiryDate: t.expiry_date === null ? null : n(t.expiry_date), validUntil: t.expiry_date === null ? null : n(t.expiry_date),
      };
      break;
    }
    case 'OneTime':
      claim = {
        ...base, variant: 'OneTime', amount: t.amount, dueDate: n(t.due_date),
        expiryDate: t.expiry_date === null ? null : n(t.expiry_date), validUntil: t.expiry_date === null ? null : n(t.expiry_date),
      };
      break;
    case 'UpTo':
      claim = { ...base, variant: 'UpTo', maxAmount: t.max_amount, validAfter: n(t.valid_after), deadline: n(t.deadline), validUntil: n(t.deadline) };
      break;
    default: {
      const never: never = t;
      throw new Error(`unknown policy type ${JSON.stringify(never)}`);
    }
  }
  return claim.validUntil !== null && claim.validUntil <= now ? undefined : claim;
}

/**
 * The token's exp (unix s): the latest moment any proof holds (a policy's validUntil,
 * null meaning unbounded; a payment's time plus the cap), never past now + cap.
 */
export function tokenExpiry(claims: readonly PolicyClaim[], paymentProofAt: number | undefined, now: number, capSeconds: number): number {
  const cap = now + capSeconds;
  const ends: number[] = claims.map((c) => c.validUntil ?? cap);
  if (paymentProofAt !== undefined) ends.push(paymentProofAt + capSeconds);
  const latest = ends.length === 0 ? now : Math.max(...ends);
  return Math.max(now + 1, Math.min(cap, latest));
}
