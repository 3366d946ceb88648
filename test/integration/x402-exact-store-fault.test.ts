/**
 * x402 `exact`, a pending signature the ledger could not record: the confirmation timed out
 * and @x402/svm's pendingStore.set failed (a Postgres error), so the package answered a
 * terminal failure carrying the signature. The transaction landed: the payment must stay in
 * doubt (the row `sending` with its signature, the answer `settlement_pending`), and a retry
 * confirms it and answers settled, the payer charged once.
 */
import { expect } from 'chai';
import type { PendingSettlementStore } from '@x402/core/facilitator';
import { pendingStore } from '../../commands/x402/exact/settlements.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { DEVNET_USDC } from '../support/devnet.js';
import { startExactWorld, type ExactWorld, type Faults } from './x402-exact-support.js';

describe('x402 exact: a pending signature the ledger failed to record stays in doubt, never failed for good', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let w: ExactWorld;
  const faults: Faults = {};
  let failSets = 0;

  before(async () => {
    env = await createTestEnv('x402-exact-store-fault');
    const ledger = pendingStore(env.db);
    // the ledger's store, whose next `set` fails when a test asks (a Postgres error)
    const store: PendingSettlementStore = {
      get: (key) => ledger.get(key),
      delete: (key) => ledger.delete(key),
      set: async (key, txHash) => {
        if (failSets > 0) { failSets -= 1; throw new Error('fault: the database refused the write'); }
        await ledger.set(key, txHash);
      },
    };
    w = await startExactWorld(env, { seed: 'exact-store-fault', faults, confirmTimeoutMs: 1500, pendingStore: store });
  });
  after(async () => { await w?.close(); await env?.close(); });

  it('confirmation timed out, the pending write failed, the transaction landed: pending, the row in doubt, a retry answers settled', async () => {
    const payer = w.dn.fund('payer-store-fault');
    const r = w.requirements({ memo: 'store-fault-1' });
    const payment = await w.pay(payer, r);
    const sent = w.sends.length;
    const before = w.dn.tokenBalance(payer.address, DEVNET_USDC);
    faults.noStatuses = true;
    failSets = 1;
    let first;
    try {
      first = await w.facilitator.settle(payment, r, { gateway: w.merchant.address });
    } finally { faults.noStatuses = false; }
    expect(failSets, 'the write was tried').to.equal(0);
    expect(w.dn.tokenBalance(payer.address, DEVNET_USDC), 'it landed').to.equal(before - 1_250_000n);
    expect(first, JSON.stringify(first)).to.deep.include({ success: false, errorReason: 'settlement_pending' });
    expect(first.transaction).to.not.equal('');
    const row = await env.db.selectFrom('x402_exact_settlements').select(['state', 'signature']).where('signature', '=', first.transaction).executeTakeFirst();
    expect(row).to.deep.equal({ state: 'sending', signature: first.transaction });

    const retry = await w.secondNode().settle(payment, r, { gateway: w.merchant.address });
    expect(retry, JSON.stringify(retry)).to.deep.include({ success: true, transaction: first.transaction, payer: payer.address });
    expect(w.sends.length - sent, 'sent once').to.equal(1);
    expect(w.dn.tokenBalance(payer.address, DEVNET_USDC)).to.equal(before - 1_250_000n);
  });
});
