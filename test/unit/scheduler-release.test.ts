/**
 * Which milestones the gateway's signer may release, as the program's
 * validate_policy_execution decides (shared/schedule.rs): bit 1 names the gateway's
 * signer, bit 2 the owner, bit 3 the recipient; bit 0 (the due date) names no signer.
 */
import { expect } from 'chai';
import { gatewayMayRelease } from '../../commands/scheduler/release.js';
import type { PolicyType } from '../../src/kernel/domain/policy-type.js';

const milestone = (releaseCondition: number): PolicyType => ({
  kind: 'Milestone', milestone_amounts: ['1', '0', '0', '0'], milestone_timestamps: ['0', '0', '0', '0'], current_milestone: 0,
  release_condition: releaseCondition, total_milestones: 1, escrow_amount: '1',
});

describe('scheduler: milestones the gateway\'s signer may release', () => {
  it('no signer bit, or the gateway\'s: yes; the owner\'s or the recipient\'s: never', () => {
    const table = [[0, true], [1, true], [2, true], [3, true], [4, false], [5, false], [8, false], [9, false], [16, true], [17, true]] as const;
    for (const [rc, may] of table) expect(gatewayMayRelease(milestone(rc)), `release_condition ${rc}`).to.equal(may);
  });
  it('other variants are not gated by a signer', () => {
    expect(gatewayMayRelease({ kind: 'OneTime', amount: '1', due_date: '0', expiry_date: null })).to.equal(true);
  });
});
