/**
 * x402 `exact` on Solana with the service as facilitator: a payment built by @x402/svm's
 * exact client for requirements naming the service's fee payer is verified and settled on
 * the devnet localnet (the payer pays the amount, the merchant gets it, the fee payer pays
 * only the network fee); a duplicate settle answers the stored result and sends nothing;
 * /verify refuses the settled transaction (a replay).
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { DEVNET_USDC } from '../support/devnet.js';
import { startExactWorld, type ExactWorld } from './x402-exact-support.js';

describe('x402 exact: the service verifies, co-signs, sends and settles once', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let w: ExactWorld;

  before(async () => {
    env = await createTestEnv('x402-exact');
    w = await startExactWorld(env);
  });
  after(async () => { await w?.close(); await env?.close(); });

  it('lists the exact kind with the fee payer', async () => {
    const k = await w.facilitator.supportedKind(w.dn.network);
    expect(k?.kind).to.deep.include({ x402Version: 2, scheme: 'exact', network: w.dn.network });
    expect(k?.kind.extra).to.deep.equal({ feePayer: w.feePayer });
    expect(k?.signers).to.deep.equal([w.feePayer]);
    expect(await w.facilitator.supportedKind('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp')).to.equal(undefined);
  });

  it('settles a standard client payment: payer -amount, payTo +amount, the fee payer pays the fee only', async () => {
    const payer = w.dn.fund('payer-1');
    const r = w.requirements({ memo: 'order-1' });
    const payment = await w.pay(payer, r);
    const before = { payer: w.dn.tokenBalance(payer.address, DEVNET_USDC), merchant: w.dn.tokenBalance(w.merchant.address, DEVNET_USDC), fee: w.dn.lamports(w.feePayer), feeTokens: w.dn.tokenBalance(w.feePayer, DEVNET_USDC) };

    const v = await w.facilitator.verify(payment, r);
    expect(v).to.deep.include({ isValid: true, payer: payer.address });
    expect(w.sends).to.have.length(0);

    const s = await w.facilitator.settle(payment, r, { gateway: w.merchant.address });
    expect(s, JSON.stringify(s)).to.deep.include({ success: true, network: w.dn.network, payer: payer.address });
    expect(s.transaction).to.be.a('string').and.not.equal('');
    expect(w.sends).to.have.length(1);
    expect(w.dn.tokenBalance(payer.address, DEVNET_USDC)).to.equal(before.payer - 1_250_000n);
    expect(w.dn.tokenBalance(w.merchant.address, DEVNET_USDC)).to.equal(before.merchant + 1_250_000n);
    const fee = before.fee - w.dn.lamports(w.feePayer);
    expect(fee, 'the network fee: two signatures and a 1 µlamport/CU priority').to.be.greaterThan(0).and.at.most(10_100);
    expect(w.dn.tokenBalance(w.feePayer, DEVNET_USDC)).to.equal(before.feeTokens);

    // the same payment again: the stored answer, nothing sent, nothing moved
    const again = await w.facilitator.settle(payment, r, { gateway: w.merchant.address });
    expect(again).to.deep.equal(s);
    expect(w.sends).to.have.length(1);
    expect(w.dn.tokenBalance(payer.address, DEVNET_USDC)).to.equal(before.payer - 1_250_000n);

    // a replay at /verify is refused
    const replay = await w.facilitator.verify(payment, r);
    expect(replay).to.deep.include({ isValid: false, invalidReason: 'duplicate_settlement' });

    const row = await env.db.selectFrom('x402_exact_settlements').selectAll().where('signature', '=', s.transaction).executeTakeFirstOrThrow();
    expect(row).to.deep.include({ state: 'settled', payer: payer.address, pay_to: w.merchant.address, asset: DEVNET_USDC, amount: '1250000', memo: 'order-1', resource: 'https://merchant.example/report' });
  });

  it('concurrent settles of one payment on two nodes send it once and answer the same', async () => {
    const payer = w.dn.fund('payer-2');
    const r = w.requirements();
    const payment = await w.pay(payer, r);
    const sent = w.sends.length;
    const before = w.dn.tokenBalance(payer.address, DEVNET_USDC);
    const other = w.secondNode();
    const answers = await Promise.all([w.facilitator, other, w.facilitator, other].map((f) => f.settle(payment, r, { gateway: w.merchant.address })));
    expect(answers.every((a) => a.success)).to.equal(true);
    expect(new Set(answers.map((a) => a.transaction)).size).to.equal(1);
    expect(w.sends.length - sent).to.equal(1);
    expect(w.dn.tokenBalance(payer.address, DEVNET_USDC)).to.equal(before - 1_250_000n);
    // later, on a third node that never saw it: the stored answer
    expect(await w.secondNode().settle(payment, r, { gateway: w.merchant.address })).to.deep.equal(answers[0]);
    // Redis lost its entries: the Postgres ledger still answers, nothing is sent
    const keys = await env.redis.keys(`${env.prefix}exact:*`);
    expect(keys.length).to.be.greaterThan(0);
    await env.redis.del(...keys);
    expect(await w.secondNode().settle(payment, r, { gateway: w.merchant.address })).to.deep.equal(answers[0]);
    expect(w.sends.length - sent).to.equal(1);
  });
});
