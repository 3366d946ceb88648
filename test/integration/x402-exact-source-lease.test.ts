/**
 * x402 `exact`, one payer's payments sent one at a time: a payer funded for one price signs
 * several payments and sends them at once. Each passes simulation alone, so without a hold
 * on its source token account every one would be sent and all but one would fail on chain,
 * each failure's fee paid by the service's fee payer. One transaction is sent: the first is
 * settled, the others wait for its fate and are refused by their own simulation (the
 * balance is gone), nothing sent for them. A payment in doubt holds its account until a
 * settle learns its fate: another payment from it meanwhile is refused as busy, sent nothing.
 */
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { fundWallet } from '../../infra/localnet/genesis.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { DEVNET_USDC, devnetWallet } from '../support/devnet.js';
import { startExactWorld, type ExactWorld, type Faults } from './x402-exact-support.js';

describe('x402 exact: concurrent payments from one source account send one transaction at a time', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let w: ExactWorld;

  before(async () => {
    env = await createTestEnv('x402-exact-source-lease');
    w = await startExactWorld(env, { seed: 'exact-source-lease' });
  });
  after(async () => { await w?.close(); await env?.close(); });

  it('4 payments at once from a payer funded for one: one sent and settled, the others refused after it, the fee payer pays one fee', async () => {
    const keypair = Keypair.generate();
    // 2 USDC: one price of 1.25, never two
    fundWallet(w.dn.ln.chain, keypair.publicKey, 2n);
    const payer = devnetWallet(keypair);
    const r = w.requirements();
    const payments = [];
    for (let i = 0; i < 4; i++) payments.push(await w.pay(payer, r));
    const sent = w.sends.length;
    const lamportsBefore = w.dn.lamports(w.feePayer);
    const before = w.dn.tokenBalance(payer.address, DEVNET_USDC);

    const answers = await Promise.all(payments.map((p, i) => (i % 2 ? w.secondNode() : w.facilitator).settle(p, r, { gateway: w.merchant.address })));

    expect(w.sends.length - sent, `transactions sent: ${JSON.stringify(answers)}`).to.equal(1);
    const settled = answers.filter((a) => a.success);
    expect(settled, JSON.stringify(answers)).to.have.length(1);
    for (const a of answers.filter((x) => !x.success)) {
      expect(a.transaction, JSON.stringify(a)).to.equal('');
      expect(a.errorReason, JSON.stringify(a)).to.be.a('string').and.not.equal('invalid_exact_svm_transaction_failed');
    }
    expect(w.dn.tokenBalance(payer.address, DEVNET_USDC)).to.equal(before - 1_250_000n);
    const spent = lamportsBefore - w.dn.lamports(w.feePayer);
    expect(spent, 'the fee payer paid one fee').to.be.greaterThan(0).and.lessThan(20_000);
  });

  it('a payer whose first payment settled pays again: the second is settled (the hold ends with the first)', async () => {
    const payer = w.dn.fund('payer-twice');
    const r = w.requirements();
    const first = await w.facilitator.settle(await w.pay(payer, r), r, { gateway: w.merchant.address });
    expect(first, JSON.stringify(first)).to.deep.include({ success: true });
    const second = await w.secondNode().settle(await w.pay(payer, r), r, { gateway: w.merchant.address });
    expect(second, JSON.stringify(second)).to.deep.include({ success: true });
  });
});

describe('x402 exact: a payment in doubt holds its source account until its fate is known', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let w: ExactWorld;
  const faults: Faults = {};

  before(async () => {
    env = await createTestEnv('x402-exact-source-doubt');
    w = await startExactWorld(env, { seed: 'exact-source-doubt', faults, confirmTimeoutMs: 1500 });
  });
  after(async () => { await w?.close(); await env?.close(); });

  it('in doubt: another payment from the account is refused as busy, nothing sent; once the first is settled, it settles', async () => {
    const payer = w.dn.fund('payer-doubt-busy');
    const r = w.requirements();
    const first = await w.pay(payer, r);
    const second = await w.pay(payer, r);
    faults.noStatuses = true;
    let pending;
    try {
      pending = await w.facilitator.settle(first, r, { gateway: w.merchant.address });
      expect(pending, JSON.stringify(pending)).to.deep.include({ success: false, errorReason: 'settlement_pending' });
      const sent = w.sends.length;
      const busy = await w.secondNode().settle(second, r, { gateway: w.merchant.address });
      expect(busy, JSON.stringify(busy)).to.deep.include({ success: false, errorReason: 'invalid_exact_svm_source_account_busy', transaction: '' });
      expect(w.sends.length, 'nothing sent for it').to.equal(sent);
    } finally { faults.noStatuses = false; }

    const settled = await w.facilitator.settle(first, r, { gateway: w.merchant.address });
    expect(settled, JSON.stringify(settled)).to.deep.include({ success: true, transaction: pending.transaction });
    const after = await w.secondNode().settle(second, r, { gateway: w.merchant.address });
    expect(after, JSON.stringify(after)).to.deep.include({ success: true, payer: payer.address });
  });
});
