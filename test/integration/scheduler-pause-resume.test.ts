/**
 * A subscription paused and resumed is charged again. The chain does not move a paused
 * subscription's next_payment_due, so the period that fell due while it was paused is
 * still owed after the resume: the intent found paused is parked, not ended, and made due
 * again when the policy is Active again. The merchant hears subscription.paused and
 * subscription.resumed at its webhook.
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
import { accountOf, setPolicyStatus } from './scheduler-chain.js';

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

  const intents = (policy: string) => s.h.env.db.selectFrom('execution_intents').selectAll().where('policy', '=', policy).orderBy('id').execute();
  const delivered = (policy: string, type: string) => receiver.requests.map((r) => JSON.parse(r.body))
    .find((b: any) => b.type === type && b.data?.policy === policy);

  it('the period due while paused is charged after the resume (payment_count 3), with subscription.paused and .resumed', async () => {
    const scheduler = s.scheduler();
    const payer = s.h.payer();
    const r = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: payer, rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    expect(r.response.status).to.equal(200);
    const policy = r.paid!.policy!;
    const mint = r.paid!.requirement.tokenMint;
    // one scheduled payment, after which the next due date is an intent at once (read from the chain)
    await waitFor(async () => s.records(policy).length >= 2, 30_000, 'the first scheduled payment');
    const due = Number(((await accountOf(s.h.rpc, policy))['policy_type'] as any).next_payment_due);
    await setPolicyStatus(s.h.rpc, payer, policy, mint, 'Paused');
    // the intent of that due date is claimed while the policy is paused, and not paid
    await waitFor(async () => (await intents(policy)).some((i) => Number(i.due_at) === due && !['pending', 'sending'].includes(i.status)), 20_000, 'the due date met while paused');
    expect(s.records(policy)).to.have.length(2);
    await setPolicyStatus(s.h.rpc, payer, policy, mint, 'Active');

    await waitFor(async () => s.records(policy).length >= 3, 20_000, 'the owed period charged after the resume');
    await scheduler.stop();
    const acc = await accountOf(s.h.rpc, policy);
    expect(Number(acc['payment_count'])).to.be.at.least(3);
    const records = s.records(policy);
    expect(new Set(records.map((x) => x.recordId)).size, 'each payment once').to.equal(records.length);
    const paidAfterResume = (await intents(policy)).find((i) => Number(i.due_at) === due);
    expect(paidAfterResume?.status, 'the parked intent itself paid the owed period').to.equal('executed');

    await waitFor(async () => delivered(policy, 'subscription.paused') && delivered(policy, 'subscription.resumed'), 20_000, 'both webhooks delivered');
    const paused = delivered(policy, 'subscription.paused');
    expect(paused.data).to.deep.include({ event: 'subscription.paused', gateway: s.gateway, from: 'Active' });
    expect(delivered(policy, 'subscription.resumed').data).to.deep.include({ event: 'subscription.resumed', from: 'Paused' });
    const rows = await s.h.env.db.selectFrom('service_events').select('name').where('policy', '=', policy).execute();
    expect(rows.map((x) => x.name).filter((n) => n.startsWith('subscription.')).sort()).to.deep.equal(['subscription.paused', 'subscription.resumed']);
  });
});
