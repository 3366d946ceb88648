/**
 * The scheduler as a real process (`serve --role scheduler`), killed with SIGKILL the
 * moment its execute_payment lands on the chain, before it can confirm and record it, five
 * times in a row: each restarted process resolves the intent it left `sending` through the
 * chain, and every due date of the subscription is paid exactly once (the policy's
 * payment_count equals the PaymentRecords, one per due date, no refused second send).
 */
import { expect } from 'chai';
import { payAndFetch } from '../../src/app/index.js';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { startCli, waitFor, type Proc } from '../support/process.js';
import { DEMO_PATH } from '../integration/x402-harness.js';
import { startSchedulerHarness, type SchedulerHarness } from '../integration/scheduler-harness.js';

const KILLS = 5;

describe('scheduler under kill -9 between send and confirm', function () {
  this.timeout(180_000);
  let s: SchedulerHarness;
  let proc: Proc | undefined;

  before(async () => { s = await startSchedulerHarness('sched-kill', { X402_DEMO_FREQUENCY: 'Custom:3' }); });
  after(async () => {
    proc?.child.kill('SIGKILL');
    await s?.close();
  });

  it('executes each due payment exactly once across five kills', async () => {
    const env = {
      ...s.h.env.env, ...s.h.overrides, SOLANA_RPC_URL: s.h.ln.rpcUrl, SCHEDULER_POLL_MS: '200', SCHEDULER_LEASE_MS: '2000',
      SCHEDULER_RETRY_MS: '300', X402_CONFIRM_TIMEOUT_MS: '5000', LOCALNET_FIXTURES: '/nonexistent/fixtures.json', LOG_LEVEL: 'warn',
    };
    const start = () => { proc = startCli(['serve', '--role', 'scheduler'], env); };
    const r = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    expect(r.response.status).to.equal(200);
    const policy = r.paid!.policy!;
    const signer = s.signer.publicKey.toBase58();

    let kills = 0;
    let killed: Promise<unknown> = Promise.resolve();
    // the localnet runs in this process: the kill lands while the scheduler waits for its confirmation
    const off = s.h.ln.chain.onTransaction((tx) => {
      if (kills >= KILLS || !proc || tx.accountKeys[0] !== signer || tx.err !== null) return;
      kills += 1;
      const dying = proc;
      dying.child.kill('SIGKILL');
      killed = dying.exited.then(() => start());
    });
    start();
    try {
      await waitFor(async () => kills >= KILLS, 120_000, `${KILLS} kills`);
      await killed;
      await waitFor(async () => {
        const open = await s.h.env.db.selectFrom('execution_intents').select('id').where('policy', '=', policy).where('status', 'in', ['sending']).execute();
        return open.length === 0 && s.records(policy).length >= KILLS + 2;
      }, 60_000, 'every intent left in doubt resolved, and one more payment after the kills');
    } finally {
      off();
      proc?.child.kill('SIGKILL');
      await proc?.exited;
      proc = undefined;
    }
    const records = s.records(policy);
    expect(records.map((x) => x.recordId), 'record ids 1..n, none twice').to.deep.equal(records.map((_, i) => i + 1));
    const account = await readProgramAccount(s.io.rpc, policy, 'PaymentPolicy', { programId: s.io.programId, commitment: 'confirmed' });
    if (account.kind !== 'found') throw new Error('policy missing');
    expect(Number(account.data['payment_count']), 'payment_count equals the PaymentRecords').to.equal(records.length);
    const intents = await s.h.env.db.selectFrom('execution_intents').selectAll().where('policy', '=', policy).execute();
    const executed = intents.filter((i) => i.status === 'executed');
    expect(new Set(executed.map((i) => i.due_at)).size, 'one intent per due date').to.equal(executed.length);
    expect(executed.length, 'the scheduler paid every record after the first (the payer\'s)').to.equal(records.length - 1);
    const refused = await s.h.env.db.selectFrom('execution_attempts').select(['outcome', 'reason_code']).where('policy', '=', policy).where('outcome', '!=', 'executed').execute();
    expect(refused, 'no second send refused by the chain').to.deep.equal([]);
  });
});
