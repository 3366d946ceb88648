/**
 * x402://upto is served first and pulled by the merchant afterwards through the delegation
 * the payer's Payment transaction approved. A payer who revokes it, or empties its token
 * account, right after authorizing was still admitted (the bearer path and /usage said
 * yes), so the merchant served a request whose settlement the chain then refused
 * (NoDelegateSet). Admission now asks the chain what the program will ask, for the amount
 * reported (or the maximum), and answers in the program's words.
 */
import { expect } from 'chai';
import { Keypair, type TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import { associatedTokenAddress, revokeIx } from '../../src/kernel/domain/spl-token.js';
import { fundWallet } from '../../infra/localnet/genesis.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { call, payloadOf, registerUpto, sendInstruction } from './x402-facilitator-support.js';

const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';

describe('x402://upto: an authorization the payer stopped funding is not admitted', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let key = '';
  let upto: AcceptedRequirement;
  const post = (path: string, body: unknown) => call(h.api.url, 'POST', path, body, { 'x-api-key': key });
  const send = (payer: Keypair, ix: TransactionInstruction) => sendInstruction(h, payer, ix);

  before(async () => {
    h = await startX402('upto-unfunded', { X402_CACHE_MS: '200' });
    const gw = h.ln.fixtures.gateways[0]!;
    const merchant = Keypair.fromSecretKey(bs58.decode(gw.authoritySecretKey));
    ({ key, upto } = await registerUpto(h, gw, 500000n, { recipient: merchant.publicKey.toBase58() }));
  });
  after(async () => { await h?.close(); });

  it('sends an authorization only while the payer\'s balance covers it on top of the ones it has open (holds)', async () => {
    const payer = Keypair.generate();
    fundWallet(h.ln.chain, payer.publicKey, 0n);
    fundWallet(h.ln.chain, payer.publicKey, 1n); // 1 USDC: 1,000,000, for two holds of 500,000
    const authorize = async () => post('/v1/x402/settle', { paymentPayload: payloadOf((await buildPayment(upto, { wallet: payer, rpc: h.rpc })).header), paymentRequirements: upto });
    const first = await authorize();
    expect(first.body.success, JSON.stringify(first.body)).to.equal(true);
    const second = await authorize();
    expect(second.body.success, JSON.stringify(second.body)).to.equal(true);
    const landed = h.txCount();
    const third = await authorize();
    expect(third.body.success, 'a third hold of 500,000 on a balance of 1,000,000 holding two').to.equal(false);
    expect(third.body.errorReason ?? third.body.error ?? JSON.stringify(third.body)).to.match(/does not cover this authorization of 500000 on top of the 1000000 its open UpTo authorizations hold/);
    expect(h.txCount(), 'nothing sent').to.equal(landed);
  });

  it('admits the amount while the delegation stands, refuses it (NoDelegateSet) once revoked', async () => {
    const payer = h.payer();
    const a = await post('/v1/x402/settle', { paymentPayload: payloadOf((await buildPayment(upto, { wallet: payer, rpc: h.rpc })).header), paymentRequirements: upto });
    expect(a.body.success, JSON.stringify(a.body)).to.equal(true);
    const ask = () => post('/v1/x402/usage', { jwt: a.body.jwt, paymentRequirements: upto, amount: '120000' });
    expect((await ask()).body).to.deep.include({ admitted: true });

    await send(payer, revokeIx(associatedTokenAddress(payer.publicKey.toBase58(), USDC_DEV), payer.publicKey.toBase58()));
    await new Promise((r) => setTimeout(r, 400)); // past X402_CACHE_MS
    const refused = await ask();
    expect(refused.body.admitted, JSON.stringify(refused.body)).to.equal(false);
    expect(refused.body.reason).to.match(/NoDelegateSet \(6008\)/);
  });
});
