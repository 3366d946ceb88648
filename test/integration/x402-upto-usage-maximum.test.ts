/**
 * /v1/x402/usage for x402://upto without `amount` asks whether the bearer may be served
 * before its cost is known: the merchant may then settle up to the maximum. It checked
 * the payer's funding against 0, so a payer who cut its delegation to a fraction of the
 * maximum right after authorizing was admitted, and the merchant's settlement of the
 * maximum was refused on chain (InsufficientDelegatedAmount). It now checks the maximum;
 * a reported amount is still checked as reported.
 */
import { expect } from 'chai';
import { type Keypair, type TransactionInstruction } from '@solana/web3.js';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { approveIx, associatedTokenAddress } from '../../src/kernel/domain/spl-token.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { call, payloadOf, registerUpto, sendInstruction } from './x402-facilitator-support.js';

const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const MAX = 500_000n;

describe('x402://upto: /usage without an amount checks the maximum is funded', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let key = '';
  let upto: AcceptedRequirement;
  const post = (path: string, body: unknown) => call(h.api.url, 'POST', path, body, { 'x-api-key': key });
  const send = (payer: Keypair, ix: TransactionInstruction) => sendInstruction(h, payer, ix);

  before(async () => {
    h = await startX402('upto-usage-max', { X402_CACHE_MS: '0' });
    const gw = h.ln.fixtures.gateways[0]!;
    ({ key, upto } = await registerUpto(h, gw, MAX));
  });
  after(async () => { await h?.close(); });

  it('admits while the maximum is funded; once the delegation covers less, only a reported amount it covers', async () => {
    const payer = h.payer();
    const a = await post('/v1/x402/settle', { paymentPayload: payloadOf((await buildPayment(upto, { wallet: payer, rpc: h.rpc })).header), paymentRequirements: upto });
    expect(a.body.success, JSON.stringify(a.body)).to.equal(true);
    const ask = (amount?: bigint) => post('/v1/x402/usage', { jwt: a.body.jwt, paymentRequirements: upto, ...(amount !== undefined ? { amount: amount.toString() } : {}) });
    expect((await ask()).body).to.deep.include({ admitted: true, policy: a.body.policy });

    // the payer approves the program for a tenth of the maximum
    const owner = payer.publicKey.toBase58();
    const userPayment = createPdaDeriver(PROGRAM_ID).userPayment(owner, USDC_DEV);
    await send(payer, approveIx(associatedTokenAddress(owner, USDC_DEV), userPayment, owner, MAX / 10n));
    const unknownCost = (await ask()).body;
    expect(unknownCost.admitted, JSON.stringify(unknownCost)).to.equal(false);
    expect(unknownCost.reason).to.match(/funds 50000 more, this request costs 500000 .*InsufficientDelegatedAmount \(\d+\)/);
    expect((await ask(MAX / 20n)).body).to.deep.include({ admitted: true });
    expect((await ask(MAX)).body).to.deep.include({ admitted: false });
  });
});
