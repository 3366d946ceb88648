/**
 * The facilitator API in the x402 v2 standard shapes, called by @x402/core's own
 * HTTPFacilitatorClient (url <service>/v1/x402, our x-api-key through createAuthHeaders):
 * /supported, /verify and /settle answer what it parses with its schemas, for deferred,
 * x402://payg and x402://upto requirements; a refusal is isValid/success false with the
 * reason and nothing sent; settle always answers a transaction (for a policy
 * the payer held already, its last payment's from the read model); invalid terms are a 400 and
 * a missing credential a 401, which it reports as failures.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the client's errors are inspected field by field */
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { HTTPFacilitatorClient } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { freshSignedAt, signPaymentProof } from '../../commands/x402/proof.js';
import { resignStandardPayload } from '../../commands/x402/plugins/client.js';
import { standardRequirement } from '../../commands/x402/standard/requirements.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { payloadOf, registerUpto } from './x402-facilitator-support.js';
import { specForm } from './x402-standard-support.js';
import { project } from './readmodels-scenario.js';
import { paymentPoliciesProjection } from '../../projections/policies/projection.js';

const SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{87,88}$/;

describe('x402 facilitator in the standard shapes: HTTPFacilitatorClient verifies, settles, lists', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let key = '';
  let facilitator: HTTPFacilitatorClient;
  let pr: PaymentRequired;

  const clientWith = (headers: Record<string, string>) => new HTTPFacilitatorClient({
    url: `${h.api.url}/v1/x402`, createAuthHeaders: async () => ({ verify: headers, settle: headers, supported: headers }),
  });
  const paymentFor = async (payer: Keypair, accepted: PaymentRequirements, resource = pr.resource): Promise<PaymentPayload> => {
    const built = await buildPayment(specForm(accepted, resource.url), { wallet: payer, rpc: h.rpc });
    return { x402Version: 2, resource, accepted, payload: payloadOf(built.header).payload };
  };

  before(async () => {
    h = await startX402('facilitator-standard');
    const gw = h.ln.fixtures.gateways[0]!;
    const upto = await registerUpto(h, gw, 500_000n);
    key = upto.key;
    facilitator = clientWith({ 'x-api-key': key });
    const res = await fetch(`${h.api.url}/v1/x402/demo-standard`);
    pr = JSON.parse(Buffer.from(res.headers.get('payment-required')!, 'base64').toString('utf8')) as PaymentRequired;
    // the merchant's x402://upto requirement, registered above, in the standard form
    pr = { ...pr, accepts: [...pr.accepts, standardRequirement(upto.upto)] };
  });
  after(async () => { await h.close(); });

  it('getSupported: the schemes, the network and the extensions, as the client parses them', async () => {
    const s = await facilitator.getSupported();
    expect(s.kinds.map((k) => k.scheme)).to.include.members(['deferred', 'x402://payg', 'x402://upto', 'x402://prepaid']);
    for (const k of s.kinds) expect(k).to.deep.include({ x402Version: 2, network: 'solana:localnet' });
    expect(s.extensions).to.deep.equal(['payment-identifier']);
    expect(s.signers).to.deep.equal({});
  });

  it('verify: a valid payment of every scheme is valid, with the payer, and nothing is sent', async () => {
    const landed = h.txCount();
    const upto = pr.accepts[2]!;
    for (const [accepted, resource] of [[pr.accepts[0]!, pr.resource], [pr.accepts[1]!, pr.resource], [upto, { url: 'https://merchant.example/completions' }]] as const) {
      const payer = h.payer();
      const v = await facilitator.verify(await paymentFor(payer, accepted, resource), accepted);
      expect(v, `${accepted.scheme}: ${JSON.stringify(v)}`).to.deep.include({ isValid: true, payer: payer.publicKey.toBase58() });
    }
    expect(h.txCount()).to.equal(landed);
  });

  it('verify and settle: a forged or mismatched payment is refused with the reason at 200; settle answers transaction "" and sends nothing', async () => {
    const accepted = pr.accepts[0]!;
    const good = await paymentFor(h.payer(), accepted);
    const bytes = Buffer.from(good.payload['serializedTransaction'] as string, 'base64');
    bytes[5] = bytes[5]! ^ 0xff;
    const cases: [PaymentPayload, PaymentRequirements, RegExp][] = [
      [{ ...good, payload: { ...good.payload, serializedTransaction: bytes.toString('base64') } }, accepted, /signature of .* does not verify/],
      [good, { ...accepted, amount: '2000000' }, /names requirement .* which this resource does not accept/],
      [{ ...good, accepted: { ...accepted, extra: { ...accepted.extra, id: undefined } } }, accepted, /accepted\.extra\.id is required/],
      [{ ...good, payload: {} }, accepted, /serializedTransaction must be a Base64 string/],
    ];
    const landed = h.txCount();
    for (const [payment, requirements, reason] of cases) {
      const v = await facilitator.verify(payment, requirements);
      expect(v.isValid).to.equal(false);
      expect(v.invalidReason).to.match(reason);
      const s = await facilitator.settle(payment, requirements);
      expect(s).to.deep.include({ success: false, transaction: '', network: 'solana:localnet' });
      expect(s.errorReason).to.match(reason);
    }
    expect(h.txCount()).to.equal(landed);
  });

  it('settle: sends once, answers the transaction, the payer and Tributary\'s facts; the same payment again, with a fresh proof, gets the same answer', async () => {
    const payer = h.payer();
    const accepted = pr.accepts[0]!;
    const payment = await paymentFor(payer, accepted);
    const landed = h.txCount();
    const s = await facilitator.settle(payment, accepted);
    expect(s, JSON.stringify(s)).to.deep.include({ success: true, network: 'solana:localnet', payer: payer.publicKey.toBase58() });
    expect(s.transaction).to.match(SIGNATURE);
    expect(s.extra).to.include({ requirementId: accepted.extra['id'], scheme: 'deferred', created: true });
    expect(s.extra!['jwt']).to.be.a('string');
    expect(h.txCount()).to.equal(landed + 1);
    const copy = await facilitator.settle(payment, accepted);
    expect(copy, 'a copy of the payload').to.deep.include({ success: false });
    expect(copy.errorReason).to.match(/was used already/);
    const again = await facilitator.settle(resignStandardPayload(payer, payment), accepted);
    expect(again.transaction).to.equal(s.transaction);
    expect(h.txCount()).to.equal(landed + 1);

    // the payer holds the policy now: a payment without a transaction is served by it, and still answers a transaction (a string)
    const proofOf = () => signPaymentProof(payer.secretKey, { requirementId: accepted.extra['id'] as string, resource: pr.resource.url, transactionSignature: undefined },
      freshSignedAt(payer.publicKey.toBase58(), Math.floor(Date.now() / 1000)));
    const held = await facilitator.settle({ ...payment, payload: { payer: payer.publicKey.toBase58(), proof: proofOf() } }, accepted);
    expect(held, JSON.stringify(held)).to.deep.include({ success: true, payer: payer.publicKey.toBase58() });
    expect(held.extra).to.include({ policy: s.extra!['policy'], created: false });
    // no projector has run yet: the read model has not seen the policy, so "" (documented)
    expect(held.transaction).to.equal('');
    // once the policies read model has the chain's events, the policy's last payment: the first period, paid in the settled transaction
    await project(h.env, [paymentPoliciesProjection], h.ln.ledger());
    const known = await facilitator.settle({ ...payment, payload: { payer: payer.publicKey.toBase58(), proof: proofOf() } }, accepted);
    expect(known, JSON.stringify(known)).to.deep.include({ success: true, transaction: s.transaction });
    expect(known.extra).to.include({ policy: s.extra!['policy'], created: false });
    expect(h.txCount()).to.equal(landed + 1);
  });

  it('reports invalid terms (400), another gateway\'s requirements (403) and a missing or wrong credential (401) as failures', async () => {
    const accepted = pr.accepts[0]!;
    const payment = await paymentFor(h.payer(), accepted);
    const bad: [PaymentPayload, PaymentRequirements][] = [
      [payment, { ...accepted, amount: '0' }],
      [payment, { ...accepted, extra: { ...accepted.extra, paymentFrequency: 'Fortnightly' } }],
      [payment, { ...accepted, extra: { ...accepted.extra, gateway: undefined } }],
      [{ ...payment, resource: undefined }, { ...accepted, extra: { ...accepted.extra, resource: undefined } }],
    ];
    for (const [p, r] of bad) {
      let failed: any;
      await facilitator.verify(p, r).catch((err: unknown) => { failed = err; });
      expect(failed?.name, JSON.stringify(r)).to.equal('VerifyError');
      expect(failed.statusCode).to.equal(400);
      expect(failed.invalidReason).to.equal('invalid_input');
      expect(failed.message).to.match(/^invalid_input: /);
    }
    let foreign: any;
    const elsewhere = { ...accepted, extra: { ...accepted.extra, gateway: Keypair.generate().publicKey.toBase58() } };
    await facilitator.settle(payment, elsewhere).catch((err: unknown) => { foreign = err; });
    expect(foreign?.statusCode).to.equal(403);
    expect(foreign.errorReason).to.equal('forbidden');
    let unauthorized: any;
    await clientWith({ 'x-api-key': `${key.slice(0, -2)}xx` }).settle(payment, accepted).catch((err: unknown) => { unauthorized = err; });
    expect(unauthorized?.name).to.equal('SettleError');
    expect(unauthorized.statusCode).to.equal(401);
    expect(unauthorized.message).to.match(/^unauthorized: invalid or revoked x-api-key/);
    let anonymous: any;
    await new HTTPFacilitatorClient({ url: `${h.api.url}/v1/x402` }).verify(payment, accepted).catch((err: unknown) => { anonymous = err; });
    expect(anonymous?.statusCode).to.equal(401);
  });
});
