/** Token claims: each variant's state and validity, and the token's exp, at a given clock. */
import { expect } from 'chai';
import { DUE_GRACE_SECONDS, policyClaim, tokenExpiry, type ActivePolicy } from '../../commands/tokens/claims.js';
import type { PolicyType } from '../../src/kernel/domain/policy-type.js';

const NOW = 1_800_000_000;
const policy = (policyType: PolicyType, paymentCount = 0): ActivePolicy => ({
  address: 'P', gateway: 'G', recipient: 'R', tokenMint: 'M', trackingId: 't', totalPaid: '0', paymentCount, policyType,
});
const sub = (due: number, maxRenewals: number | null = null): PolicyType => ({
  kind: 'Subscription', amount: '1000', auto_renew: true, max_renewals: maxRenewals, payment_frequency: 'Monthly', next_payment_due: String(due),
});

describe('token claims', () => {
  it('a subscription is paid through its next due date; when already due, briefly', () => {
    const c = policyClaim(policy(sub(NOW + 86_400, 12), 3), NOW);
    // the program counts max_renewals down at each payment: 12 left after 3 of 15
    expect(c).to.deep.include({
      variant: 'Subscription', nextPaymentDue: NOW + 86_400, validUntil: NOW + 86_400, maxRenewals: 15, renewalsRemaining: 12, paymentFrequency: 'Monthly', frequencySeconds: '2592000',
    });
    expect(policyClaim(policy(sub(NOW - 10), 1), NOW)).to.deep.include({ paymentStanding: 'overdue', validUntil: NOW + DUE_GRACE_SECONDS });
  });

  it('a subscription never paid is unpaid and briefly valid, whatever due date its creator chose', () => {
    const yearAhead = NOW + 365 * 86_400;
    // the program lets anyone create one due a year out without paying: that is no proof of payment
    expect(policyClaim(policy(sub(yearAhead)), NOW, 259_200)).to.deep.include({ paymentStanding: 'unpaid', nextPaymentDue: yearAhead, validUntil: NOW + DUE_GRACE_SECONDS });
    expect(policyClaim(policy(sub(NOW - 10)), NOW, 259_200)).to.deep.include({ paymentStanding: 'unpaid', validUntil: NOW + DUE_GRACE_SECONDS });
    // its first payment makes it paid through the due date and its grace
    expect(policyClaim(policy(sub(yearAhead), 1), NOW, 259_200)).to.deep.include({ paymentStanding: 'paid', validUntil: yearAhead + 259_200 });
    // the token lasts as long as the claim
    const unpaid = policyClaim(policy(sub(yearAhead)), NOW, 259_200)!;
    expect(tokenExpiry([unpaid], undefined, NOW, 3600)).to.equal(NOW + DUE_GRACE_SECONDS);
  });

  it('pay-as-you-go shows the period the clock is in and what remains of its cap', () => {
    const t: PolicyType = {
      kind: 'PayAsYouGo', max_amount_per_period: '1000', max_chunk_amount: '100', period_length_seconds: '3600',
      current_period_start: String(NOW - 600), current_period_total: '250', expiry_date: null,
    };
    expect(policyClaim(policy(t), NOW)).to.deep.include({ remainingThisPeriod: '750', currentPeriodStart: NOW - 600, currentPeriodEnd: NOW + 3000, validUntil: null });
    // two periods and a bit later, untouched on chain: a fresh period with the whole cap
    const later = NOW + 7300;
    expect(policyClaim(policy(t), later)).to.deep.include({ remainingThisPeriod: '1000', currentPeriodStart: NOW - 600 + 7200 });
    expect(policyClaim(policy({ ...t, expiry_date: String(NOW - 1) }), NOW)).to.equal(undefined);
  });

  it('milestone, one-time and up-to policies end by their own terms', () => {
    const m: PolicyType = {
      kind: 'Milestone', milestone_amounts: ['10', '20', '0', '0'], milestone_timestamps: [String(NOW - 5), String(NOW + 500), '0', '0'],
      current_milestone: 1, release_condition: 0, total_milestones: 2, escrow_amount: '20',
    };
    expect(policyClaim(policy(m), NOW)).to.deep.include({ nextMilestoneAmount: '20', nextMilestoneAt: NOW + 500, validUntil: NOW + 500 });
    const o: PolicyType = { kind: 'OneTime', amount: '5', due_date: String(NOW + 10), expiry_date: String(NOW + 100) };
    expect(policyClaim(policy(o), NOW)?.validUntil).to.equal(NOW + 100);
    const u: PolicyType = { kind: 'UpTo', max_amount: '9', valid_after: String(NOW - 1), deadline: String(NOW + 50) };
    expect(policyClaim(policy(u), NOW)).to.deep.include({ variant: 'UpTo', deadline: NOW + 50, validUntil: NOW + 50 });
    expect(policyClaim(policy(u), NOW + 50)).to.equal(undefined);
  });

  it('exp is the latest proof, capped', () => {
    const a = policyClaim(policy(sub(NOW + 100), 1), NOW)!;
    const b = policyClaim(policy(sub(NOW + 200), 1), NOW)!;
    expect(tokenExpiry([a, b], undefined, NOW, 3600)).to.equal(NOW + 200);
    expect(tokenExpiry([a], undefined, NOW, 60)).to.equal(NOW + 60);
    const open = policyClaim(policy({ kind: 'OneTime', amount: '1', due_date: String(NOW), expiry_date: null }), NOW)!;
    expect(tokenExpiry([a, open], undefined, NOW, 3600)).to.equal(NOW + 3600);
    expect(tokenExpiry([], NOW - 100, NOW, 3600)).to.equal(NOW + 3500);
  });
});
