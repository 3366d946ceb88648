/**
 * The program's emergency pause (set_emergency_pause, by its admin) is not the payer's
 * refusal. While it is on, execute_payment fails with ConstraintRaw on the config account;
 * the settler and the scheduler read the config before sending and send nothing while it
 * is on, count nothing against the payer, and charge or execute within seconds once it is
 * lifted. A charge the program refuses because the pause came between the read and the
 * send is retried after the pause, not on the retry schedule (an hour).
 */
import { expect } from 'chai';
import { Transaction } from '@solana/web3.js';
import { payAndFetch } from '../../src/app/index.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { pdas } from '../../infra/localnet/keys.js';
import { deriveActors } from '../../infra/localnet/genesis.js';
import { createLogger } from '../../infra/log/logger.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import { startSettler } from '../../commands/settlement/settler.js';
import { ADMISSION_SECONDS, retryStates } from '../../commands/settlement/charges.js';
import { waitFor } from '../support/process.js';
import { DEMO_PATH } from './x402-harness.js';
import { demoPaygEnv, startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';
import { accountOf } from './scheduler-chain.js';

const PRICE = 10_000n;
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

describe('the program\'s emergency pause holds charges and executions, never counted against the payer', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;

  before(async () => {
    s = await startSchedulerHarness('program-pause', {
      ...demoPaygEnv(PRICE, 300),
      // a payer's refusal waits an hour: anything counted as one would not be charged within the test
      SCHEDULER_DUNNING_SCHEDULE: '1h,1h', SCHEDULER_COOLDOWN_MS: '3600000', X402_DEMO_FREQUENCY: 'Custom:5',
    });
  });
  // a failed test leaves the program running for the next one
  afterEach(async () => { await setPause(s.h.rpc, false); });
  after(async () => { await s?.close(); });

  /** set_emergency_pause by the program's admin (the localnet's, from its seed) */
  async function setPause(rpc: RpcClient, paused: boolean): Promise<void> {
    const admin = deriveActors(s.h.seed).admin;
    const { value } = await rpc.call<{ value: { blockhash: string } }>('getLatestBlockhash', [{}]);
    const tx = new Transaction({ feePayer: admin.publicKey, recentBlockhash: value.blockhash })
      .add(tributaryIx('set_emergency_pause', { admin: admin.publicKey, config: pdas.config() }, { paused }));
    tx.sign(admin);
    await rpc.call('sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64' }]);
    await waitFor(async () => (await accountOf(rpc, pdas.config().toBase58(), 'ProgramConfig'))['emergency_pause'] === paused, 10_000, `emergency_pause ${paused}`);
  }

  const metered = async (requests: number) => {
    const payer = s.h.payer();
    const r = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: payer, rpcUrl: s.h.ln.rpcUrl, scheme: 'x402://payg' });
    expect(r.response.status).to.equal(200);
    for (let i = 1; i < requests; i += 1) {
      const res = await fetch(`${s.h.api.url}${DEMO_PATH}`, { headers: { authorization: `Bearer ${r.paid!.jwt}` } });
      expect(res.status).to.equal(200);
    }
    return r.paid!.policy!;
  };
  const charges = (policy: string) => s.h.env.db.selectFrom('payg_charges').selectAll().where('policy', '=', policy).orderBy('id').execute();
  const attempts = (policy: string) => s.h.env.db.selectFrom('execution_attempts').selectAll().where('policy', '=', policy).orderBy('id').execute();
  const charged = (policy: string) => s.records(policy).reduce((a, r) => a + r.amount, 0n);

  /** A settler on the harness's chain whose first sendTransaction goes through `first` (given the plain send and its params). */
  function settlerWhoseFirstSend(name: string, first: (send: () => Promise<unknown>, params: readonly unknown[]) => Promise<unknown>) {
    let sent = false;
    const rpc: RpcClient = {
      url: s.io.rpc.url,
      batch: (m, p, o) => s.io.rpc.batch(m, p, o),
      async call<T>(method: string, params?: readonly unknown[], opts?: { timeoutMs?: number }): Promise<T> {
        const send = () => s.io.rpc.call<T>(method, params, opts);
        if (method !== 'sendTransaction' || sent) return send();
        sent = true;
        return first(send, params ?? []) as Promise<T>;
      },
    };
    return startSettler({
      db: s.h.env.db, io: { ...s.io, rpc }, config: s.config, logger: createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent', name), nowMs: () => Date.now(),
    });
  }

  it('payg usage due while the program is paused: nothing sent, nothing counted, charged once within seconds of the unpause', async () => {
    const policy = await metered(3);
    await setPause(s.h.rpc, true);
    const settler = s.settler();
    try {
      // past the usage's admission (ADMISSION_SECONDS), with a few settler rounds to spare
      await sleep((ADMISSION_SECONDS + 3) * 1000);
      expect(await charges(policy), 'no charge sent while the program is paused').to.deep.equal([]);
      expect((await retryStates(s.h.env.db, [policy])).get(policy), 'no refusal counted').to.equal(undefined);
      expect(await attempts(policy)).to.deep.equal([]);
      await setPause(s.h.rpc, false);
      const lifted = Date.now();
      await waitFor(async () => charged(policy) === 3n * PRICE, 20_000, 'the usage charged after the unpause');
      expect(Date.now() - lifted, 'charged within seconds of the unpause').to.be.below(20_000);
    } finally {
      await settler.stop();
    }
    expect(charged(policy)).to.equal(3n * PRICE);
    expect((await attempts(policy)).every((a) => a.outcome === 'executed')).to.equal(true);
  });

  it('a charge refused because the pause came between the read and the send is retried after the pause, not on the retry schedule', async () => {
    const policy = await metered(2);
    // the pause lands right before the settler's first send: the charge is built while the program runs
    const settler = settlerWhoseFirstSend('program-pause-race', async (send) => {
      await setPause(s.io.rpc, true);
      return send();
    });
    try {
      await waitFor(async () => (await attempts(policy)).length > 0, 20_000, 'the refused charge');
      const refused = (await attempts(policy))[0]!;
      expect(refused.reason_code).to.equal('ProgramPaused');
      expect(refused.reason).to.match(/the program is paused by its admin \(emergency pause\)/);
      expect(refused.outcome).to.not.equal('past_due');
      expect((await retryStates(s.h.env.db, [policy])).get(policy), 'not counted as the payer\'s refusal').to.equal(undefined);
      await setPause(s.h.rpc, false);
      await waitFor(async () => charged(policy) === 2n * PRICE, 20_000, 'charged after the pause');
    } finally {
      await settler.stop();
    }
    const rows = await s.h.env.db.selectFrom('payg_usage').selectAll().where('policy', '=', policy).execute();
    expect(rows.every((u) => u.unbillable_reason === null && u.charge_id !== null)).to.equal(true);
  });

  it('a charge that landed failed during a pause lifted before its status was read is retried after the pause, not on the retry schedule', async () => {
    // the soak's workload pauses the program for one transaction: a charge landing then failed
    // on chain, and the config read when its status came back said the program was running
    const policy = await metered(2);
    const settler = settlerWhoseFirstSend('program-pause-landed', async (_send, [wire, cfg]) => {
      await setPause(s.io.rpc, true);
      // past preflight, as a transaction the node took before the pause and landed after it
      const sig = await s.io.rpc.call<unknown>('sendTransaction', [wire, { ...(cfg as Record<string, unknown>), skipPreflight: true }]);
      await setPause(s.io.rpc, false);
      return sig;
    });
    try {
      await waitFor(async () => (await attempts(policy)).length > 0, 20_000, 'the charge failed on chain');
      const failed = (await attempts(policy))[0]!;
      expect(failed.reason, 'it failed on chain').to.match(/failed on chain/);
      expect(failed.reason_code, 'its log names the config account: the pause').to.equal('ProgramPaused');
      expect(failed.outcome).to.not.equal('past_due');
      expect((await retryStates(s.h.env.db, [policy])).get(policy), 'not counted as the payer\'s refusal').to.equal(undefined);
      await waitFor(async () => charged(policy) === 2n * PRICE, 20_000, 'charged within seconds, not an hour later');
    } finally {
      await settler.stop();
    }
  });

  it('a subscription due during the pause is executed once after the unpause: payment_count +1, no period lost or paid twice', async () => {
    const scheduler = s.scheduler();
    try {
      const payer = s.h.payer();
      const r = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: payer, rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
      expect(r.response.status).to.equal(200);
      const policy = r.paid!.policy!;
      await waitFor(async () => s.records(policy).length >= 2, 30_000, 'the first scheduled payment');
      await setPause(s.h.rpc, true);
      const before = await accountOf(s.h.rpc, policy);
      const count = Number(before['payment_count']);
      const due = Number((before['policy_type'] as { next_payment_due: unknown }).next_payment_due);
      // the due date passes while the program is paused, and a few attempts' worth of rounds after it
      await sleep(Math.max(0, (due + 4) * 1000 - Date.now()));
      expect(Number((await accountOf(s.h.rpc, policy))['payment_count'])).to.equal(count);
      const during = await attempts(policy);
      expect(during.filter((a) => a.reason_code === 'ConstraintRaw' || a.reason_code === 'ProgramPaused'), 'nothing sent while paused').to.deep.equal([]);
      expect(during.filter((a) => ['past_due', 'cooldown', 'given_up'].includes(a.outcome))).to.deep.equal([]);
      await setPause(s.h.rpc, false);
      await waitFor(async () => Number((await accountOf(s.h.rpc, policy))['payment_count']) >= count + 1, 20_000, 'the owed period executed after the unpause');
      await scheduler.stop();
      const intent = await s.h.env.db.selectFrom('execution_intents').selectAll().where('policy', '=', policy).where('due_at', '=', String(due)).executeTakeFirst();
      expect(intent?.status, 'the intent of the period due during the pause executed').to.equal('executed');
      const after = await accountOf(s.h.rpc, policy);
      const records = s.records(policy);
      expect(records, 'one payment record per payment').to.have.length(Number(after['payment_count']));
      expect(new Set(records.map((x) => x.recordId)).size, 'each payment once').to.equal(records.length);
    } finally {
      await scheduler.stop();
    }
  });
});
