/**
 * What one payment does to a policy, and when the next one is due: given a policy type,
 * when a payment lands, then the type and status the program would hold.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { frequencySeconds } from '../../src/kernel/domain/frequency.js';
import { applyPayment, nextPaymentDue, statusAfterPayment } from '../../src/kernel/domain/schedule.js';
import type { MilestoneType, PayAsYouGoType, SubscriptionType } from '../../src/kernel/domain/policy-type.js';

const sub = (o: Partial<SubscriptionType> = {}): SubscriptionType => ({
  kind: 'Subscription', amount: '100', auto_renew: true, max_renewals: null, payment_frequency: 'Monthly', next_payment_due: '1000', ...o,
});
const pay = (amount: bigint, timestamp: bigint) => ({ amount, timestamp });

describe('domain: payment frequency', () => {
  it('counts fixed days, as the program does', () => {
    expect(frequencySeconds('Daily')).to.equal(86_400n);
    expect(frequencySeconds('Weekly')).to.equal(604_800n);
    expect(frequencySeconds('Monthly')).to.equal(2_592_000n);
    expect(frequencySeconds('Quarterly')).to.equal(7_776_000n);
    expect(frequencySeconds('SemiAnnually')).to.equal(15_552_000n);
    expect(frequencySeconds('Annually')).to.equal(31_536_000n);
    expect(frequencySeconds({ kind: 'Custom', value: '18446744073709551615' })).to.equal(18446744073709551615n);
  });
});

describe('domain: a payment applied to a policy', () => {
  it('Subscription: a fixed step moves the due date to the first one after the payment, skipping missed periods', () => {
    const daily = sub({ payment_frequency: 'Daily', next_payment_due: '1000' });
    expect(applyPayment(daily, 1, pay(100n, 1_000n)).policyType).to.include({ next_payment_due: String(1000 + 86_400) });
    expect(applyPayment(daily, 1, pay(100n, 1_000n + 86_400n * 3n + 5n)).policyType).to.include({ next_payment_due: String(1000 + 86_400 * 4) });
    expect(applyPayment(daily, 1, pay(100n, 0n)).policyType, 'not yet due: unchanged').to.include({ next_payment_due: '1000' });
  });

  it('Subscription: Monthly and longer step calendar months, the clamped day carried (Jan 31 → Feb 29 → Mar 29)', () => {
    const jan31 = String(Date.UTC(2024, 0, 31, 10, 30) / 1000);
    const a = applyPayment(sub({ next_payment_due: jan31 }), 1, pay(1n, BigInt(jan31))).policyType as SubscriptionType;
    expect(new Date(Number(a.next_payment_due) * 1000).toISOString()).to.equal('2024-02-29T10:30:00.000Z');
    const b = applyPayment(a, 2, pay(1n, BigInt(a.next_payment_due))).policyType as SubscriptionType;
    expect(new Date(Number(b.next_payment_due) * 1000).toISOString()).to.equal('2024-03-29T10:30:00.000Z');
    const q = applyPayment(sub({ next_payment_due: jan31, payment_frequency: 'Quarterly' }), 1, pay(1n, BigInt(jan31))).policyType as SubscriptionType;
    expect(new Date(Number(q.next_payment_due) * 1000).toISOString()).to.equal('2024-04-30T10:30:00.000Z');
  });

  it('Subscription: max_renewals counts down; completes at 0, or at once without auto_renew; never without max_renewals', () => {
    const three = applyPayment(sub({ max_renewals: 3 }), 1, pay(1n, 1000n));
    expect(three.policyType).to.include({ max_renewals: 2 });
    expect(three.completes).to.equal(false);
    expect(applyPayment(sub({ max_renewals: 1 }), 3, pay(1n, 1000n)).completes).to.equal(true);
    expect(applyPayment(sub({ max_renewals: 5, auto_renew: false }), 1, pay(1n, 1000n)).completes).to.equal(true);
    expect(applyPayment(sub({ max_renewals: null, auto_renew: false }), 1, pay(1n, 1000n)).completes).to.equal(false);
  });

  it('Subscription: an i64 overflow saturates rather than failing', () => {
    const r = applyPayment(sub({ next_payment_due: '9223372036854775000', payment_frequency: { kind: 'Custom', value: '18446744073709551615' } }), 1, pay(1n, 9223372036854775000n));
    expect((r.policyType as SubscriptionType).next_payment_due).to.equal('9223372036854775807');
  });

  it('Milestone: the next milestone (the escrow figure stays), completes at the last', () => {
    const m: MilestoneType = {
      kind: 'Milestone', milestone_amounts: ['10', '20', '0', '0'], milestone_timestamps: ['100', '200', '0', '0'],
      current_milestone: 0, release_condition: 0, total_milestones: 2, escrow_amount: '30',
    };
    expect(nextPaymentDue(m, 'Active')).to.equal('100');
    const one = applyPayment(m, 1, pay(10n, 100n));
    expect(one.policyType).to.include({ current_milestone: 1, escrow_amount: '30' });
    expect(one.completes).to.equal(false);
    expect(nextPaymentDue(one.policyType, 'Active')).to.equal('200');
    const two = applyPayment(one.policyType, 2, pay(25n, 200n));
    expect(two.policyType).to.include({ current_milestone: 2, escrow_amount: '30' });
    expect(two.completes).to.equal(true);
    expect(nextPaymentDue(two.policyType, 'Active')).to.equal(null);
  });

  it('PayAsYouGo: accumulates within a period; a payment past its end starts a new one at the payment', () => {
    const p: PayAsYouGoType = {
      kind: 'PayAsYouGo', max_amount_per_period: '1000', max_chunk_amount: '500', period_length_seconds: '100',
      current_period_start: '1000', current_period_total: '0', expiry_date: null,
    };
    const a = applyPayment(p, 1, pay(300n, 1050n)).policyType as PayAsYouGoType;
    expect(a).to.include({ current_period_start: '1000', current_period_total: '300' });
    const b = applyPayment(a, 2, pay(200n, 1350n)).policyType as PayAsYouGoType;
    expect(b).to.include({ current_period_start: '1350', current_period_total: '200' });
    expect(applyPayment(b, 3, pay(1n, 1399n)).completes).to.equal(false);
    expect(nextPaymentDue(b, 'Active')).to.equal(null);
  });

  it('OneTime and UpTo complete after one execution', () => {
    expect(applyPayment({ kind: 'OneTime', amount: '5', due_date: '10', expiry_date: null }, 1, pay(5n, 10n)).completes).to.equal(true);
    expect(applyPayment({ kind: 'UpTo', max_amount: '5', valid_after: '0', deadline: '10' }, 1, pay(3n, 5n)).completes).to.equal(true);
    expect(nextPaymentDue({ kind: 'OneTime', amount: '5', due_date: '10', expiry_date: null }, 'Paused')).to.equal('10');
  });

  it('Completed is terminal; nothing is due on a Completed policy', () => {
    expect(statusAfterPayment('Paused', false)).to.equal('Paused');
    expect(statusAfterPayment('Active', true)).to.equal('Completed');
    expect(nextPaymentDue(sub(), 'Completed')).to.equal(null);
  });

  it('property: n payments, each made when due, move the due date by exactly n periods', () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 2_000_000_000 }), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 10_000_000 }),
      (start, n, period) => {
        let t: SubscriptionType = sub({ next_payment_due: String(start), payment_frequency: { kind: 'Custom', value: String(period) } });
        for (let i = 1; i <= n; i += 1) t = applyPayment(t, i, pay(1n, BigInt(t.next_payment_due))).policyType as SubscriptionType;
        return BigInt(t.next_payment_due) === BigInt(start) + BigInt(n) * BigInt(period);
      },
    ));
  });

  it('property: a payment lands the due date in (now, now + period]', () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 2_000_000_000 }), fc.integer({ min: 0, max: 1_000_000_000 }), fc.integer({ min: 1, max: 10_000_000 }),
      (due, late, period) => {
        const now = BigInt(due + late);
        const t = sub({ next_payment_due: String(due), payment_frequency: { kind: 'Custom', value: String(period) } });
        const next = BigInt((applyPayment(t, 1, pay(1n, now)).policyType as SubscriptionType).next_payment_due);
        return next > now && next <= now + BigInt(period) && (next - BigInt(due)) % BigInt(period) === 0n;
      },
    ));
  });
});
