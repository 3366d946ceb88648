/**
 * The payer's own account, end to end at the API: a wallet signs in, lists its
 * subscription and payments, pauses it (the scheduler stops charging), resumes it (it is
 * charged again), cancels it (the policy is deleted on chain) and revokes its delegation,
 * each by signing the unsigned transaction the API answers and sending it back through
 * POST /v1/me/transactions. The merchant's webhook hears each change with by: "payer".
 * Real Postgres, Redis, localnet, indexer, projectors and scheduler; the @x402 client pays.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are inspected field by field */
import { expect } from 'chai';
import { payAndFetch } from '../../src/app/index.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import { createLogger } from '../../infra/log/logger.js';
import { createWebhook } from '../../commands/webhooks/service.js';
import { webhookDeps } from '../../commands/webhooks/routes.js';
import { startWebhookWorker, type WebhookWorker } from '../../commands/webhooks/delivery/worker.js';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { associatedTokenAddress, decodeTokenAccountState } from '../../src/kernel/domain/spl-token.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { waitFor } from '../support/process.js';
import type { TestApi } from '../support/app.js';
import { DEMO_PATH } from './x402-harness.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';
import type { RunningScheduler } from '../../commands/scheduler/scheduler.js';
import { accountOf } from './scheduler-chain.js';
import { act, call, signIn, startMeApi } from './payer-account-support.js';

describe('payer account: a wallet pauses, resumes, cancels and revokes what it pays for', function () {
  this.timeout(180_000);
  let s: SchedulerHarness;
  let me: TestApi;
  let receiver: Receiver;
  let worker: WebhookWorker;
  let scheduler: RunningScheduler | undefined;

  before(async () => {
    s = await startSchedulerHarness('payer-acct', { X402_DEMO_FREQUENCY: 'Custom:5' });
    me = await startMeApi(s.h);
    receiver = await startReceiver();
    await createWebhook(webhookDeps(s.h.api.node), { kind: 'admin' }, { gateway_pubkey: s.authority, endpoint_url: receiver.url, active: true });
    worker = startWebhookWorker({ config: { ...s.config, webhooks: { ...s.config.webhooks, pollMs: 50 } }, db: s.h.env.db, logger: createLogger('silent', 'wh'), clock: systemClock });
  });
  after(async () => { await scheduler?.stop(); await worker?.stop(); await receiver?.close(); await me?.close(); await s?.close(); });

  const intents = (policy: string) => s.h.env.db.selectFrom('execution_intents').selectAll().where('policy', '=', policy).execute();
  const delivered = (policy: string, type: string) => receiver.requests.map((r) => JSON.parse(r.body))
    .find((b: any) => b.type === type && b.data?.policy === policy);

  it('signs in, lists, pauses (not charged), resumes (charged again), cancels (deleted, by payer) and revokes', async () => {
    scheduler = s.scheduler();
    const payer = s.h.payer();
    const wallet = payer.publicKey.toBase58();
    const paid = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: payer, rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    expect(paid.response.status).to.equal(200);
    const policy = paid.paid!.policy!;
    const mint = paid.paid!.requirement.tokenMint;
    await waitFor(async () => s.records(policy).length >= 2, 30_000, 'the first scheduled payment');

    const token = await signIn(me, payer);
    const subscriptionOf = async (address: string): Promise<any> =>
      (await call(me, 'GET', '/v1/me/subscriptions', { token })).body?.data?.find((x: any) => x.address === address);
    // the list, from the read model once it has the payments
    let sub: any;
    await waitFor(async () => {
      const r = await call(me, 'GET', '/v1/me/subscriptions', { token });
      sub = r.body?.data?.find((x: any) => x.address === policy);
      return r.status === 200 && sub?.paymentCount >= 2 && sub.lastPayments.length >= 2;
    }, 20_000, 'the subscription listed with its payments');
    expect(sub).to.deep.include({ variant: 'Subscription', scheme: 'deferred', status: 'Active', gateway: s.gateway, tokenMint: mint, decimals: 6 });
    expect(sub.merchant).to.equal(paid.paid!.requirement.recipient);
    expect(sub.amountDisplay).to.equal((Number(sub.amount) / 1e6).toString());
    expect(sub.frequencySeconds).to.equal(5);
    expect(sub.nextPaymentDue).to.be.a('number');
    expect(sub.paidThrough).to.equal(sub.nextPaymentDue);
    const payments = await call(me, 'GET', '/v1/me/payments?limit=1', { token });
    expect(payments.status).to.equal(200);
    expect(payments.body.data).to.have.length(1);
    expect(payments.body.data[0]).to.deep.include({ policy, decimals: 6, merchant: sub.merchant });
    expect(s.records(policy).map((x) => x.signature)).to.include(payments.body.data[0].signature);
    const page2 = await call(me, 'GET', '/v1/me/payments?limit=1&offset=1', { token });
    expect(page2.body.data[0].signature).to.not.equal(payments.body.data[0].signature);

    // pause: the chain shows it Paused, and the period falling due meanwhile is not charged
    const paused = await act(me, token, payer, `/v1/me/policies/${policy}/pause`);
    expect(paused.status, JSON.stringify(paused.body)).to.equal(200);
    expect(paused.body).to.deep.include({ status: 'confirmed', instructions: ['change_payment_policy_status'] });
    expect((await accountOf(s.h.rpc, policy))['status']).to.equal('Paused');
    const due = Number(((await accountOf(s.h.rpc, policy))['policy_type'] as any).next_payment_due);
    const charged = s.records(policy).length;
    await new Promise((res) => setTimeout(res, Math.max(0, (due + 3) * 1000 - Date.now())));
    await waitFor(async () => !(await intents(policy)).some((i) => ['pending', 'sending'].includes(i.status)), 20_000, 'the due date met while paused');
    expect(s.records(policy), 'not charged while paused').to.have.length(charged);
    const again = await call(me, 'POST', `/v1/me/policies/${policy}/pause`, { token });
    expect(again.status, 'a paused policy cannot be paused').to.equal(409);
    await waitFor(async () => (await subscriptionOf(policy))?.status === 'Paused', 20_000, 'the list shows it paused');
    expect((await subscriptionOf(policy))?.nextPaymentDue, 'nothing is due while paused').to.equal(null);

    // resume: Active again, and the owed period is charged
    const resumed = await act(me, token, payer, `/v1/me/policies/${policy}/resume`);
    expect(resumed.body).to.deep.include({ status: 'confirmed' });
    expect((await accountOf(s.h.rpc, policy))['status']).to.equal('Active');
    await waitFor(async () => s.records(policy).length > charged, 20_000, 'charged again after the resume');

    // cancel: the policy account is closed on chain
    const canceled = await act(me, token, payer, `/v1/me/policies/${policy}/cancel`);
    expect(canceled.body).to.deep.include({ status: 'confirmed', instructions: ['delete_payment_policy'] });
    const gone = await readProgramAccount(s.h.rpc, policy, 'PaymentPolicy', { programId: PROGRAM_ID, commitment: 'confirmed' });
    expect(gone.kind).to.not.equal('found');
    await waitFor(async () => !(await call(me, 'GET', '/v1/me/subscriptions', { token })).body.data.some((x: any) => x.address === policy), 20_000, 'the canceled policy left out');

    // revoke: the token account has no delegate any more
    const ata = associatedTokenAddress(wallet, mint);
    const delegate = async () => {
      const r = await s.h.rpc.call<{ value: { data: [string, string] } | null }>('getAccountInfo', [ata, { encoding: 'base64', commitment: 'confirmed' }]);
      return decodeTokenAccountState(Buffer.from(r.value!.data[0], 'base64'))!.delegate;
    };
    expect(await delegate(), 'the subscription delegated the account').to.be.a('string');
    const revoked = await act(me, token, payer, '/v1/me/approvals/revoke', { mint });
    expect(revoked.body).to.deep.include({ status: 'confirmed', instructions: ['revoke'] });
    expect(await delegate()).to.equal(null);

    // the merchant hears each change, by the payer
    await waitFor(async () => ['subscription.paused', 'subscription.resumed', 'subscription.canceled'].every((t) => delivered(policy, t)), 40_000, 'the three webhooks');
    expect(delivered(policy, 'subscription.paused').data).to.deep.include({ by: 'payer', from: 'Active', signature: paused.body.signature });
    expect(delivered(policy, 'subscription.resumed').data).to.deep.include({ by: 'payer', from: 'Paused', signature: resumed.body.signature });
    expect(delivered(policy, 'subscription.canceled').data).to.deep.include({ by: 'payer', reason: 'deleted', gateway: s.gateway, signature: canceled.body.signature });
  });
});
