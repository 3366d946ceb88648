/**
 * x402://upto through the facilitator on a localnet started here: the payer authorizes a
 * maximum (an UpTo policy created by its Payment transaction, which approves that maximum, settled by /v1/x402/settle
 * with a JWT that expires at the deadline); the merchant, as the policy's recipient,
 * settles a smaller actual amount with its own execute_payment through /v1/x402/usage;
 * the chain charges exactly that amount; a second settlement is refused and nothing more
 * is charged; an amount above the maximum is refused before anything is sent.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { buildUptoSettlement } from '../../commands/x402/upto.js';
import { UPTO_START_SKEW_SECONDS, type AcceptedRequirement } from '../../commands/x402/requirements.js';
import { decodeJwt } from 'jose';
import { associatedTokenAddress } from '../../src/kernel/domain/spl-token.js';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { paymentRequired, x402Grant } from '../../commands/x402/middleware.js';
import { payAndFetch } from '../../commands/x402/client/pay.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { call, payloadOf, registerUpto } from './x402-facilitator-support.js';

const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';

describe('x402://upto: authorize a maximum, settle the actual amount once', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let key = '';
  let upto: AcceptedRequirement;
  let merchant: Keypair;
  const post = (path: string, body: unknown) => call(h.api.url, 'POST', path, body, { 'x-api-key': key });
  const balance = async (owner: string): Promise<bigint> => {
    const r = await h.rpc.call<{ value: { amount: string } }>('getTokenAccountBalance', [associatedTokenAddress(owner, USDC_DEV)]);
    return BigInt(r.value.amount);
  };
  const authorize = async (payer: Keypair) => {
    const r = await post('/v1/x402/settle', { paymentPayload: payloadOf((await buildPayment(upto, { wallet: payer, rpc: h.rpc })).header), paymentRequirements: upto });
    expect(r.body.success, JSON.stringify(r.body)).to.equal(true);
    return r.body as { jwt: string; policy: string; expiresAt: number };
  };
  const settle = async (jwt: string, policy: string, amount: bigint, signer = merchant) => {
    const { serializedTransaction } = await buildUptoSettlement({ rpc: h.rpc, programId: PROGRAM_ID, policy, amount, signer });
    return post('/v1/x402/usage', { jwt, paymentRequirements: upto, amount: amount.toString(), transaction: serializedTransaction });
  };

  before(async () => {
    h = await startX402('upto');
    const gw = h.ln.fixtures.gateways[0]!;
    merchant = Keypair.fromSecretKey(bs58.decode(gw.authoritySecretKey));
    ({ key, upto } = await registerUpto(h, gw, 500000n, { description: 'LLM completions, charged by tokens used' }));
  });
  after(async () => { await h.close(); });

  it('lists the upto window in the accepts entry and in /supported', async () => {
    expect(upto).to.include({ scheme: 'x402://upto', amount: 500_000, maxAmount: 500_000, maxTimeoutSeconds: 600 });
    // the window starts a little in the past: the chain's clock lags ours by up to a slot
    expect(upto.deadline! - upto.validAfter!).to.equal(600 + UPTO_START_SKEW_SECONDS);
    const s = await call(h.api.url, 'GET', '/v1/x402/supported');
    expect(s.body.kinds.map((k: any) => k.scheme)).to.include('x402://upto');
  });

  it('authorizes the maximum: an UpTo policy on chain, a JWT that expires at the deadline', async () => {
    const payer = h.payer();
    const a = await authorize(payer);
    const acc = await readProgramAccount(h.rpc, a.policy, 'PaymentPolicy', { programId: PROGRAM_ID });
    expect(acc.kind).to.equal('found');
    if (acc.kind !== 'found') return;
    expect(acc.data['policy_type']).to.include({ kind: 'UpTo', max_amount: '500000', deadline: String(upto.deadline) });
    expect(decodeJwt(a.jwt).exp).to.equal(upto.deadline);
    expect(a.expiresAt).to.equal(upto.deadline);
  });

  it('settles a smaller actual amount: the chain charges exactly that, and a second settlement is refused', async () => {
    const payer = h.payer();
    const a = await authorize(payer);
    const before = await balance(payer.publicKey.toBase58());
    const admitted = await post('/v1/x402/usage', { jwt: a.jwt, paymentRequirements: upto, amount: '123456' });
    expect(admitted.body).to.include({ admitted: true, scheme: 'x402://upto', policy: a.policy });
    expect(admitted.body.settled).to.equal(undefined);
    expect(await balance(payer.publicKey.toBase58())).to.equal(before);

    const r = await settle(a.jwt, a.policy, 123_456n);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.settled, JSON.stringify(r.body)).to.be.an('object');
    expect(r.body).to.deep.include({ admitted: true, policy: a.policy, settled: { amount: '123456', transaction: r.body.settled.transaction } });
    expect(await balance(payer.publicKey.toBase58())).to.equal(before - 123_456n);
    const record = h.ln.ledger().flatMap((e) => (e.name === 'PaymentRecord' && e.data.payment_policy === a.policy ? [e.data.amount] : []));
    expect(record.map((amount) => amount.toString())).to.deep.equal(['123456']);
    const acc = await readProgramAccount(h.rpc, a.policy, 'PaymentPolicy', { programId: PROGRAM_ID });
    expect(acc.kind === 'found' && acc.data['status']).to.equal('Completed');

    const txs = h.txCount();
    const again = await settle(a.jwt, a.policy, 1n);
    expect(again.body.admitted).to.equal(false);
    expect(again.body.reason).to.match(/Completed|settled already/);
    expect(h.txCount()).to.equal(txs);
    expect(await balance(payer.publicKey.toBase58())).to.equal(before - 123_456n);
  });

  it('tributary pay\'s client pays an upto route of a middleware in remote mode, and the bearer is admitted', async () => {
    const gw = h.ln.fixtures.gateways[0]!;
    const { resource: _r, id: _i, extra: _e, validAfter: _v, deadline: _d, maxAmount: _m, ...input } = upto;
    const app = express();
    app.get('/completions', paymentRequired([input], { facilitatorUrl: h.api.url, apiKey: key, programId: PROGRAM_ID }), (_req, res) => {
      res.json({ content: 'completion', grant: x402Grant(res) });
    });
    const server = await new Promise<Server>((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/completions`;
      const wallet = h.payer();
      const r = await payAndFetch(url, { wallet, rpcUrl: h.ln.rpcUrl, scheme: 'x402://upto' });
      expect(r.response.status).to.equal(200);
      const body = (await r.response.json()) as any;
      expect(body.grant).to.include({ payer: wallet.publicKey.toBase58(), scheme: 'x402://upto', requirementId: upto.id });
      expect(gw.address).to.equal(upto.gateway);
    } finally {
      await new Promise((res) => server.close(res));
    }
  });

  it('refuses an amount above the maximum, a settlement by someone else, and allows 0', async () => {
    const payer = h.payer();
    const a = await authorize(payer);
    const txs = h.txCount();
    const over = await settle(a.jwt, a.policy, 500_001n);
    expect(over.body).to.deep.equal({ admitted: false, reason: 'the amount 500001 is above the authorized maximum 500000' });
    const stranger = h.payer();
    const bad = await settle(a.jwt, a.policy, 10n, stranger);
    expect(bad.body.reason).to.match(/recipient or the gateway's signer/);
    const { serializedTransaction } = await buildUptoSettlement({ rpc: h.rpc, programId: PROGRAM_ID, policy: a.policy, amount: 10n, signer: merchant });
    const mismatch = await post('/v1/x402/usage', { jwt: a.jwt, paymentRequirements: upto, amount: '11', transaction: serializedTransaction });
    expect(mismatch.body.reason).to.match(/charges 10; the reported amount is 11/);
    expect(h.txCount()).to.equal(txs);
    const before = await balance(payer.publicKey.toBase58());
    const zero = await settle(a.jwt, a.policy, 0n);
    expect(zero.body, JSON.stringify(zero.body)).to.deep.include({ admitted: true });
    expect(await balance(payer.publicKey.toBase58())).to.equal(before);
  });
});
