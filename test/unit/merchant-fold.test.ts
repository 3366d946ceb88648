/**
 * The merchant fold's invariants, on the pure function: the running MRR of a gateway and
 * mint is the sum of the monthly rates counted there, so what a policy counted leaves its
 * own gateway when its address is created again at another; an MRR the batch did not load
 * or one that would go negative stops the fold instead of being written.
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { makeEvent } from '../support/anchor-events.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { monthlyMicro } from '../../src/kernel/domain/mrr.js';
import type { PolicyType } from '../../src/kernel/domain/policy-type.js';
import { foldMerchant, type MerchantState, type MPolicy } from '../../projections/merchant/fold.js';
import { pairKey } from '../../projections/merchant/needs.js';

const pda = createPdaDeriver(PROGRAM_ID);
const key = (label: string): string => Keypair.fromSeed(createHash('sha256').update(label).digest()).publicKey.toBase58();
const MINT = key('fold-mint');
const OWNER = key('fold-owner');
const UP = pda.userPayment(OWNER, MINT);
const P = pda.paymentPolicy(UP, 1);
const [GA, GB] = [key('fold-gateway-a'), key('fold-gateway-b')];
const monthly = (amount: string): PolicyType => ({
  kind: 'Subscription', amount, auto_renew: true, max_renewals: null, payment_frequency: 'Monthly', next_payment_due: '0',
});

/** given: policy P counted at gateway A, both pairs' MRR loaded */
function given(mrrA: bigint): MerchantState {
  const type = monthly('1000');
  const p: MPolicy = {
    address: P, gateway: GA, user_payment: UP, payer: OWNER, token_mint: MINT, policy_type: type, status: 'Active', deleted: false,
    ended: false, counted: true, monthly_micro: monthlyMicro(type), next_due: '0', created_at: '1',
  };
  return {
    protocolShareBps: 2000, gateways: new Map(), userPayments: new Map([[UP, { owner: OWNER, token_mint: MINT }]]),
    policies: new Map([[P, p]]), mrr: new Map([[pairKey(GA, MINT), mrrA], [pairKey(GB, MINT), 0n]]),
  };
}

const createdAt = (gateway: string, type: PolicyType) => makeEvent('PaymentPolicyCreated', {
  user_payment: UP, recipient: key('fold-recipient'), gateway, policy_id: 1, created_policies_count: 0, policy_type: type, memo: '',
}, { seed: `fold:${gateway}`, blockTime: 1_700_000_000 });

describe('merchant fold', () => {
  it('moves what a policy counted to the gateway its address is created at again', () => {
    const state = given(monthlyMicro(monthly('1000')));
    const out = foldMerchant(pda, state, [createdAt(GB, monthly('3000'))]);
    expect(state.mrr.get(pairKey(GA, MINT))).to.equal(0n);
    expect(state.mrr.get(pairKey(GB, MINT))).to.equal(monthlyMicro(monthly('3000')));
    expect(state.policies.get(P)).to.include({ gateway: GB, counted: true });
    // the payer's subscriber row at the gateway left is recounted too
    expect([...out.touched].sort()).to.deep.equal([`${GA}|${MINT}|${OWNER}`, `${GB}|${MINT}|${OWNER}`].sort());
  });

  it('refuses to move an MRR the batch did not load', () => {
    const state = given(monthlyMicro(monthly('1000')));
    state.mrr.delete(pairKey(GB, MINT));
    expect(() => foldMerchant(pda, state, [createdAt(GB, monthly('3000'))])).to.throw(/not loaded/);
  });

  it('folds a deletion and a later status change or payment of the policy alike in either order', () => {
    const deleted = makeEvent('PaymentPolicyDeleted', { payment_policy: P, owner: OWNER, policy_id: 1 }, { seed: 'fold:order-delete', blockTime: 1_700_000_100 });
    const resumed = makeEvent('PaymentPolicyStatusChanged', { payment_policy: P, user_payment: UP, old_status: 'Paused', new_status: 'Active' },
      { seed: 'fold:order-status', blockTime: 1_700_000_050 });
    const paid = makeEvent('PaymentRecord', {
      payment_policy: P, gateway: GA, amount: '1000', timestamp: '1700000060', memo: '', record_id: 1, payer: OWNER, recipient: key('fold-recipient'), token_mint: MINT,
    }, { seed: 'fold:order-paid', blockTime: 1_700_000_060 });
    for (const other of [resumed, paid]) {
      const rowAfter = (events: Parameters<typeof foldMerchant>[2]) => {
        const state = given(monthlyMicro(monthly('1000')));
        foldMerchant(pda, state, events);
        return state.policies.get(P);
      };
      const inChainOrder = rowAfter([other, deleted]);
      expect(inChainOrder, other.name).to.include({ deleted: true, next_due: null });
      expect(rowAfter([deleted, other]), `${other.name} after the deletion`).to.deep.equal(inChainOrder);
    }
  });

  it('refuses an MRR that would go negative', () => {
    // a running MRR below what its policies count: a model corrupted, never written further
    const state = given(0n);
    const deleted = makeEvent('PaymentPolicyDeleted', { payment_policy: P, owner: OWNER, policy_id: 1 }, { seed: 'fold:delete', blockTime: 1_700_000_000 });
    expect(() => foldMerchant(pda, state, [deleted])).to.throw(/negative/);
  });
});
