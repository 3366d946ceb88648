/**
 * A subscription paused and resumed is charged again. The chain does not move a paused
 * subscription's next_payment_due, so the period that fell due while it was paused is
 * still owed after the resume: the intent found paused is parked, not ended, and made due
 * again when the policy is Active again. The merchant hears subscription.paused and
 * subscription.resumed at its webhook and in the policy's trackingId room.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are inspected field by field */
import { expect } from 'chai';
import { payAndFetch } from '../../src/app/index.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import { createLogger } from '../../infra/log/logger.js';
import { createWebhook } from '../../commands/webhooks/service.js';
import { webhookDeps } from '../../commands/webhooks/routes.js';
import { startWebhookWorker, type WebhookWorker } from '../../commands/webhooks/delivery/worker.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { waitFor } from '../support/process.js';
import { DEMO_PATH } from './x402-harness.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';
import type { RunningScheduler } from '../../commands/scheduler/scheduler.js';
import { accountOf, createMilestone, sendAs, setPolicyStatus } from './scheduler-chain.js';
import { approveIx, associatedTokenAddress } from '../../src/kernel/domain/spl-token.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';

describe('scheduler: a paused and resumed subscription is charged again', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;
  let receiver: Receiver;
  let worker: WebhookWorker;

  before(async () => {
    s = await startSchedulerHarness('sched-pause', { X402_DEMO_FREQUENCY: 'Custom:5' });
    receiver = await startReceiver();
    await createWebhook(webhookDeps(s.h.api.node), { kind: 'admin' }, { gateway_pubkey: s.authority, endpoint_url: receiver.url, active: true });
    worker = startWebhookWorker({ config: { ...s.config, webhooks: { ...s.config.webhooks, pollMs: 50 } }, db: s.h.env.db, logger: createLogger('silent', 'wh'), clock: systemClock });
  });
  after(async () => { await worker?.stop(); await receiver?.close(); await s?.close(); });
  // each test's scheduler stops with it, failed or not: the next one's events are its own
  let scheduler: RunningScheduler | undefined;
  afterEach(async () => { await scheduler?.stop(); });

  const intents = (policy: string) => s.h.env.db.selectFrom('execution_intents').selectAll().where('policy', '=', policy).orderBy('id').execute();
  const delivered = (policy: string, type: string) => receiver.requests.map((r) => JSON.parse(r.body))
    .find((b: any) => b.type === type && b.data?.policy === policy);

  it('the period due while paused is charged after the resume (payment_count 3), with subscription.paused and .resumed', async () => {
    scheduler = s.scheduler();
    const payer = s.h.payer();
    const r = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: payer, rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    expect(r.response.status).to.equal(200);
    const policy = r.paid!.policy!;
    const mint = r.paid!.requirement.tokenMint;
    // one scheduled payment, after which the next due date is an intent at once (read from the chain)
    await waitFor(async () => s.records(policy).length >= 2, 30_000, 'the first scheduled payment');
    const due = Number(((await accountOf(s.h.rpc, policy))['policy_type'] as any).next_payment_due);
    await setPolicyStatus(s.h.rpc, payer, policy, mint, 'Paused');
    // the due date passes while the policy is paused: its intent (made as the last payment landed) is met and not paid
    await new Promise((res) => setTimeout(res, Math.max(0, (due + 3) * 1000 - Date.now())));
    await waitFor(async () => !(await intents(policy)).some((i) => ['pending', 'sending'].includes(i.status)), 20_000, 'the due date met while paused');
    expect(s.records(policy)).to.have.length(2);
    await setPolicyStatus(s.h.rpc, payer, policy, mint, 'Active');

    await waitFor(async () => s.records(policy).length >= 3, 20_000, 'the owed period charged after the resume');
    // the chain sweep can pay the owed period before the read model shows the resume; the
    // announcements wait for the read model, so the scheduler runs until both are made
    await waitFor(async () => delivered(policy, 'subscription.paused') && delivered(policy, 'subscription.resumed'), 40_000, 'both webhooks delivered');
    await scheduler.stop();
    const acc = await accountOf(s.h.rpc, policy);
    expect(Number(acc['payment_count'])).to.be.at.least(3);
    const records = s.records(policy);
    expect(new Set(records.map((x) => x.recordId)).size, 'each payment once').to.equal(records.length);
    const paidAfterResume = (await intents(policy)).find((i) => Number(i.due_at) === due);
    expect(paidAfterResume?.status, 'the parked intent itself paid the owed period').to.equal('executed');

    const paused = delivered(policy, 'subscription.paused');
    expect(paused.data).to.deep.include({ event: 'subscription.paused', gateway: s.gateway, from: 'Active' });
    expect(delivered(policy, 'subscription.resumed').data).to.deep.include({ event: 'subscription.resumed', from: 'Paused' });
    const rows = await s.h.env.db.selectFrom('service_events').select('name').where('policy', '=', policy).execute();
    expect(rows.map((x) => x.name).filter((n) => n.startsWith('subscription.')).sort()).to.deep.equal(['subscription.paused', 'subscription.resumed']);
  });

  it('a policy with a trackingId: subscription.paused and .resumed reach its Socket.IO room too', async () => {
    const rooms: { trackingId: string; event: string; body: any }[] = [];
    scheduler = s.scheduler({ rooms: { emit: (trackingId, event, body) => void rooms.push({ trackingId, event, body }) } });
    const payer = s.h.payer();
    const r = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: payer, rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    const { tokenMint: mint, recipient } = r.paid!.requirement;
    const owner = payer.publicKey.toBase58();
    await sendAs(s.h.rpc, payer, approveIx(associatedTokenAddress(owner, mint), createPdaDeriver(s.config.solana.programId).userPayment(owner, mint), owner, 1_000_000_000n));
    const policy = await createMilestone(s.h.rpc, payer, {
      mint, gateway: s.gateway, recipient, amounts: [100n], timestamps: [Math.floor(Date.now() / 1000) + 3600], releaseCondition: 1, trackingId: 'order-42',
    });
    await setPolicyStatus(s.h.rpc, payer, policy, mint, 'Paused');
    await setPolicyStatus(s.h.rpc, payer, policy, mint, 'Active');
    const types = () => rooms.filter((x) => x.trackingId === 'order-42').map((x) => x.body.type);
    await waitFor(async () => types().includes('subscription.resumed'), 20_000, 'both events in the room');
    await scheduler.stop();
    expect(types()).to.deep.equal(['subscription.paused', 'subscription.resumed']);
    expect(rooms.every((x) => x.event === 'lifecycle' && x.body.data.policy === policy && x.body.data.trackingId === 'order-42')).to.equal(true);
  });
});
