/**
 * x402 `exact`: a payment changed in any way the scheme forbids is refused at /verify and
 * at /settle with the reason, nothing is sent and no balance moves: another amount, payTo
 * or asset, the fee payer in an instruction's accounts, a compute price over the cap, an
 * extra instruction, another network, a memo other than the one required.
 */
import { expect } from 'chai';
import { AccountRole, type Address, type Instruction, type KeyPairSigner } from '@solana/kit';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { PublicKey } from '@solana/web3.js';
import { fundWallet } from '../../infra/localnet/genesis.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { DEVNET_PYUSD, DEVNET_USDC, type DevnetWallet } from '../support/devnet.js';
import { PRICE_CAP, startExactWorld, tamperedPayment, type ExactWorld } from './x402-exact-support.js';

describe('x402 exact: tampered payments are refused with the reason and move nothing', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let w: ExactWorld;
  let payer: DevnetWallet;

  before(async () => {
    env = await createTestEnv('x402-exact-tamper');
    w = await startExactWorld(env, { seed: 'exact-tamper' });
    payer = w.dn.fund('payer');
  });
  after(async () => { await w?.close(); await env?.close(); });

  const balances = () => [
    w.dn.tokenBalance(payer.address, DEVNET_USDC), w.dn.tokenBalance(w.merchant.address, DEVNET_USDC),
    w.dn.tokenBalance(payer.address, DEVNET_PYUSD), w.dn.lamports(w.feePayer), w.dn.lamports(payer.address),
  ];

  async function refused(payment: PaymentPayload, r: PaymentRequirements, reason: RegExp): Promise<void> {
    const before = balances();
    const sent = w.sends.length;
    const v = await w.facilitator.verify(payment, r);
    expect(v.isValid, JSON.stringify(v)).to.equal(false);
    expect(v.invalidReason).to.match(reason);
    const s = await w.facilitator.settle(payment, r, { gateway: w.merchant.address });
    expect(s.success, JSON.stringify(s)).to.equal(false);
    expect(s.errorReason).to.match(reason);
    expect(s.transaction).to.equal('');
    expect(w.sends.length, 'nothing sent').to.equal(sent);
    expect(balances(), 'no balance moved').to.deep.equal(before);
  }

  it('another amount', async () => {
    const r = w.requirements();
    await refused(await tamperedPayment(w, payer, r, { amount: 1n }), r, /amount_mismatch/);
    await refused(await tamperedPayment(w, payer, r, { amount: BigInt(r.amount) + 1n }), r, /amount_mismatch/);
  });

  it('another payTo', async () => {
    const r = w.requirements();
    const other = w.dn.fund('someone-else');
    await refused(await tamperedPayment(w, payer, r, { payTo: other.address }), r, /recipient_mismatch/);
  });

  it('another asset', async () => {
    const r = w.requirements();
    await refused(await tamperedPayment(w, payer, r, { asset: DEVNET_PYUSD }), r, /mint_mismatch/);
  });

  it('the fee payer in an instruction\'s accounts', async () => {
    const r = w.requirements();
    await refused(await tamperedPayment(w, payer, r, { memoAccounts: [w.feePayer as Address] }), r, /fee_payer_not_isolated/);
  });

  it('a compute price over the cap', async () => {
    const r = w.requirements();
    await refused(await tamperedPayment(w, payer, r, { price: PRICE_CAP + 1 }), r, /compute_price_instruction_too_high/);
  });

  it('an extra instruction (a SOL transfer from the payer)', async () => {
    const r = w.requirements();
    // the System program's Transfer (index 2, u64 lamports)
    const data = Buffer.alloc(12);
    data.writeUInt32LE(2, 0);
    data.writeBigUInt64LE(1000n, 4);
    const extra = (signer: KeyPairSigner): Instruction[] => [{
      programAddress: '11111111111111111111111111111111' as Address, data,
      accounts: [{ address: signer.address, role: AccountRole.WRITABLE_SIGNER, signer }, { address: w.merchant.address as Address, role: AccountRole.WRITABLE }],
    } as Instruction];
    await refused(await tamperedPayment(w, payer, r, { extra }), r, /unknown_fourth_instruction|instruction/);
  });

  it('another network, and a memo other than the required one', async () => {
    const r = w.requirements({ memo: 'invoice-7' });
    const good = await w.pay(payer, r);
    await refused({ ...good, accepted: { ...r, network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp' } }, { ...r, network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp' }, /network_mismatch/);
    const otherMemo = w.requirements({ memo: 'invoice-8' });
    await refused(await w.pay(payer, otherMemo), r, /memo_mismatch/);
  });

  it('the payer\'s signature broken, or the transaction naming another fee payer', async () => {
    const r = w.requirements();
    const good = await w.pay(payer, r);
    const bytes = Buffer.from((good.payload as { transaction: string }).transaction, 'base64');
    // the wire: a compact count, the fee payer's empty slot (64 bytes), then the payer's signature
    bytes.writeUInt8(bytes.readUInt8(1 + 64 + 10) ^ 0xff, 1 + 64 + 10);
    await refused({ ...good, payload: { transaction: bytes.toString('base64') } }, r, /^invalid_exact_svm_payload_signature_invalid$/);
    const other = w.dn.fund('another-fee-payer');
    const forOther = await w.pay(payer, { ...r, extra: { feePayer: other.address } });
    await refused({ ...forOther, accepted: r }, r, /^invalid_exact_svm_fee_payer_mismatch$/);
  });

  it('a payer without the funds: refused by the simulation, and the same payload settles once funded', async () => {
    const poor = w.dn.fund('poor');
    const r = w.requirements({ amount: String(w.dn.tokenBalance(poor.address, DEVNET_USDC) + 1n) });
    const payment = await w.pay(poor, r);
    const v = await w.facilitator.verify(payment, r);
    expect(v).to.deep.include({ isValid: false, invalidReason: 'invalid_exact_svm_transaction_simulation_failed' });
    const sent = w.sends.length;
    const s = await w.facilitator.settle(payment, r, { gateway: w.merchant.address });
    expect(s).to.deep.include({ success: false, transaction: '', errorReason: 'invalid_exact_svm_transaction_simulation_failed' });
    expect(w.sends.length).to.equal(sent);
    // refused before anything was sent: the same payload may be settled later
    fundWallet(w.dn.ln.chain, new PublicKey(poor.address), 2_000_000n);
    const later = await w.facilitator.settle(payment, r, { gateway: w.merchant.address });
    expect(later, JSON.stringify(later)).to.deep.include({ success: true, payer: poor.address });
    expect(w.dn.tokenBalance(poor.address, DEVNET_USDC)).to.equal(2_000_000_000_000n - BigInt(r.amount));
  });
});
