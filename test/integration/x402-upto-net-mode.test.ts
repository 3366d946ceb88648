/**
 * x402://upto at a net-mode gateway (feature flag 0x02): the program draws the settled
 * amount plus the gateway's fee, floor(amount × fee_bps / 10000), from the payer
 * (calculate_fees, total_from_user). The Payment transaction approved the maximum alone,
 * so the maximum could never be settled there (InsufficientDelegatedAmount; admission
 * said so first). The approve now carries the fee on top, and admission counts the
 * program's floor exactly, so the maximum settles and the payer pays maximum + fee.
 */
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { buildUptoSettlement } from '../../commands/x402/upto.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import { tributaryInstruction } from '../../commands/x402/upto-instruction.js';
import { associatedTokenAddress } from '../../src/kernel/domain/spl-token.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { call, payloadOf, registerUpto, sendInstruction } from './x402-facilitator-support.js';

const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
/** odd, so that the fee's floor rounds */
const MAX = 500_001n;
const NET_AMOUNT_FLAG = 0x02;

describe('x402://upto at a net-mode gateway settles its maximum, the fee on top', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let key = '';
  let upto: AcceptedRequirement;
  let merchant: Keypair;
  let fee = 0n;
  const post = (path: string, body: unknown) => call(h.api.url, 'POST', path, body, { 'x-api-key': key });
  const balance = async (owner: string): Promise<bigint> => {
    const r = await h.rpc.call<{ value: { amount: string } }>('getTokenAccountBalance', [associatedTokenAddress(owner, USDC_DEV)]);
    return BigInt(r.value.amount);
  };

  before(async () => {
    h = await startX402('upto-net-mode', { X402_CACHE_MS: '0' });
    const gw = h.ln.fixtures.gateways[0]!;
    merchant = Keypair.fromSecretKey(bs58.decode(gw.authoritySecretKey));
    fee = (MAX * BigInt(gw.feeBps)) / 10_000n;
    // the gateway's authority switches it to net mode: payers pay the fee on top of the amount
    const flags = tributaryInstruction(PROGRAM_ID, 'update_gateway_feature_flags', { gateway: gw.address, authority: gw.authority }, { args: { feature_flags: NET_AMOUNT_FLAG } });
    await sendInstruction(h, merchant, flags);

    ({ key, upto } = await registerUpto(h, gw, MAX));
  });
  after(async () => { await h?.close(); });

  it('approves maximum + fee, admits the maximum, and the chain draws exactly that', async () => {
    expect(fee > 0n).to.equal(true);
    const payer = h.payer();
    const owner = payer.publicKey.toBase58();
    const built = await buildPayment(upto, { wallet: payer, rpc: h.rpc });
    expect(built.approvedAmount).to.equal(MAX + fee);
    const a = await post('/v1/x402/settle', { paymentPayload: payloadOf(built.header), paymentRequirements: upto });
    expect(a.body.success, JSON.stringify(a.body)).to.equal(true);
    const admitted = await post('/v1/x402/usage', { jwt: a.body.jwt, paymentRequirements: upto, amount: MAX.toString() });
    expect(admitted.body, JSON.stringify(admitted.body)).to.deep.include({ admitted: true });

    const before = await balance(owner);
    const { serializedTransaction } = await buildUptoSettlement({ rpc: h.rpc, programId: PROGRAM_ID, policy: a.body.policy, amount: MAX, signer: merchant });
    const settled = await post('/v1/x402/usage', { jwt: a.body.jwt, paymentRequirements: upto, amount: MAX.toString(), transaction: serializedTransaction });
    expect(settled.body.settled, JSON.stringify(settled.body)).to.be.an('object');
    expect(await balance(owner)).to.equal(before - MAX - fee);
  });
});
