/** A pause and its resume landing in one slot are announced in the order they happened, read off the policy's status now. */
import { expect } from 'chai';
import { inChainOrder } from '../../commands/scheduler/status-changes.js';

const change = (policy: string, slot: string, newStatus: string, status: string) => ({ policy, slot, new_status: newStatus, status });

describe('scheduler: status changes in chain order', () => {
  it('puts the change that left the policy as it is now last within its slot', () => {
    const rows = [change('P', '7', 'Active', 'Active'), change('P', '7', 'Paused', 'Active')];
    expect(inChainOrder(rows).map((c) => c.new_status)).to.deep.equal(['Paused', 'Active']);
    const pausedNow = [change('P', '7', 'Paused', 'Paused'), change('P', '7', 'Active', 'Paused')];
    expect(inChainOrder(pausedNow).map((c) => c.new_status)).to.deep.equal(['Active', 'Paused']);
  });

  it('keeps the order of slots, and of changes in other slots', () => {
    const rows = [change('P', '5', 'Paused', 'Active'), change('Q', '6', 'Active', 'Active'), change('P', '7', 'Active', 'Active')];
    expect(inChainOrder(rows)).to.deep.equal(rows);
  });
});
