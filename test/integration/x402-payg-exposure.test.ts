/**
 * What a pay-as-you-go merchant can lose to a payer who stops paying. A payer who chose an
 * expiry shortly after its payment got its usage served and never charged (the program
 * refuses execute_payment after expiry_date); a payer who revokes the approve or deletes the
 * policy after use leaves its usage unbillable. So the terms refuse an expiry sooner than
 * the requirement's minExpirySeconds, and no payer is ever admitted more than the
 * requirement's maxUnsettledAmount beyond what has been charged on chain: what a payer who
 * revokes can get served unpaid is that bound.
 *
 * Real HTTP (the facilitator's /verify, /settle and /usage), a localnet chain.
 */
import { expect } from 'chai';
import BN from 'bn.js';
import { Transaction, TransactionMessage, VersionedTransaction, type Keypair, type TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { signPaymentProof } from '../../commands/x402/proof.js';
import { createPaymentPolicyIx, decodePaymentIx } from '../../commands/x402/program.js';
import { schemeOf } from '../../commands/x402/schemes/index.js';
import { type AcceptedRequirement } from '../../commands/x402/requirements.js';
import { normalizeRequirement } from '../../commands/x402/requirement-forms.js';
import { associatedTokenAddress, revokeIx } from '../../src/kernel/domain/spl-token.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { call, gatewayJwt, payloadOf } from './x402-facilitator-support.js';

const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const PERIOD = 600;

describe('x402 pay-as-you-go: what a payer who stops paying can cost the merchant is bounded', function () {
  this.timeout(90_000);
  let h: X402Harness;
  let key = '';
  let payg: AcceptedRequirement;
  const post = (path: string, body: unknown) => call(h.api.url, 'POST', path, body, { 'x-api-key': key });
  const exchange = (payload: unknown) => ({ x402Version: 2, paymentPayload: payload, paymentRequirements: payg });

  before(async () => {
    h = await startX402('payg-exposure');
    const gw = h.ln.fixtures.gateways[0]!;
    const jwt = await gatewayJwt(h, gw.address, gw.authority);
    key = (await call(h.api.url, 'POST', `/v1/gateway/${gw.address}/api-keys`, {}, { authorization: `Bearer ${jwt}` })).body.key;
    const reg = await call(h.api.url, 'PUT', '/v1/x402/resources', {
      resource: 'https://merchant.example/metered', description: 'metered, 1000 per request',
      accepts: [{
        scheme: 'x402://payg', network: 'solana:localnet', recipient: gw.authority, gateway: gw.address, tokenMint: USDC_DEV,
        amount: '1000', maxChunkAmount: '1000', maxAmountPerPeriod: '100000', periodLengthSeconds: String(PERIOD), maxUnsettledAmount: '3000',
      }],
    }, { 'x-api-key': key });
    expect(reg.status, JSON.stringify(reg.body)).to.equal(200);
    [payg] = reg.body.accepts;
  });
  after(async () => { await h.close(); });

  /** The payer's payment for the requirement, its policy expiring at `expiry`, signed again. */
  const expiring = async (payer: Keypair, expiry: number) => {
    const built = await buildPayment(payg, { wallet: payer, rpc: h.rpc });
    const msg = TransactionMessage.decompile(built.transaction.message);
    const r = normalizeRequirement({ ...payg, maxRenewals: null }, PROGRAM_ID);
    const type = schemeOf(r).policyType(r, payg) as { PayAsYouGo: Record<string, unknown> };
    type.PayAsYouGo['expiry_date'] = new BN(expiry);
    const edit = (ix: TransactionInstruction): TransactionInstruction => {
      if (ix.programId.toBase58() !== PROGRAM_ID || decodePaymentIx(ix.data)?.name !== 'create_payment_policy') return ix;
      // only the data changes: the accounts are the built transaction's own
      const any = PROGRAM_ID;
      const accounts = { user: any, user_payment: any, recipient: any, token_mint: any, gateway: any, config: any, payment_policy: any, fee_payer: any };
      const { data } = createPaymentPolicyIx(PROGRAM_ID, accounts, type, undefined);
      return { ...ix, data };
    };
    const tx = new VersionedTransaction(new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: msg.recentBlockhash, instructions: msg.instructions.map(edit) }).compileToLegacyMessage());
    tx.sign([payer]);
    const signature = bs58.encode(tx.signatures[0]!);
    const proof = signPaymentProof(payer.secretKey, { requirementId: payg.id, resource: payg.resource, transactionSignature: signature }, Math.floor(Date.now() / 1000));
    return { x402Version: 2, scheme: payg.scheme, network: payg.network, id: payg.id, payload: { serializedTransaction: Buffer.from(tx.serialize()).toString('base64'), proof } };
  };

  it('states the bound and the shortest expiry in the 402 requirement', () => {
    expect(payg).to.include({ maxUnsettledAmount: 3000, minExpirySeconds: PERIOD + 3600 });
  });

  it('refuses a policy that expires sooner than a period and the time its usage takes to be charged, and sends nothing', async () => {
    const now = Math.floor(Date.now() / 1000);
    const landed = h.txCount();
    const short = await expiring(h.payer(), now + 20);
    const v = await post('/v1/x402/verify', exchange(short));
    expect(v.body.isValid, JSON.stringify(v.body)).to.equal(false);
    expect(v.body.invalidReason).to.match(new RegExp(`expires at ${now + 20}, sooner than the requirement's minExpirySeconds \\(${PERIOD + 3600}\\)`));
    const s = await post('/v1/x402/settle', exchange(short));
    expect(s.body.success).to.equal(false);
    expect(s.body.errorReason).to.match(/minExpirySeconds/);
    expect(h.txCount(), 'nothing sent').to.equal(landed);
    const long = await post('/v1/x402/verify', exchange(await expiring(h.payer(), now + PERIOD + 3600 + 120)));
    expect(long.body.isValid, JSON.stringify(long.body)).to.equal(true);
  });

  it('serves a payer no more than maxUnsettledAmount beyond what is charged: revoking the approve after use costs the merchant at most that', async () => {
    const payer = h.payer();
    const settled = await post('/v1/x402/settle', exchange(payloadOf((await buildPayment(payg, { wallet: payer, rpc: h.rpc })).header)));
    expect(settled.body.success, JSON.stringify(settled.body)).to.equal(true);
    const answers = [];
    for (let i = 0; i < 10; i += 1) answers.push((await post('/v1/x402/usage', { jwt: settled.body.jwt, paymentRequirements: payg })).body as { admitted: boolean; reason?: string });
    expect(answers.filter((a) => a.admitted), 'served beyond what is charged').to.have.length(3);
    expect(answers[3]!.reason).to.match(/3000 is used and not charged on chain yet; this request costs 1000 and the requirement's maxUnsettledAmount is 3000/);

    // the payer revokes the delegation: nothing it used can be charged now
    const { value } = await h.rpc.call<{ value: { blockhash: string } }>('getLatestBlockhash', [{}]);
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: value.blockhash })
      .add(revokeIx(associatedTokenAddress(payer.publicKey.toBase58(), USDC_DEV), payer.publicKey.toBase58()));
    tx.sign(payer);
    await h.rpc.call('sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64' }]);
    const rows = await h.env.db.selectFrom('payg_usage').select('chunk').where('policy', '=', settled.body.policy).execute();
    const served = rows.reduce((a, r) => a + Number(r.chunk), 0);
    const charged = 0; // no charge can execute without the delegation
    expect(served - charged, 'served unpaid').to.be.at.most(3000);
  });
});
