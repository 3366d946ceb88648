/** nestsDeeperThan: the levels JSON nests, counted by a loop (no depth overflows it), stopping past the limit. */
import { expect } from 'chai';
import { nestsDeeperThan } from '../../infra/http/json-depth.js';

const arrays = (n: number): unknown => JSON.parse('['.repeat(n) + ']'.repeat(n));

describe('nestsDeeperThan', () => {
  it('counts a scalar as 0 levels and each array or object as one more', () => {
    expect(nestsDeeperThan(1, 0)).to.equal(false);
    expect(nestsDeeperThan({}, 0)).to.equal(true);
    expect(nestsDeeperThan({}, 1)).to.equal(false);
    expect(nestsDeeperThan({ a: {} }, 1)).to.equal(true);
    expect(nestsDeeperThan({ a: [{}] }, 2)).to.equal(true);
    expect(nestsDeeperThan({ a: [{}] }, 3)).to.equal(false);
    expect(nestsDeeperThan([[1]], 1)).to.equal(true);
    expect(nestsDeeperThan([[1]], 2)).to.equal(false);
  });

  it('holds exactly at the limit and refuses one level past it, in any branch', () => {
    expect(nestsDeeperThan(arrays(32), 32)).to.equal(false);
    expect(nestsDeeperThan(arrays(33), 32)).to.equal(true);
    expect(nestsDeeperThan({ ok: arrays(31), deep: [1, 2, { x: arrays(31) }] }, 32)).to.equal(true);
    expect(nestsDeeperThan(JSON.parse('{"__proto__":{"a":{"b":{}}}}'), 3)).to.equal(true);
  });

  it('walks 100,000 levels without overflowing the stack', () => {
    expect(nestsDeeperThan(arrays(100_000), 32)).to.equal(true);
    expect(nestsDeeperThan(arrays(100_000), 100_000)).to.equal(false);
  });
});
