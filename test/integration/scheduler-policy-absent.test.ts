/**
 * A subscription whose policy the chain answers missing once is not a deleted policy: its due
 * payment is dropped (PolicyNotFound) only when a read at least PAYG_ABSENCE_CONFIRM_MS later
 * says the same; until then it is tried again on the short retry, counted nowhere.
 *
 * An RPC node behind the one that confirmed a policy's creation (a pool of nodes, one lagging
 * some seconds) answers with no account. The scheduler read that as "deleted" and dropped the
 * period's intent, never to be tried again: the payer kept access through the grace and the
 * merchant was never paid. The scheduler's RPC here answers an account missing as such a node
 * does (chain-timing.ts), to the batch's getMultipleAccounts as to getAccountInfo.
 */
import { expect } from 'chai';
import { payAndFetch } from '../../src/app/index.js';
import { createLogger } from '../../infra/log/logger.js';
import { text } from '../../src/kernel/domain/event-data.js';
import { startScheduler } from '../../commands/scheduler/scheduler.js';
import { enqueueDue } from '../../commands/scheduler/intents.js';
import { syncGatewayStates } from '../../commands/scheduler/gateway-sync.js';
import { waitFor } from '../support/process.js';
import { DEMO_PATH } from './x402-harness.js';
import { accountOf } from './scheduler-chain.js';
import { laggingAccount } from './chain-timing.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';

const CONFIRM_MS = 30_000;

describe('scheduler: a policy read missing once (a node behind) is charged, not dropped', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;
  before(async () => { s = await startSchedulerHarness('sched-policy-absent', { X402_DEMO_FREQUENCY: 'Custom:5' }); });
  after(async () => { await s?.close(); });

  const intents = (policy: string) => s.h.env.db.selectFrom('execution_intents').selectAll().where('policy', '=', policy).orderBy('due_at').execute();
  const attempts = async (policy: string) => (await s.h.env.db.selectFrom('execution_attempts').select(['outcome', 'reason_code']).where('policy', '=', policy).orderBy('id').execute())
    .map((a) => [a.outcome, a.reason_code]);
  const paymentCount = async (policy: string) => Number((await accountOf(s.io.rpc, policy))['payment_count']);

  /** A subscription paid for its first period, whose next due payment is an intent ready to be claimed. */
  async function duePayment(): Promise<string> {
    const r = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    expect(r.response.status).to.equal(200);
    const policy = r.paid!.policy!;
    await syncGatewayStates(s.h.env.db, s.io);
    await waitFor(async () => {
      await enqueueDue(s.h.env.db, Math.floor(Date.now() / 1000));
      return (await intents(policy)).length > 0;
    }, 30_000, 'the next due payment queued');
    return policy;
  }

  /**
   * `rounds` run by a scheduler whose RPC answers `address` missing while `lag.behind` (`missed`:
   * how many of its answers did), on a clock `rounds` moves forward (`advance`), the
   * confirmation window CONFIRM_MS; stopped after them.
   */
  async function scheduleLagging(
    address: string,
    rounds: (r: { tick: () => Promise<void>; advance: (ms: number) => void; lag: { behind: boolean }; missed: () => number }) => Promise<void>,
  ): Promise<void> {
    const lag = { behind: true };
    let aheadMs = 0;
    const rpc = laggingAccount(s.io.rpc, address, () => lag.behind);
    const config = { ...s.config, scheduler: { ...s.config.scheduler, absenceConfirmMs: CONFIRM_MS } };
    const nowMs = (): number => Date.now() + aheadMs;
    const scheduler = startScheduler({ db: s.h.env.db, io: { ...s.io, rpc }, config, logger: createLogger('silent', 'test'), nowMs }, { autoStart: false });
    try {
      await rounds({ tick: () => scheduler.tick(), advance: (ms) => { aheadMs += ms; }, lag, missed: () => rpc.missed });
    } finally {
      await scheduler.stop();
    }
  }
  /** Past the scheduler's short retry: an intent released for it is claimed by the next round. */
  const retried = () => new Promise((r) => setTimeout(r, s.config.scheduler.retryMs + 200));

  for (const missing of ['policy', 'user payment'] as const) {
    it(`its ${missing} read missing, then found: the period charged once, the intent executed`, async () => {
      const policy = await duePayment();
      const address = missing === 'policy' ? policy : text(await accountOf(s.io.rpc, policy), 'user_payment');
      const before = await paymentCount(policy);
      await scheduleLagging(address, async ({ tick, lag, missed }) => {
        await tick();
        expect(missed(), 'the due payment read from the node behind').to.be.above(0);
        const [read] = await intents(policy);
        expect(read!.status, 'one answer of a node behind drops nothing').to.equal('pending');
        expect([read!.dunning_step, read!.consecutive_failures], 'nor counts towards the dunning schedule or the cooldown').to.deep.equal([0, 0]);
        expect(await attempts(policy)).to.deep.equal([]);
        lag.behind = false; // the node caught up
        await waitFor(async () => { await tick(); return (await intents(policy))[0]!.status === 'executed'; }, 20_000, 'the intent executed');
      });
      const [paid] = await intents(policy);
      expect(await paymentCount(policy), 'the period charged once').to.equal(before + 1);
      expect(s.records(policy).filter((r) => r.signature === paid!.signature)).to.have.length(1);
      expect(await attempts(policy)).to.deep.equal([['executed', '']]);
    });
  }

  it('missing on a read the confirmation window later too: dropped with PolicyNotFound, as a deleted policy', async () => {
    const policy = await duePayment();
    const before = await paymentCount(policy);
    await scheduleLagging(policy, async ({ tick, advance, missed }) => {
      await tick();
      const first = missed();
      expect(first, 'the due payment read from the node behind').to.be.above(0);
      // read again before the window has passed: still nothing dropped
      await retried();
      await tick();
      expect(missed(), 'read again').to.be.above(first);
      expect((await intents(policy))[0]!.status).to.equal('pending');
      expect(await attempts(policy)).to.deep.equal([]);
      advance(CONFIRM_MS);
      await waitFor(async () => { await retried(); await tick(); return (await intents(policy))[0]!.status === 'dropped'; }, 10_000, 'the intent dropped');
    });
    const [dropped] = await intents(policy);
    expect(dropped!.last_reason).to.match(/no payment policy at .* \(deleted\)/);
    expect([dropped!.dunning_step, dropped!.consecutive_failures]).to.deep.equal([0, 0]);
    expect(await attempts(policy)).to.deep.equal([['dropped', 'PolicyNotFound']]);
    expect(await paymentCount(policy), 'nothing charged').to.equal(before);
  });
});
