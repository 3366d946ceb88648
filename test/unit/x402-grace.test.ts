/**
 * A subscription's grace scales with its period: a tenth of it, or what the requirement
 * declares, never more than SUBSCRIPTION_GRACE_SECONDS. A fixed 3 days was a standing
 * discount on short periods (a Daily plan paid once kept access four days). The 402
 * entry says it; the id does not hash it (it is not a term on chain). A token claim of a
 * Completed subscription holds through its last paid period.
 */
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { RequirementError, type DeferredRequirement } from '../../commands/x402/requirements.js';
import { acceptedRequirement, normalizeRequirement } from '../../commands/x402/requirement-forms.js';
import { requirementFromWire } from '../../commands/x402/facilitator/wire.js';
import { policyClaim } from '../../commands/tokens/claims.js';
import { AppError } from '../../src/kernel/http/errors.js';
import type { PolicyType } from '../../src/kernel/domain/policy-type.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';

const key = () => Keypair.generate().publicKey.toBase58();
const base = { scheme: 'deferred' as const, network: 'solana:localnet', amount: 1000, recipient: key(), gateway: key(), tokenMint: key() };
const deferred = (extra: Record<string, unknown>, cap?: number) => normalizeRequirement({ ...base, ...extra }, PROGRAM_ID, cap) as DeferredRequirement;
const NOW = 1_800_000_000;
const sub = (due: number, frequency: 'Daily' | 'Monthly', maxRenewals: number | null = null): PolicyType => ({
  kind: 'Subscription', amount: '1000', auto_renew: true, max_renewals: maxRenewals, payment_frequency: frequency, next_payment_due: String(due),
});

describe('subscription grace', () => {
  it('defaults to a tenth of the period, at most the cap', () => {
    expect(deferred({ paymentFrequency: 'Daily' }).gracePeriodSeconds).to.equal(8_640);
    expect(deferred({ paymentFrequency: 'Monthly' }).gracePeriodSeconds).to.equal(259_200);
    expect(deferred({ paymentFrequency: 'Annually' }).gracePeriodSeconds).to.equal(259_200);
    expect(deferred({ paymentFrequency: 'Custom:60' }).gracePeriodSeconds).to.equal(6);
    expect(deferred({ paymentFrequency: 'Monthly' }, 120).gracePeriodSeconds).to.equal(120);
  });

  it('takes the requirement\'s own, capped, and refuses a negative or fractional one', () => {
    expect(deferred({ paymentFrequency: 'Daily', gracePeriodSeconds: 0 }).gracePeriodSeconds).to.equal(0);
    expect(deferred({ paymentFrequency: 'Daily', gracePeriodSeconds: 600 }).gracePeriodSeconds).to.equal(600);
    expect(deferred({ paymentFrequency: 'Daily', gracePeriodSeconds: 600 }, 300).gracePeriodSeconds).to.equal(300);
    expect(() => deferred({ gracePeriodSeconds: -1 })).to.throw(RequirementError, /gracePeriodSeconds/);
    expect(() => deferred({ gracePeriodSeconds: 1.5 })).to.throw(RequirementError, /gracePeriodSeconds/);
    expect(() => requirementFromWire({ ...base, gracePeriodSeconds: -5 }, PROGRAM_ID)).to.throw(AppError, /gracePeriodSeconds/);
  });

  it('shows in the 402 entry and leaves the id alone', () => {
    const daily = deferred({ paymentFrequency: 'Daily' });
    expect(acceptedRequirement(daily, 'https://x.example/r')).to.include({ gracePeriodSeconds: 8_640, paymentFrequency: 'Daily' });
    expect(deferred({ paymentFrequency: 'Daily', gracePeriodSeconds: 60 }, 30).id).to.equal(daily.id);
    // a facilitator answering with its own cap keeps the id the merchant's entry names
    expect(requirementFromWire({ ...acceptedRequirement(daily, 'https://x.example/r') }, PROGRAM_ID, 120).id).to.equal(daily.id);
  });

  it('a Daily claim of /v1/tokens/issue holds a tenth of a day past its due date, not three days', () => {
    const claim = policyClaim({ address: 'P', gateway: 'G', recipient: 'R', tokenMint: 'M', trackingId: '', totalPaid: '0', paymentCount: 1, policyType: sub(NOW - 60, 'Daily') }, NOW, 259_200);
    expect(claim).to.deep.include({ paymentStanding: 'due', validUntil: NOW - 60 + 8_640 });
    const late = policyClaim({ address: 'P', gateway: 'G', recipient: 'R', tokenMint: 'M', trackingId: '', totalPaid: '0', paymentCount: 1, policyType: sub(NOW - 8_641, 'Daily') }, NOW, 259_200);
    expect(late).to.deep.include({ paymentStanding: 'overdue' });
  });

  it('a Completed subscription claims through its last paid period, then ends', () => {
    const completed = { address: 'P', gateway: 'G', recipient: 'R', tokenMint: 'M', trackingId: '', totalPaid: '1000', paymentCount: 1, status: 'Completed' as const };
    expect(policyClaim({ ...completed, policyType: sub(NOW + 3600, 'Monthly', 0) }, NOW, 259_200))
      .to.deep.include({ status: 'Completed', paymentStanding: 'paid', validUntil: NOW + 3600 + 259_200, maxRenewals: 1, renewalsRemaining: 0 });
    expect(policyClaim({ ...completed, policyType: sub(NOW - 259_201, 'Monthly', 0) }, NOW, 259_200)).to.equal(undefined);
    const oneTime: PolicyType = { kind: 'OneTime', amount: '5', due_date: String(NOW), expiry_date: null };
    expect(policyClaim({ ...completed, policyType: oneTime }, NOW, 259_200)).to.equal(undefined);
  });
});
