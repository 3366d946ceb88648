/**
 * Pay-as-you-go periods as the program keeps them, and when usage must be charged. The
 * program (shared/schedule.rs, validate_policy_execution and advance_policy for PayAsYouGo)
 * starts a new period at the first charge after the current one ends (current_period_start =
 * that charge's Clock::unix_timestamp, current_period_total = its amount), not on a grid of
 * whole periods, and refuses every charge after expiry_date.
 */
import { expect } from 'chai';
import { currentPeriod, EXPIRY_MARGIN_SECONDS, meterRequest } from '../../commands/x402/metering.js';
import { chargeDue, expiresWithin } from '../../commands/settlement/plan.js';
import { normalizeRequirement } from '../../commands/x402/requirement-forms.js';
import { schemeOf } from '../../commands/x402/schemes/index.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import type { PayAsYouGoType } from '../../src/kernel/domain/policy-type.js';

const t: PayAsYouGoType = {
  kind: 'PayAsYouGo', max_amount_per_period: '100', max_chunk_amount: '30', period_length_seconds: '60',
  current_period_start: '1000', current_period_total: '80', expiry_date: null,
};

describe('pay-as-you-go: the period usage is charged in', () => {
  it('is the chain\'s own while it runs, with what the chain charged in it', () => {
    expect(currentPeriod(t, 1059)).to.deep.equal({ start: 1000n, end: 1060n, settled: 80n });
  });
  it('once it ended, is one period waiting for the next charge to open it, however many periods passed', () => {
    expect(currentPeriod(t, 1060)).to.deep.equal({ start: 1060n, end: 1120n, settled: 0n });
    // a grid would have rolled to 1120 and then 1180 while the chain's next period had not begun
    expect(currentPeriod(t, 1190)).to.deep.equal({ start: 1060n, end: 1250n, settled: 0n });
  });
});

describe('pay-as-you-go: when usage is charged', () => {
  const o = { nowMs: 1_010_000, chainNowSeconds: 1010, thresholdAmount: 1000n, intervalMs: 60_000, rolloverMarginSeconds: 5 };
  it('at once when it fills a charge (max_chunk_amount)', () => {
    expect(chargeDue(29n, 1_009_000, t, o)).to.equal(false);
    expect(chargeDue(30n, 1_009_000, t, o)).to.equal(true);
  });
  it('before the chain\'s period ends, by the chain\'s clock, not the local one', () => {
    expect(chargeDue(10n, 1_069_000, t, { ...o, nowMs: 1_070_000, chainNowSeconds: 1040 })).to.equal(false);
    expect(chargeDue(10n, 1_009_000, t, { ...o, chainNowSeconds: 1055 })).to.equal(true);
  });
  it('before the policy expires: within the rollover margin and the settle interval of its expiry_date', () => {
    const expiring = { ...t, current_period_start: '5000', expiry_date: '1100' };
    expect(chargeDue(10n, 1_009_000, expiring, o)).to.equal(false);
    expect(chargeDue(10n, 1_009_000, expiring, { ...o, chainNowSeconds: 1035 })).to.equal(true);
    expect(expiresWithin({ ...t, expiry_date: '0' }, 10_000, 60)).to.equal(false);
  });
});

describe('pay-as-you-go: the shortest expiry a new policy may have', () => {
  it('none, or at least minExpirySeconds ahead', () => {
    const r = normalizeRequirement({
      scheme: 'x402://payg', network: 'solana:localnet', amount: 30, maxChunkAmount: 30, maxAmountPerPeriod: 100, periodLengthSeconds: 60, minExpirySeconds: 3660,
      recipient: PROGRAM_ID, gateway: PROGRAM_ID, tokenMint: PROGRAM_ID,
    }, PROGRAM_ID);
    const expiryProblem = (expiry: string | null) => schemeOf(r).newPolicy(r, { ...t, expiry_date: expiry }, 1000);
    expect(expiryProblem(null)).to.equal(undefined);
    expect(expiryProblem('0')).to.equal(undefined);
    expect(expiryProblem('4660')).to.equal(undefined);
    expect(expiryProblem('1020')).to.equal(
      'the pay-as-you-go policy expires at 1020, sooner than the requirement\'s minExpirySeconds (3660) from now allows (4660 at the earliest): usage near its end could not be charged',
    );
  });
});

describe('pay-as-you-go: usage near the policy\'s expiry', () => {
  it('is refused when it could not be charged before the expiry, before anything is counted', async () => {
    const expiring = { ...t, expiry_date: String(1000 + EXPIRY_MARGIN_SECONDS) };
    const noRedis = {} as never; // refused before the counter is asked
    expect(await meterRequest(noRedis, 'p:', 'policy', expiring, 10n, 1000)).to.deep.equal({
      ok: false, reason: `the pay-as-you-go policy expires at ${1000 + EXPIRY_MARGIN_SECONDS}: usage within ${EXPIRY_MARGIN_SECONDS} s of its expiry could not be charged before it`,
    });
  });
});
