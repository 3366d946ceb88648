/**
 * An intent left `sending` (signed and stored, never confirmed) by a scheduler whose
 * gateway was then stopped (DELETE /v1/gateway/{gateway}/scheduler) waits while the
 * gateway is stopped and is resolved against the chain once it is served again: under the
 * same signer the stored bytes are sent (one signature); under a new signer (the
 * authority's change_gateway_signer) the stored bytes can never land, so the due date is
 * paid by a new transaction of the new signer, once. And one left by a crashed scheduler
 * is taken over by another once its lease ends.
 */
import { expect } from 'chai';
import bs58 from 'bs58';
import { Keypair, Transaction } from '@solana/web3.js';
import { payAndFetch } from '../../src/app/index.js';
import { fundWallet } from '../../infra/localnet/genesis.js';
import { claimIntents, enqueueDue, markSending } from '../../commands/scheduler/intents.js';
import { syncGatewayStates } from '../../commands/scheduler/gateway-sync.js';
import { delegateGateway, findServedGateway, stopGateway } from '../../commands/scheduler/signers.js';
import { changeSignerTransaction } from '../../commands/scheduler/service.js';
import { latestBlockhash, readExecutionContext, signExecution } from '../../commands/scheduler/chain.js';
import { waitFor } from '../support/process.js';
import { DEMO_PATH } from './x402-harness.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';

describe('scheduler: intents left sending are resolved by the chain when the gateway is served again', function () {
  this.timeout(150_000);
  let s: SchedulerHarness;

  before(async () => { s = await startSchedulerHarness('sched-resume', { X402_DEMO_FREQUENCY: 'Custom:5', SCHEDULER_LEASE_MS: '1500' }); });
  after(async () => { await s?.close(); });

  const db = () => s.h.env.db;
  const intents = (policy: string) => db().selectFrom('execution_intents').selectAll().where('policy', '=', policy).orderBy('due_at').execute();
  const attempts = (policy: string) => db().selectFrom('execution_attempts').selectAll().where('policy', '=', policy).execute();

  /** a deferred subscription, and a scheduler that claimed its first scheduled due date, signed it as `signer`, stored it and died */
  const leftSending = async (signer: Keypair) => {
    const r = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    expect(r.response.status).to.equal(200);
    const policy = r.paid!.policy!;
    await waitFor(async () => (await db().selectFrom('payment_policies').select('address').where('address', '=', policy).executeTakeFirst()) ?? false, 20_000, 'the policy in the read model');
    await syncGatewayStates(db(), s.io);
    const claimed = await waitFor(async () => {
      await enqueueDue(db(), Math.floor(Date.now() / 1000));
      return (await claimIntents(db(), 'dead', 100, 4000)).find((i) => i.policy === policy);
    }, 20_000, 'the first scheduled due date claimed');
    const ctx = await readExecutionContext(s.io, policy);
    if ('class' in ctx) throw new Error(ctx.reason);
    const signed = signExecution(s.io, ctx, signer, await latestBlockhash(s.io), null);
    expect(await markSending(db(), claimed.id, 'dead', { ...signed, paymentCountBefore: s.records(policy).length })).to.equal(true);
    return { policy, signature: signed.signature, paid: s.records(policy).length };
  };

  /** rounds of a scheduler while the gateway is stopped: the intent stays as it was */
  const idleWhileStopped = async (policy: string, paid: number) => {
    const scheduler = s.scheduler({ autoStart: false });
    for (let k = 0; k < 3; k += 1) { await scheduler.tick(); await new Promise((res) => setTimeout(res, 700)); }
    expect(s.records(policy)).to.have.length(paid);
    expect((await intents(policy)).map((i) => i.status)).to.deep.equal(['sending']);
  };

  it('served again under the same signer: the stored bytes are sent, once', async () => {
    const { policy, signature, paid } = await leftSending(s.signer);
    await stopGateway(db(), s.gateway);
    await idleWhileStopped(policy, paid);
    const fixture = s.h.ln.fixtures.gateways[0]!;
    await delegateGateway(db(), { gateway: s.gateway, authority: fixture.authority, encryptionKey: undefined, source: 'fixtures', keypair: s.signer });
    const scheduler = s.scheduler();
    await waitFor(async () => (await intents(policy)).some((i) => i.status === 'executed'), 20_000, 'the left intent executed');
    await scheduler.stop();
    const records = s.records(policy);
    expect(records[paid]!.signature, 'the stored bytes, not a new transaction').to.equal(signature);
    expect(new Set(records.map((x) => x.recordId)).size).to.equal(records.length);
    expect((await attempts(policy)).filter((a) => a.outcome !== 'executed')).to.have.length(0);
  });

  it('served again under a new signer: the stale bytes are never sent; a new transaction pays the due date once', async () => {
    const { policy, signature, paid } = await leftSending(s.signer);
    await stopGateway(db(), s.gateway);
    await idleWhileStopped(policy, paid);
    const fixture = s.h.ln.fixtures.gateways[0]!;
    const next = Keypair.generate();
    fundWallet(s.h.ln.chain, next.publicKey);
    await delegateGateway(db(), { gateway: s.gateway, authority: fixture.authority, encryptionKey: undefined, keypair: next });
    // the merchant signs change_gateway_signer with its authority, as POST /v1/gateway/{gateway}/scheduler asks
    const unsigned = changeSignerTransaction(s.io, fixture.authority, s.gateway, next.publicKey.toBase58(), await latestBlockhash(s.io));
    const tx = Transaction.from(Buffer.from(unsigned, 'base64'));
    tx.sign(Keypair.fromSecretKey(bs58.decode(fixture.authoritySecretKey)));
    await s.h.rpc.call('sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64' }]);
    const scheduler = s.scheduler();
    await waitFor(async () => (await intents(policy)).some((i) => i.status === 'executed'), 30_000, 'the left intent executed by the new signer');
    await scheduler.stop();
    expect((await findServedGateway(db(), s.gateway))?.state).to.equal('active');
    const records = s.records(policy);
    expect(records.map((x) => x.signature), 'the stale bytes never landed').to.not.include(signature);
    const executed = (await intents(policy)).filter((i) => i.status === 'executed');
    expect(executed).to.have.length(records.length - paid);
    expect(records.slice(paid).map((x) => x.signature).sort()).to.deep.equal(executed.map((i) => i.signature).sort());
    expect(new Set(records.map((x) => x.recordId)).size).to.equal(records.length);
    expect((await attempts(policy)).filter((a) => a.outcome !== 'executed'), 'nothing dropped or refused').to.have.length(0);
  });
});
