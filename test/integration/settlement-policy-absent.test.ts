/**
 * A pay-as-you-go policy the chain answers missing once is not a deleted policy: its usage is
 * made unbillable only when a read at least PAYG_ABSENCE_CONFIRM_MS later says the same.
 *
 * An RPC node behind the one that confirmed a policy's creation (a pool of nodes, one lagging
 * some seconds) answers getAccountInfo with no account. The settler read that as "deleted" and
 * made every chunk the policy had served unbillable in that round: the merchant was never paid
 * for requests it served. The localnet's RPC here answers the policy missing as such a node does
 * (chain-timing.ts).
 */
import { expect } from 'chai';
import { payAndFetch } from '../../src/app/index.js';
import { createLogger } from '../../infra/log/logger.js';
import { startSettler } from '../../commands/settlement/settler.js';
import { DEMO_PATH } from './x402-harness.js';
import { laggingAccount } from './chain-timing.js';
import { demoPaygEnv, startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';

const PRICE = 10_000n;
const CONFIRM_MS = 30_000;

describe('pay-as-you-go: a policy read missing once (a node behind) keeps its usage billable', function () {
  this.timeout(90_000);
  let s: SchedulerHarness;
  before(async () => { s = await startSchedulerHarness('payg-policy-absent', { ...demoPaygEnv(PRICE, 500) }); });
  after(async () => { await s?.close(); });

  /** A payg policy with `requests` metered chunks, past their admission window. */
  async function metered(requests: number): Promise<string> {
    const paid = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'x402://payg' });
    expect(paid.response.status).to.equal(200);
    for (let i = 1; i < requests; i += 1) {
      const again = await fetch(`${s.h.api.url}${DEMO_PATH}`, { headers: { authorization: `Bearer ${paid.paid!.jwt}` } });
      expect(again.status).to.equal(200);
    }
    await new Promise((r) => setTimeout(r, 5500)); // past the chunks' admission window
    return paid.paid!.policy!;
  }

  /**
   * `rounds` run by a settler whose RPC answers `policy` missing while `lag.behind`, on a clock `rounds`
   * moves forward (`advance`), the confirmation window CONFIRM_MS; stopped after them.
   */
  async function settleLagging(policy: string, rounds: (r: { tick: () => Promise<void>; advance: (ms: number) => void; lag: { behind: boolean } }) => Promise<void>): Promise<void> {
    const lag = { behind: true };
    let nowMs = Date.now();
    const config = { ...s.config, scheduler: { ...s.config.scheduler, absenceConfirmMs: CONFIRM_MS, settleIntervalMs: 0 } };
    const io = { ...s.io, rpc: laggingAccount(s.io.rpc, policy, () => lag.behind) };
    const settler = startSettler({ db: s.h.env.db, io, config, logger: createLogger('silent', 'test'), nowMs: () => nowMs }, { autoStart: false });
    try {
      await rounds({ tick: () => settler.tick(), advance: (ms) => { nowMs += ms; }, lag });
    } finally {
      await settler.stop();
    }
  }
  const reasons = async (policy: string) => (await s.h.env.db.selectFrom('payg_usage').select('unbillable_reason').where('policy', '=', policy).execute()).map((u) => u.unbillable_reason);

  it('read missing, then found: nothing unbillable, every chunk charged', async () => {
    const policy = await metered(2);
    await settleLagging(policy, async ({ tick, advance, lag }) => {
      await tick();
      expect(await reasons(policy), 'one answer of a node behind makes nothing unbillable').to.deep.equal([null, null]);
      // a read less than the confirmation window later still says missing: still nothing dropped
      advance(CONFIRM_MS - 1000);
      await tick();
      expect(await reasons(policy)).to.deep.equal([null, null]);
      // the node caught up
      lag.behind = false;
      advance(2000);
      await tick();
    });
    expect(s.records(policy).reduce((a, r) => a + r.amount, 0n), 'both chunks charged').to.equal(2n * PRICE);
    expect(await reasons(policy)).to.deep.equal([null, null]);
  });

  it('missing on a read the confirmation window later too: unbillable, with the chain\'s reason', async () => {
    const policy = await metered(1);
    await settleLagging(policy, async ({ tick, advance }) => {
      await tick();
      expect(await reasons(policy)).to.deep.equal([null]);
      advance(CONFIRM_MS);
      await tick();
    });
    const rows = await reasons(policy);
    expect(rows).to.have.length(1);
    expect(rows[0]).to.match(/no payment policy at .* \(deleted\)/);
    expect(s.records(policy)).to.deep.equal([]);
  });

  it('a sighting long past starts over: missing again after the policy left the settler\'s rounds is a first answer, not a confirmation', async () => {
    const policy = await metered(1);
    await settleLagging(policy, async ({ tick, advance, lag }) => {
      await tick();
      // ten minutes with no read of it (another settler process had its usage), then a node behind again
      advance(600_000);
      await tick();
      expect(await reasons(policy)).to.deep.equal([null]);
      lag.behind = false;
      advance(1000);
      await tick();
    });
    expect(s.records(policy).reduce((a, r) => a + r.amount, 0n)).to.equal(PRICE);
  });
});
