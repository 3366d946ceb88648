/**
 * Hosted checkout sessions against a real localnet, Postgres and Redis: a merchant creates
 * a session with its API key and reads it open; a payer pays it as a wallet does (the
 * unsigned transaction from the API, signed with the payer's key, the proof message signed
 * with the transaction's signature filled in): the session is complete, the chain holds the
 * policy paid, the webhook receiver gets checkout.session.completed and the trackingId's
 * room hears it; a second pay is a 409; a transaction for other terms is refused and the
 * session stays open; a payer without tokens is told so in words; bad input is a 400
 * envelope.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { parse } from 'yaml';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { fundWallet } from '../../infra/localnet/genesis.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { Keypair, Transaction } from '@solana/web3.js';
import { deriveActors } from '../../infra/localnet/genesis.js';
import { programInstruction } from '../../infra/solana/instructions.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import type { WebhookWorker } from '../../commands/webhooks/delivery/worker.js';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import type { Receiver } from '../support/receiver.js';
import type { TestClient } from '../support/realtime-client.js';
import { waitFor } from '../support/process.js';
import { startListenedCheckout, payAsWallet, signAsWallet, type CheckoutHarness } from './checkout-support.js';
import { payloadOf } from './x402-facilitator-support.js';

describe('checkout sessions: create, pay as a wallet, complete once, announced', function () {
  this.timeout(120_000);
  let c: CheckoutHarness;
  let receiver: Receiver;
  let worker: WebhookWorker;
  let client: TestClient;
  let lifecycle: any[] = [];

  before(async () => {
    ({ c, receiver, worker, client, lifecycle } = await startListenedCheckout('checkout-sessions'));
  });
  after(async () => { client?.close(); await worker?.stop(); await receiver?.close(); await c?.close(); });

  it('refuses bad input with 400 envelopes, another gateway\'s requirement with 403, no credential with 401', async () => {
    const bad = async (over: Record<string, unknown>, why: RegExp) => {
      const r = await c.create(over);
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      expect(r.body).to.include({ code: 'invalid_input', success: false });
      expect(r.body.error).to.match(why);
    };
    await bad({ successUrl: 'ftp://merchant.example/x' }, /successUrl must be an http or https URL/);
    // the URL parser would drop these silently (and PostgreSQL refuses a NUL): refused, issue 41
    await bad({ successUrl: 'https://merchant.example/thanks\u0000' }, /successUrl must not contain control characters/);
    await bad({ cancelUrl: 'https://merchant.\texample/' }, /cancelUrl must not contain control characters/);
    await bad({ cancelUrl: ' https://merchant.example/' }, /cancelUrl must not begin or end with whitespace/);
    await bad({ expiresInSeconds: 10 }, /expiresInSeconds/);
    await bad({ requirement: c.deferred({ amount: '0.0000001' }) }, /more decimal places than the token's 6/);
    await bad({ requirement: c.deferred({ paymentFrequency: 'Fortnightly' }) }, /paymentFrequency must be one of/);
    await bad({ requirement: c.deferred({ scheme: 'x402://payg', amount: 500, maxChunkAmount: 100 }) }, /amount .*exceeds maxChunkAmount/);
    await bad({ requirement: c.deferred({ recipient: 'not-a-key' }) }, /recipient|base58/);
    await bad({ trackingId: undefined }, /trackingId/);
    const other = await c.create({ requirement: c.deferred({ gateway: c.h.ln.fixtures.gateways[1]!.address }) });
    expect(other.status).to.equal(403);
    const none = await c.anyone('POST', '/v1/checkout/sessions', { requirement: c.deferred(), trackingId: 't', successUrl: 'https://a.example', cancelUrl: 'https://a.example' });
    expect(none.status).to.equal(401);
    expect((await c.anyone('GET', '/v1/checkout/sessions/nope/public')).status).to.equal(400);
    expect((await c.anyone('GET', `/v1/checkout/sessions/cs_${'a'.repeat(24)}/public`)).status).to.equal(404);
  });

  it('documents the routes in the OpenAPI document: the merchant\'s behind a gateway credential, the page\'s open', async () => {
    const doc = parse(await (await fetch(`${c.api.url}/openapi.yaml`)).text()) as { paths: Record<string, Record<string, any>> };
    expect(doc.paths['/v1/checkout/sessions']!['post'].security).to.deep.equal([{ GatewayApiKey: [] }, { BearerAuth: [] }]);
    expect(doc.paths['/v1/checkout/sessions/{id}']!['get'].security).to.have.length(2);
    expect(doc.paths['/v1/checkout/sessions/{id}/pay']!['post'].responses).to.include.keys('200', '402', '409', '410', '429');
    expect(doc.paths['/v1/checkout/sessions/{id}/public']!['get'].security).to.equal(undefined);
    expect(doc.paths['/v1/checkout/sessions/{id}/transaction']!['post'].requestBody.content['application/json'].schema.required).to.deep.equal(['payer']);
  });

  it('a wallet pays an open session once: complete, the policy on chain, the webhook and the room; a second pay is a 409', async () => {
    const trackingId = 'order-paid-1';
    expect((await client.subscribe(trackingId)).ok).to.equal(true);
    const created = await c.create({ trackingId, label: 'Pro plan' });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const { id, url } = created.body;
    expect(id).to.match(/^cs_[A-Za-z0-9_-]{24}$/);
    expect(url).to.equal(`${c.api.url}/checkout/${id}`);

    const open = await c.merchant('GET', `/v1/checkout/sessions/${id}`);
    expect(open.body).to.deep.include({ id, status: 'open', trackingId, label: 'Pro plan' });
    expect(open.body.requirement).to.include({ scheme: 'deferred', amount: 1000, memo: trackingId, gateway: c.gw.address, resource: url });
    const view = await c.anyone('GET', `/v1/checkout/sessions/${id}/public`);
    expect(view.status, JSON.stringify(view.body)).to.equal(200);
    expect(view.body).to.deep.include({ status: 'open', label: 'Pro plan', decimals: 6, amount: { baseUnits: '1000', ui: '0.001' }, programPaused: false });
    expect(view.body.schedule).to.deep.include({ kind: 'subscription', paymentFrequency: 'Monthly', periodSeconds: 2_592_000 });
    expect(view.body.fees.gatewayFeeBps).to.be.a('number');
    expect(view.body.firstCharge.at).to.equal('on confirmation');
    expect(view.body).to.not.have.property('successUrl');

    const payer = c.h.payer();
    const { answer, signature } = await payAsWallet(c, id, payer);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(answer.body).to.deep.include({ status: 'complete', transaction: signature, payer: payer.publicKey.toBase58() });
    expect(answer.body.redirectUrl).to.equal(`https://merchant.example/thanks?order=1&session_id=${id}`);

    const policy = await readProgramAccount(c.h.rpc, answer.body.policy, 'PaymentPolicy', { programId: PROGRAM_ID });
    expect(policy.kind).to.equal('found');
    if (policy.kind !== 'found') return;
    expect(policy.data['status']).to.equal('Active');
    expect(Number(policy.data['payment_count'])).to.equal(1);

    const done = await c.merchant('GET', `/v1/checkout/sessions/${id}`);
    expect(done.body).to.deep.include({ status: 'complete', payer: payer.publicKey.toBase58(), policy: answer.body.policy, transaction: signature });
    expect((await c.anyone('GET', `/v1/checkout/sessions/${id}/public`)).body.successUrl).to.equal('https://merchant.example/thanks?order=1');

    const completed = () => receiver.requests.map((q) => JSON.parse(q.body)).filter((b: any) => b.type === 'checkout.session.completed' && b.data.sessionId === id);
    await waitFor(async () => completed().length > 0 && lifecycle.some((m) => m.type === 'checkout.session.completed'), 30_000, 'the webhook and the room message');
    expect(completed()[0].data).to.deep.include({
      event: 'checkout.session.completed', sessionId: id, trackingId, gateway: c.gw.address, payer: payer.publicKey.toBase58(),
      policy: answer.body.policy, transaction: signature, amount: '1000',
    });
    const announced = lifecycle.find((m) => m.type === 'checkout.session.completed').data;
    expect(announced).to.deep.include({ trackingId, policy: answer.body.policy });
    // the trackingId's room is open to anyone: the session's id (its capability: /public shows the successUrl) stays out of it
    expect(announced).to.not.have.property('sessionId');
    expect(JSON.stringify(lifecycle)).to.not.include(id);
    const rows = await c.h.env.db.selectFrom('service_events').select('name').where('event_key', '=', `checkout.session.completed:${id}`).execute();
    expect(rows).to.have.length(1);

    const again = await payAsWallet(c, id, c.h.payer());
    expect(again.answer.status).to.equal(409);
    expect(again.answer.body).to.include({ code: 'session_complete', success: false });
    const replay = await c.anyone('POST', `/v1/checkout/sessions/${id}/pay`, { transaction: 'AAAA', proof: { signedAt: 1, signature: '1'.repeat(88) } });
    expect(replay.status).to.equal(409);
  });

  it('a transaction for other terms is refused by the engine\'s checks, and the session stays open', async () => {
    const { body: { id } } = await c.create();
    const payer = c.h.payer();
    const t = await c.anyone('POST', `/v1/checkout/sessions/${id}/transaction`, { payer: payer.publicKey.toBase58() });
    expect(t.status, JSON.stringify(t.body)).to.equal(200);
    // the same session's accepts entry with twice the amount, built and signed as the SDK does
    const accepted = (await c.merchant('GET', `/v1/checkout/sessions/${id}`)).body.requirement;
    const landed = c.h.txCount();
    for (const over of [{ amount: 2000 }, { recipient: c.h.ln.fixtures.gateways[1]!.authority }]) {
      const built = await buildPayment({ ...accepted, ...over }, { wallet: payer, rpc: c.h.rpc });
      const p = payloadOf(built.header).payload;
      const r = await c.anyone('POST', `/v1/checkout/sessions/${id}/pay`, { transaction: p.serializedTransaction, proof: p.proof });
      expect(r.status, JSON.stringify(r.body)).to.equal(402);
      expect(r.body).to.include({ code: 'payment_refused', error: 'the transaction does not carry this checkout\'s terms' });
      expect(r.body.reason).to.match(/not acceptable/);
    }
    expect(c.h.txCount(), 'nothing sent').to.equal(landed);
    expect((await c.merchant('GET', `/v1/checkout/sessions/${id}`)).body.status).to.equal('open');
    // a proof signed for another message is the payer's refusal too
    const signed = signAsWallet(t.body, payer);
    const forged = await c.anyone('POST', `/v1/checkout/sessions/${id}/pay`, { transaction: signed.transaction, proof: { ...signed.proof, signedAt: signed.proof.signedAt - 1 } });
    expect(forged.status).to.equal(402);
    expect(forged.body.reason).to.match(/proof/);
    // and the session can still be paid
    const paid = await c.anyone('POST', `/v1/checkout/sessions/${id}/pay`, { transaction: signed.transaction, proof: signed.proof });
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
  });

  it('a payer without the tokens is told so in words; the session stays open', async () => {
    const { body: { id } } = await c.create();
    const poor = Keypair.generate();
    fundWallet(c.h.ln.chain, poor.publicKey, 0n);
    const { answer } = await payAsWallet(c, id, poor);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(402);
    expect(answer.body.error).to.equal('the wallet does not hold enough of the token for this payment');
    expect(answer.body.reason).to.match(/Insufficient|insufficient/);
    expect(JSON.stringify(answer.body)).to.not.match(/at .*\.ts:\d+/);
    expect((await c.merchant('GET', `/v1/checkout/sessions/${id}`)).body.status).to.equal('open');
  });

  it('the skill document of a hosted session renders its terms and links to its page; a payg session points to the page', async () => {
    const { body: { id } } = await c.create({ trackingId: 'order-skill-1', requirement: c.deferred({ paymentFrequency: 'Custom:600', maxRenewals: 3 }) });
    const res = await fetch(`${c.api.url}/v1/skill/${id}`);
    expect(res.status).to.equal(200);
    const doc = await res.text();
    expect(doc).to.include(`\`${c.api.url}/checkout/${id}\``).and.include('## Pay in a browser').and.include('It can be paid once, until');
    expect(doc).to.include('`0.001`').and.include('= `1000` base units').and.include('`Custom (every 600 s)`').and.include('`order-skill-1`');
    const payg = (await c.create({ requirement: c.deferred({ scheme: 'x402://payg', amount: 100, paymentFrequency: undefined }) })).body.id;
    const refused = await fetch(`${c.api.url}/v1/skill/${payg}`);
    expect(refused.status).to.equal(400);
    expect(((await refused.json()) as any).error).to.include(`/checkout/${payg}`);
    expect((await fetch(`${c.api.url}/v1/skill/cs_${'b'.repeat(24)}`)).status).to.equal(404);
  });

  it('two wallets paying one session at once: exactly one pays, the other is refused with 409 and nothing of it lands', async () => {
    const { body: { id } } = await c.create();
    const [a, b] = [c.h.payer(), c.h.payer()];
    const txs = await Promise.all([a, b].map(async (w) => signAsWallet((await c.anyone('POST', `/v1/checkout/sessions/${id}/transaction`, { payer: w.publicKey.toBase58() })).body, w)));
    const answers = await Promise.all(txs.map((t) => c.anyone('POST', `/v1/checkout/sessions/${id}/pay`, { transaction: t.transaction, proof: t.proof })));
    expect(answers.map((r) => r.status).sort(), JSON.stringify(answers.map((r) => r.body))).to.deep.equal([200, 409]);
    const lost = answers.find((r) => r.status === 409)!;
    expect(['session_paying', 'session_complete']).to.include(lost.body.code);
    const winner = answers.find((r) => r.status === 200)!.body;
    const loser = txs.find((t) => t.signature !== winner.transaction)!;
    const status = await c.h.rpc.call<{ value: unknown[] }>('getSignatureStatuses', [[loser.signature]]);
    expect(status.value[0], 'the losing transaction was never sent').to.equal(null);
    expect((await c.merchant('GET', `/v1/checkout/sessions/${id}`)).body).to.deep.include({ status: 'complete', transaction: winner.transaction });
  });

  it('while the program is paused the page is told, and a pay answers so in words; the session stays open', async () => {
    const admin = deriveActors(c.h.seed).admin;
    const pause = async (paused: boolean) => {
      const ix = programInstruction(PROGRAM_ID, 'set_emergency_pause', { admin: admin.publicKey.toBase58(), config: createPdaDeriver(PROGRAM_ID).config() }, { paused });
      const { value } = await c.h.rpc.call<{ value: { blockhash: string } }>('getLatestBlockhash', [{ commitment: 'confirmed' }]);
      const tx = new Transaction({ feePayer: admin.publicKey, recentBlockhash: value.blockhash }).add(ix);
      tx.sign(admin);
      const sig = await c.h.rpc.call<string>('sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64' }]);
      await waitFor(async () => {
        const st = await c.h.rpc.call<{ value: ({ confirmationStatus?: string } | null)[] }>('getSignatureStatuses', [[sig]]);
        return st.value[0]?.confirmationStatus === 'confirmed' || st.value[0]?.confirmationStatus === 'finalized';
      }, 10_000, 'the pause confirmed');
    };
    const { body: { id } } = await c.create();
    await pause(true);
    try {
      expect((await c.anyone('GET', `/v1/checkout/sessions/${id}/public`)).body.programPaused).to.equal(true);
      const { answer } = await payAsWallet(c, id, c.h.payer());
      expect(answer.status, JSON.stringify(answer.body)).to.equal(402);
      expect(answer.body.error).to.equal('payments are paused by the program right now: try again later');
      expect(answer.body.reason).to.match(/ProgramPaused/);
      expect((await c.merchant('GET', `/v1/checkout/sessions/${id}`)).body.status).to.equal('open');
    } finally {
      await pause(false);
    }
  });
});
