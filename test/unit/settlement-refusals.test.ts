/**
 * What becomes of metered usage whose charge the chain refused (commands/settlement/refusals.ts),
 * as given/when/then: never billable at once, transient retried within seconds, a payer
 * who cannot pay retried on the schedule and then given up, a paused policy waiting as
 * long as the schedule.
 */
import { expect } from 'chai';
import { failure } from '../../commands/scheduler/failure.js';
import { afterRefusedCharge, capExceeded, nextChargeAtMs, pausedUsage } from '../../commands/settlement/refusals.js';

const o = { nowMs: 1_000_000, scheduleMs: [1000, 5000], retryMs: 200 };

describe('settler: refused charges', () => {
  it('deleted, completed, expired or past the cap → unbillable at once with the chain\'s reason', () => {
    for (const f of [
      failure('PolicyNotFound', 'no payment policy at X (deleted)'), failure('PolicyCompleted', 'the policy is Completed'),
      failure('PolicyExpired', 'PolicyExpired (6065): expired'), capExceeded(30n, 10n, 100n),
    ]) {
      expect(afterRefusedCharge(f, 0, o)).to.deep.equal({ kind: 'unbillable', outcome: 'dropped', reason: f.reason });
    }
    expect(capExceeded(30n, 10n, 100n).reason).to.match(/^InsufficientDelegatedAmount \(6005\): the charge of 30 exceeds the 10 left under the period's cap of 100$/);
  });

  it('RPC and blockhash errors → retried within seconds, not counted', () => {
    expect(afterRefusedCharge(failure('BlockhashNotFound', 'expired'), 7, o)).to.deep.equal({ kind: 'retry', outcome: 'retry', atMs: 1_000_200 });
  });

  it('a payer who cannot pay → the retry schedule, then given up with the chain\'s reason', () => {
    const f = failure('NoDelegateSet', 'NoDelegateSet (6008): no delegate');
    expect(afterRefusedCharge(f, 0, o)).to.deep.equal({ kind: 'retry', outcome: 'past_due', atMs: 1_001_000 });
    expect(afterRefusedCharge(f, 1, o)).to.deep.equal({ kind: 'retry', outcome: 'past_due', atMs: 1_005_000 });
    const given = afterRefusedCharge(f, 2, o);
    expect(given).to.include({ kind: 'unbillable', outcome: 'given_up' });
    expect(given.kind === 'unbillable' && given.reason).to.equal('NoDelegateSet (6008): no delegate (refused 3 times; the retry schedule is spent)');
  });

  it('the program\'s emergency pause → charged again within seconds, however many refusals are counted: never past due, never given up', () => {
    const f = failure('ProgramPaused', 'the program is paused by its admin (emergency pause): charged once it is lifted');
    for (const earlier of [0, 1, 2, 7]) expect(afterRefusedCharge(f, earlier, o)).to.deep.equal({ kind: 'retry', outcome: 'retry', atMs: 1_005_000 });
  });

  it('paused after it was read → waits on the schedule like a payer who cannot pay', () => {
    expect(afterRefusedCharge(failure('PolicyPaused', 'paused'), 0, o)).to.deep.equal({ kind: 'retry', outcome: 'past_due', atMs: 1_001_000 });
  });

  it('the next try after the last refusal follows the schedule; none before the first', () => {
    expect(nextChargeAtMs(0, 5, o.scheduleMs)).to.equal(0);
    expect(nextChargeAtMs(1, 10_000, o.scheduleMs)).to.equal(11_000);
    expect(nextChargeAtMs(2, 10_000, o.scheduleMs)).to.equal(15_000);
  });

  it('a paused policy\'s usage waits the whole schedule, then is given up', () => {
    expect(pausedUsage(o.nowMs - 5999, o)).to.equal(undefined);
    expect(pausedUsage(o.nowMs - 6000, o)).to.deep.include({ kind: 'unbillable', outcome: 'given_up' });
  });
});
