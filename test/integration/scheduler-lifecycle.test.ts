/**
 * Lifecycle notifications: a paid subscription whose payer revokes the delegation (an SPL
 * revoke sent to the localnet) goes past due at its next due date: payment.failed (with
 * the program's reason and the next retry) and subscription.past_due arrive at the
 * gateway's webhook, signed like every delivery, and in the trackingId's room; a new
 * approve recovers it at the next dunning retry (subscription.recovered). The scheduler's
 * routes answer the gateway's state. payment.upcoming announces a due date within the lead time.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are inspected field by field */
import { expect } from 'chai';
import { Transaction, type Keypair } from '@solana/web3.js';
import { payAndFetch } from '../../src/app/index.js';
import { approveIx, associatedTokenAddress, revokeIx } from '../../src/kernel/domain/spl-token.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import { createLogger } from '../../infra/log/logger.js';
import { createWebhook } from '../../commands/webhooks/service.js';
import { webhookDeps } from '../../commands/webhooks/routes.js';
import { startWebhookWorker, type WebhookWorker } from '../../commands/webhooks/delivery/worker.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { DEMO_PATH } from './x402-harness.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';

describe('scheduler: lifecycle events when a payer revokes and approves again', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;
  let receiver: Receiver;
  let worker: WebhookWorker;
  const rooms: { trackingId: string; event: string; body: any }[] = [];

  before(async () => {
    s = await startSchedulerHarness('sched-life', { X402_DEMO_FREQUENCY: 'Custom:5', SCHEDULER_DUNNING_SCHEDULE: '3s,3s,60s' });
    receiver = await startReceiver();
    await createWebhook(webhookDeps(s.h.api.node), { kind: 'admin' }, { gateway_pubkey: s.authority, endpoint_url: receiver.url, active: true });
    worker = startWebhookWorker({ config: { ...s.config, webhooks: { ...s.config.webhooks, pollMs: 50 } }, db: s.h.env.db, logger: createLogger('silent', 'wh'), clock: systemClock });
  });
  after(async () => { await worker?.stop(); await receiver?.close(); await s?.close(); });

  const send = async (payer: Keypair, ix: ReturnType<typeof revokeIx>) => {
    const { value } = await s.h.rpc.call<{ value: { blockhash: string } }>('getLatestBlockhash', [{}]);
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: value.blockhash }).add(ix);
    tx.sign(payer);
    await s.h.rpc.call('sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64' }]);
  };
  const lifecycle = () => receiver.requests.map((r) => JSON.parse(r.body)).filter((b: any) => typeof b.type === 'string' && b.type.includes('.'));

  it('revoke → payment.failed and subscription.past_due; approve → subscription.recovered', async () => {
    s.scheduler({ rooms: { emit: (trackingId, event, body) => void rooms.push({ trackingId, event, body }) } });
    const payer = s.h.payer();
    const r = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: payer, rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    expect(r.response.status).to.equal(200);
    const policy = r.paid!.policy!;
    const mint = r.paid!.requirement.tokenMint;
    const ata = associatedTokenAddress(payer.publicKey.toBase58(), mint);
    await send(payer, revokeIx(ata, payer.publicKey.toBase58()));

    const deadline = Date.now() + 40_000;
    while (Date.now() < deadline && !['payment.failed', 'subscription.past_due'].every((t) => lifecycle().some((b: any) => b.type === t && b.data.policy === policy))) {
      await new Promise((res) => setTimeout(res, 200));
    }
    const failed = lifecycle().find((b: any) => b.type === 'payment.failed' && b.data.policy === policy);
    expect(failed, 'payment.failed delivered').to.not.equal(undefined);
    expect(failed.data.code).to.equal('NoDelegateSet');
    expect(failed.data.reason).to.match(/NoDelegateSet/);
    expect(failed.data.nextRetryAt).to.be.a('string');
    expect(lifecycle().some((b: any) => b.type === 'subscription.past_due' && b.data.policy === policy), 'subscription.past_due delivered').to.equal(true);
    const req = receiver.requests.find((q) => q.body.includes('payment.failed'))!;
    expect(req.headers['webhook-signature']).to.match(/^v1,/);

    const userPayment = createPdaDeriver(s.config.solana.programId).userPayment(payer.publicKey.toBase58(), mint);
    await send(payer, approveIx(ata, userPayment, payer.publicKey.toBase58(), 1_000_000_000_000n));
    const until = Date.now() + 30_000;
    while (Date.now() < until && !lifecycle().some((b: any) => b.type === 'subscription.recovered' && b.data.policy === policy)) {
      await new Promise((res) => setTimeout(res, 200));
    }
    const recovered = lifecycle().find((b: any) => b.type === 'subscription.recovered' && b.data.policy === policy);
    expect(recovered, 'subscription.recovered delivered').to.not.equal(undefined);
    expect(recovered.data.signature).to.be.a('string');
    const upcoming = lifecycle().find((b: any) => b.type === 'payment.upcoming' && b.data.policy === policy);
    expect(upcoming, 'payment.upcoming delivered (a due date within SCHEDULER_UPCOMING_LEAD_SECONDS)').to.not.equal(undefined);
    expect(upcoming.data.dueDate).to.be.a('string');
    // the room of the policy's trackingId (its memo); the demo's policies carry none, so no room is told
    const recorded = await s.h.env.db.selectFrom('service_events').select(['name', 'tracking_id']).where('policy', '=', policy).execute();
    expect(recorded.map((e) => e.name)).to.include.members(['payment.failed', 'subscription.past_due', 'subscription.recovered']);
    expect(rooms.filter((x) => x.body.data.policy === policy)).to.have.length(recorded.filter((e) => e.tracking_id !== '').length);
    expect(rooms.every((x) => x.event === 'lifecycle' && x.trackingId !== '')).to.equal(true);
  });

  it('GET /v1/gateway/{gateway}/scheduler needs a credential', async () => {
    const res = await fetch(`${s.h.api.url}/v1/gateway/${s.gateway}/scheduler`);
    expect([401, 404]).to.include(res.status);
  });
});
