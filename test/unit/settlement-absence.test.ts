/**
 * A policy read missing is gone only when a read at least the confirmation window later says
 * so too (commands/settlement/absence.ts).
 */
import { expect } from 'chai';
import { createAbsences } from '../../commands/settlement/absence.js';

describe('settlement: policies read missing', () => {
  let now = 1_000_000;
  const clock = () => now;

  it('one answer is not a deletion; a read the window later confirms it', () => {
    const a = createAbsences(30_000, clock);
    expect(a.missing('p')).to.equal(false);
    now += 29_999;
    expect(a.missing('p')).to.equal(false);
    now += 1;
    expect(a.missing('p')).to.equal(true);
  });

  it('a read that finds the policy ends the sighting', () => {
    const a = createAbsences(30_000, clock);
    expect(a.missing('p')).to.equal(false);
    now += 10_000;
    a.found('p');
    now += 25_000;
    expect(a.missing('p'), 'a first answer again').to.equal(false);
  });

  it('a sighting no read followed for a minute starts over, and is pruned', () => {
    const a = createAbsences(30_000, clock);
    expect(a.missing('p')).to.equal(false);
    now += 60_001;
    expect(a.missing('p'), 'a first answer again').to.equal(false);
    now += 30_000;
    expect(a.missing('p')).to.equal(true);
    expect(a.missing('q')).to.equal(false);
    now += 60_001;
    a.prune();
    now += 1;
    expect(a.missing('q'), 'pruned: a first answer').to.equal(false);
  });

  it('a window of zero takes the first answer', () => {
    expect(createAbsences(0, clock).missing('p')).to.equal(true);
  });
});
