/**
 * x402 `exact`, a settlement in doubt: the send reached the chain and its answer was lost,
 * and the statuses did not answer either. The facilitator answers `settlement_pending` with
 * the signature and keeps it: a retry (on any node: the record is in Postgres) confirms that
 * signature and answers success, sending nothing again; /verify meanwhile refuses the
 * payment as in flight. A lost send answer alone is confirmed in the same call. A send that
 * never reached the chain is sent again, the same bytes, by a retry while its blockhash is valid.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import type { PaymentRequirements } from '@x402/core/types';
import { DEVNET_USDC, type DevnetWallet } from '../support/devnet.js';
import { startExactWorld, type ExactWorld, type Faults } from './x402-exact-support.js';

describe('x402 exact: a signature in doubt is confirmed or its same bytes sent again, never signed anew or released', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let w: ExactWorld;
  const faults: Faults = {};

  before(async () => {
    env = await createTestEnv('x402-exact-doubt');
    w = await startExactWorld(env, { seed: 'exact-doubt', faults, confirmTimeoutMs: 1500 });
  });
  after(async () => { await w?.close(); await env?.close(); });

  /** a payment whose send never reaches the node: pending, with what was sent and the payer's balance before */
  const droppedSend = async (payer: DevnetWallet, r: PaymentRequirements) => {
    const payment = await w.pay(payer, r);
    const sent = w.sends.length;
    const before = w.dn.tokenBalance(payer.address, DEVNET_USDC);
    faults.dropSends = true;
    let pending;
    try {
      pending = await w.facilitator.settle(payment, r, { gateway: w.merchant.address });
    } finally { faults.dropSends = false; }
    expect(pending, JSON.stringify(pending)).to.deep.include({ success: false, errorReason: 'settlement_pending' });
    return { payment, sent, before, pending };
  };

  it('a lost send answer: confirmed by status, settled', async () => {
    const payer = w.dn.fund('payer-lost');
    const r = w.requirements();
    const payment = await w.pay(payer, r);
    faults.loseSendAnswers = true;
    try {
      const s = await w.facilitator.settle(payment, r, { gateway: w.merchant.address });
      expect(s, JSON.stringify(s)).to.deep.include({ success: true, payer: payer.address });
    } finally { faults.loseSendAnswers = false; }
    expect(w.sends).to.have.length(1);
  });

  it('sent, no answer and no status: pending with the signature, then settled by a retry that sends nothing', async () => {
    const payer = w.dn.fund('payer-doubt');
    const r = w.requirements({ memo: 'doubt-1' });
    const payment = await w.pay(payer, r);
    const sent = w.sends.length;
    const before = w.dn.tokenBalance(payer.address, DEVNET_USDC);
    Object.assign(faults, { loseSendAnswers: true, noStatuses: true });
    let pending;
    try {
      pending = await w.facilitator.settle(payment, r, { gateway: w.merchant.address });
    } finally { Object.assign(faults, { loseSendAnswers: false }); }
    expect(pending, JSON.stringify(pending)).to.deep.include({ success: false, errorReason: 'settlement_pending' });
    expect(pending.transaction).to.not.equal('');
    expect(w.dn.tokenBalance(payer.address, DEVNET_USDC), 'it landed').to.equal(before - 1_250_000n);

    // still no status: still pending, the same signature, nothing sent again
    const still = await w.facilitator.settle(payment, r, { gateway: w.merchant.address });
    expect(still).to.deep.include({ success: false, errorReason: 'settlement_pending', transaction: pending.transaction });
    expect((await w.facilitator.verify(payment, r)).invalidReason).to.equal('duplicate_settlement');
    expect(w.sends.length - sent).to.equal(1);

    faults.noStatuses = false;
    const settled = await w.facilitator.settle(payment, r, { gateway: w.merchant.address });
    expect(settled, JSON.stringify(settled)).to.deep.include({ success: true, transaction: pending.transaction, payer: payer.address });
    expect(w.sends.length - sent, 'sent once').to.equal(1);
    expect(w.dn.tokenBalance(payer.address, DEVNET_USDC)).to.equal(before - 1_250_000n);
    const events = await env.db.selectFrom('service_events').select(['name', 'tracking_id']).where('event_key', '=', `x402.exact:${pending.transaction}`).execute();
    expect(events).to.deep.equal([{ name: 'x402.payment.settled', tracking_id: 'doubt-1' }]);
  });

  it('a send lost on its way: pending, then the same bytes again by a retry, landed once', async () => {
    const payer = w.dn.fund('payer-dropped');
    const r = w.requirements();
    const { payment, sent, before, pending } = await droppedSend(payer, r);
    expect(w.dn.tokenBalance(payer.address, DEVNET_USDC), 'nothing landed').to.equal(before);

    const settled = await w.facilitator.settle(payment, r, { gateway: w.merchant.address });
    expect(settled, JSON.stringify(settled)).to.deep.include({ success: true, transaction: pending.transaction });
    expect(w.sends.length - sent, 'the same bytes twice').to.equal(2);
    expect(w.sends[sent + 1]).to.equal(w.sends[sent]);
    expect(w.dn.tokenBalance(payer.address, DEVNET_USDC)).to.equal(before - 1_250_000n);
  });

  it('a send lost on its way whose blockhash then expires: failed as expired (settle and verify say so), nothing taken, never sent again; a new payment settles', async () => {
    const payer = w.dn.fund('payer-expired');
    const r = w.requirements();
    const { payment, sent, before, pending } = await droppedSend(payer, r);

    // past the blockhash's 150 blocks: the recorded bytes can never land
    const res = await fetch(w.dn.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tributary_advanceSlots', params: [200] }) });
    expect(res.status).to.equal(200);
    const expired = await w.facilitator.settle(payment, r, { gateway: w.merchant.address });
    expect(expired, JSON.stringify(expired)).to.deep.include({ success: false, errorReason: 'invalid_exact_svm_transaction_expired', transaction: pending.transaction });
    const again = await w.facilitator.settle(payment, r, { gateway: w.merchant.address });
    expect(again).to.deep.include({ success: false, errorReason: 'invalid_exact_svm_transaction_expired' });
    // /verify says why, as settle does: an expired payment is no duplicate of one settled or in flight
    const verified = await w.facilitator.verify(payment, r);
    expect(verified, JSON.stringify(verified)).to.deep.include({
      isValid: false, invalidReason: 'invalid_exact_svm_transaction_expired', invalidMessage: expired.errorMessage, payer: payer.address,
    });
    expect(w.sends.length - sent, 'the lost send only').to.equal(1);
    expect(w.dn.tokenBalance(payer.address, DEVNET_USDC), 'nothing taken').to.equal(before);

    const fresh = await w.pay(payer, r);
    const settled = await w.facilitator.settle(fresh, r, { gateway: w.merchant.address });
    expect(settled, JSON.stringify(settled)).to.deep.include({ success: true, payer: payer.address });
    expect(w.dn.tokenBalance(payer.address, DEVNET_USDC)).to.equal(before - 1_250_000n);
  });
});
