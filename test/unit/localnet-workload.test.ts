/**
 * The workload is a story the seed tells: the same seed yields the same sequence of
 * events, every kind of event appears, failures leave no events, and event identities
 * follow the indexer's rule (log events first, then self-CPI events).
 */
import { expect } from 'chai';
import { EVENT_NAMES } from '../../src/kernel/events/catalog.js';
import { createChain, type Chain } from '../../infra/localnet/chain.js';
import { createGenesisAccounts, deriveActors, runGenesisTransactions } from '../../infra/localnet/genesis.js';
import { createWorkload } from '../../infra/localnet/workload.js';

function run(seed: string, events: number): Chain {
  let t = 1_800_000_000_000;
  const chain = createChain(seed, () => t);
  const actors = deriveActors(seed);
  createGenesisAccounts(chain, actors);
  runGenesisTransactions(chain, actors);
  // ticks bounded by wall time would make the story depend on the machine's speed
  const workload = createWorkload(chain, actors, { rate: 1_000, cpiEventShare: 0.2, maxTickMs: Number.POSITIVE_INFINITY });
  while (chain.ledger().length < events) {
    t += 400;
    chain.advanceSlot();
    workload.tick(400);
  }
  return chain;
}

describe('localnet workload: a tick shares the thread with the RPC', function () {
  this.timeout(60_000);

  it('spends at most its wall time on a backlog and keeps the rest of the budget for the next ticks', () => {
    let t = 1_800_000_000_000;
    const chain = createChain('tick-bound', () => t);
    const actors = deriveActors('tick-bound');
    createGenesisAccounts(chain, actors);
    runGenesisTransactions(chain, actors);
    const workload = createWorkload(chain, actors, { rate: 100_000, cpiEventShare: 0.2, maxTickMs: 20 });
    const started = performance.now();
    workload.tick(5_000); // 5 s late on a loaded machine: a backlog of 500,000 events, kept up to 5 s of the rate
    const spent = performance.now() - started;
    const first = workload.stats().events;
    expect(spent, 'one tick blocked the thread').to.be.below(20 + 250);
    expect(first).to.be.above(0);
    t += 400;
    workload.tick(0); // no new budget: the backlog goes on
    expect(workload.stats().events).to.be.above(first);
  });
});

describe('localnet workload', function () {
  this.timeout(60_000);
  let a: Chain;

  before(() => {
    a = run('determinism', 3_000);
  });

  it('replays the same events for the same seed', () => {
    const b = run('determinism', 1_000);
    const shape = (c: Chain): string[] => c.ledger().slice(0, 1_000).map((e) => `${e.name}:${e.ixPath}:${e.index}:${e.signature}`);
    expect(shape(b)).to.deep.equal(shape(a));
    const c = run('another-seed', 100);
    expect(c.ledger()[20]?.signature).to.not.equal(a.ledger()[20]?.signature);
  });

  it('emits every event of the IDL', () => {
    const names = new Set(a.ledger().map((e) => e.name));
    expect([...EVENT_NAMES].filter((n) => !names.has(n))).to.deep.equal([]);
  });

  it('covers all five policy types with trackingId memos', () => {
    const created = a.ledger().filter((e) => e.name === 'PaymentPolicyCreated');
    const kinds = new Set(created.map((e) => (e.data['policy_type'] as { kind: string }).kind));
    expect([...kinds].sort()).to.deep.equal(['Milestone', 'OneTime', 'PayAsYouGo', 'Subscription', 'UpTo']);
    expect(created.filter((e) => /^trk-\d+$/.test(e.data['memo'])).length).to.be.greaterThan(created.length / 2);
  });

  it('records failed transactions without events and events of others programs nowhere', () => {
    const failed = a.transactions().filter((t) => t.err !== null);
    expect(failed.length).to.be.greaterThan(0);
    expect(failed.every((t) => t.events.length === 0)).to.equal(true);
    expect(failed.some((t) => t.logs.some((l) => l.startsWith('Program data:')))).to.equal(true);
    const noisy = a.transactions().filter((t) => t.logs.some((l) => l.startsWith('Program NoiseProgram')));
    expect(noisy.length).to.be.greaterThan(0);
  });

  it('numbers log events before self-CPI events within a transaction', () => {
    const cpi = a.ledger().filter((e) => e.ixPath.includes('.'));
    expect(cpi.length).to.be.greaterThan(100);
    for (const tx of a.transactions()) {
      const ev = tx.events;
      ev.forEach((e, i) => expect(e.index).to.equal(i));
      const firstCpi = ev.findIndex((e) => e.ixPath.includes('.'));
      if (firstCpi >= 0) expect(ev.slice(firstCpi).every((e) => e.ixPath.includes('.'))).to.equal(true);
    }
  });
});
