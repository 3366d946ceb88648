/**
 * The x402 v2 standard wire beside SPEC.md's, against a localnet started here, read and
 * written by @x402/core itself: its x402HTTPClient reads the 402 of /v1/x402/demo-standard
 * (PAYMENT-REQUIRED, base64 JSON) and encodes the PAYMENT-SIGNATURE carrying a Tributary
 * `deferred` payment, which is settled once and answered with a PAYMENT-RESPONSE it decodes;
 * either request header is taken on either wire; a header that does not decode, or a payment
 * refused, is a 402 whose PAYMENT-REQUIRED names the reason, and nothing is sent.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import type { Keypair } from '@solana/web3.js';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import { PaymentRequiredV2Schema } from '@x402/core/schemas';
import type { PaymentPayload, PaymentRequired, SchemeNetworkClient } from '@x402/core/types';
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { resignStandardPayload } from '../../commands/x402/plugins/client.js';
import { parseKeyValueHeader } from '../../commands/x402/requirements.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { DEMO_PATH, startX402, type X402Harness } from './x402-harness.js';
import { payloadOf } from './x402-facilitator-support.js';
import { specForm } from './x402-standard-support.js';

const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const STANDARD_PATH = '/v1/x402/demo-standard';
const SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{87,88}$/;
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('x402 standard wire: PAYMENT-REQUIRED, PAYMENT-SIGNATURE, PAYMENT-RESPONSE', function () {
  this.timeout(60_000);
  let h: X402Harness;
  const http = new x402HTTPClient(new x402Client());

  const send = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${h.api.url}${path}`, { headers });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };
  const required = async (): Promise<PaymentRequired> => {
    const r = await send(STANDARD_PATH);
    return http.getPaymentRequiredResponse((name) => r.headers.get(name), r.body);
  };
  /** A payer's signed deferred payment for the standard 402's first requirement, as a standard PaymentPayload. */
  const standardPayment = async (payer: Keypair, pr: PaymentRequired, accepted = pr.accepts[0]!): Promise<PaymentPayload> => {
    const built = await buildPayment(specForm(accepted, pr.resource.url), { wallet: payer, rpc: h.rpc });
    return { x402Version: 2, resource: pr.resource, accepted, payload: payloadOf(built.header).payload };
  };
  const expectRefused = async (path: string, headers: Record<string, string>, reason: RegExp) => {
    const r = await send(path, headers);
    expect(r.status, JSON.stringify(r.body)).to.equal(402);
    expect(r.body).to.include({ code: 'payment_required', success: false });
    expect(r.body.error).to.match(reason);
    if (path === STANDARD_PATH) {
      const pr = http.getPaymentRequiredResponse((name) => r.headers.get(name), r.body);
      expect(pr.error).to.equal(r.body.error);
    }
  };

  before(async () => { h = await startX402('standard-wire'); });
  after(async () => { await h.close(); });

  it('answers an unpaid request 402 with a PAYMENT-REQUIRED that @x402/core reads, the requirements in the standard form', async () => {
    const r = await send(STANDARD_PATH);
    expect(r.status).to.equal(402);
    expect(r.headers.get('cache-control')).to.equal('no-store');
    const pr = http.getPaymentRequiredResponse((name) => r.headers.get(name), r.body);
    expect(PaymentRequiredV2Schema.safeParse(pr).success).to.equal(true);
    const spec = await h.accepts();
    const gw = h.ln.fixtures.gateways[0]!;
    expect(pr.x402Version).to.equal(2);
    expect(pr.resource).to.deep.equal({ url: `${h.api.url}${STANDARD_PATH}`, description: 'Tributary demo content', mimeType: 'application/json' });
    expect(pr.error).to.match(/PAYMENT-SIGNATURE header or a bearer JWT/);
    expect(pr.accepts.map((a) => a.scheme)).to.deep.equal(['deferred', 'x402://payg']);
    expect(pr.accepts[0]).to.deep.equal({
      scheme: 'deferred', network: 'solana:localnet', amount: '1000000', asset: USDC_DEV, payTo: gw.authority, maxTimeoutSeconds: 300,
      extra: {
        id: spec[0]!.id, gateway: gw.address, currency: 'USDC', resource: `${h.api.url}${STANDARD_PATH}`, description: 'demo subscription', paymentFrequency: 'Monthly', autoRenew: true,
        maxRenewals: null, gracePeriodSeconds: 259_200, programId: PROGRAM_ID,
      },
    });
    expect(pr.accepts[1]!.extra).to.include({ id: spec[1]!.id, maxChunkAmount: 100_000, maxAmountPerPeriod: 1_000_000 });
    // the body is the same PaymentRequired, in the error envelope
    expect(r.body).to.deep.include({ ...pr, code: 'payment_required', success: false });
  });

  it('settles a standard PAYMENT-SIGNATURE carrying a deferred payment: PAYMENT-RESPONSE decodes with success and the transaction, the JWT serves', async () => {
    const payer = h.payer();
    const pr = await required();
    const payment = await standardPayment(payer, pr);
    const headers = http.encodePaymentSignatureHeader(payment);
    expect(Object.keys(headers)).to.deep.equal(['PAYMENT-SIGNATURE']);
    const landed = h.txCount();
    const r = await send(STANDARD_PATH, headers);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(h.txCount()).to.equal(landed + 1);
    const settled = http.getPaymentSettleResponse((name) => r.headers.get(name));
    expect(settled).to.include({ success: true, network: 'solana:localnet', payer: payer.publicKey.toBase58() });
    expect(settled.transaction).to.match(SIGNATURE);
    expect(settled.extra).to.include({ requirementId: pr.accepts[0]!.extra['id'], scheme: 'deferred', created: true });
    expect(settled.extra!['policy']).to.be.a('string');
    expect(r.body.jwt).to.be.a('string');
    // the same header again (a copy): no JWT; the payer's fresh proof: the same settlement, nothing sent twice
    await expectRefused(STANDARD_PATH, headers, /was used already/);
    const again = await send(STANDARD_PATH, http.encodePaymentSignatureHeader(resignStandardPayload(payer, payment)));
    expect(again.status).to.equal(200);
    expect(http.getPaymentSettleResponse((name) => again.headers.get(name)).transaction).to.equal(settled.transaction);
    expect(h.txCount()).to.equal(landed + 1);
    const served = await send(STANDARD_PATH, { authorization: `Bearer ${r.body.jwt}` });
    expect(served.status, JSON.stringify(served.body)).to.equal(200);
    expect(served.body.grant).to.include({ payer: payer.publicKey.toBase58(), policy: settled.extra!['policy'] });
  });

  it('is paid by @x402/fetch itself, with a scheme client for deferred that builds the Tributary payload from the requirement alone', async () => {
    const payer = h.payer();
    // all a standard client needs: the requirement in the standard form (extra.resource names what the proof signs)
    const deferred: SchemeNetworkClient = {
      scheme: 'deferred',
      async createPaymentPayload(x402Version, requirements) {
        const built = await buildPayment(specForm(requirements), { wallet: payer, rpc: h.rpc });
        return { x402Version, payload: payloadOf(built.header).payload };
      },
    };
    // the localnet's mint is no default asset of the standard's: the payer allows it, capped at one subscription period
    const client = x402Client.fromConfig({
      schemes: [{ network: 'solana:localnet', client: deferred }],
      spendControls: { allowedAssets: [{ network: 'solana:localnet', asset: USDC_DEV, maxAmountPerPayment: '1000000' }] },
    });
    const payingFetch = wrapFetchWithPayment(fetch, client);
    const landed = h.txCount();
    const res = await payingFetch(`${h.api.url}${STANDARD_PATH}`);
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.jwt).to.be.a('string');
    const settled = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
    expect(settled).to.include({ success: true, network: 'solana:localnet', payer: payer.publicKey.toBase58() });
    expect(settled.transaction).to.match(SIGNATURE);
    expect(h.txCount()).to.equal(landed + 1);
  });

  it('takes SPEC.md\'s Payment header on the standard route, answering PAYMENT-RESPONSE', async () => {
    const payer = h.payer();
    const pr = await required();
    const built = await buildPayment(specForm(pr.accepts[0]!), { wallet: payer, rpc: h.rpc });
    const r = await send(STANDARD_PATH, { payment: built.header });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const settled = http.getPaymentSettleResponse((name) => r.headers.get(name));
    expect(settled).to.include({ success: true, transaction: built.signature, payer: payer.publicKey.toBase58() });
  });

  it('takes a PAYMENT-SIGNATURE on SPEC.md\'s route, answering SPEC\'s Payment-Response', async () => {
    const payer = h.payer();
    const spec = (await h.accepts())[0]!;
    const built = await buildPayment(spec, { wallet: payer, rpc: h.rpc });
    const pr = await required();
    const accepted = pr.accepts.find((a) => a.extra['id'] === spec.id)!;
    const payment: PaymentPayload = { x402Version: 2, resource: { url: spec.resource }, accepted, payload: payloadOf(built.header).payload };
    const r = await send(DEMO_PATH, http.encodePaymentSignatureHeader(payment));
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const kv = parseKeyValueHeader(r.headers.get('payment-response')!);
    expect(kv).to.include({ scheme: 'deferred', id: spec.id, transaction: built.signature });
    expect(r.body.jwt).to.be.a('string');
  });

  it('answers a header that does not decode, either one on either route, 402 with the reason; nothing is sent', async () => {
    const landed = h.txCount();
    const pr = await required();
    const payment = await standardPayment(h.payer(), pr);
    const noId = { ...payment, accepted: { ...payment.accepted, extra: { ...payment.accepted.extra, id: undefined } } };
    for (const path of [STANDARD_PATH, DEMO_PATH]) {
      await expectRefused(path, { 'payment-signature': '!!not base64!!' }, /PAYMENT-SIGNATURE header is not Base64/);
      await expectRefused(path, { 'payment-signature': b64('{"x402Version": 2, "accepted"') }, /PAYMENT-SIGNATURE header does not decode to JSON/);
      await expectRefused(path, { 'payment-signature': b64('{"x402Version": 2}') }, /not an x402 v2 PaymentPayload \(accepted: Required\)/);
      await expectRefused(path, { 'payment-signature': b64(JSON.stringify({ ...payment, x402Version: 1 })) }, /not an x402 v2 PaymentPayload/);
      await expectRefused(path, { 'payment-signature': b64(JSON.stringify(noId)) }, /accepted\.extra\.id is required/);
      await expectRefused(path, { 'payment-signature': b64(JSON.stringify({ ...payment, payload: { serializedTransaction: 42 } })) }, /serializedTransaction must be a Base64 string/);
      await expectRefused(path, { payment: '%%%' }, /Payment header is not Base64/);
      await expectRefused(path, { payment: b64('[1,') }, /Payment header does not decode to JSON/);
      await expectRefused(path, { payment: b64('{}'), 'payment-signature': b64('{}') }, /not both/);
      await expectRefused(path, { 'payment-signature': 'A'.repeat(9000) }, /too long/);
    }
    expect(h.txCount()).to.equal(landed);
  });

  it('answers a refused payment 402 with PAYMENT-REQUIRED carrying the reason, and sends nothing', async () => {
    const payer = h.payer();
    const pr = await required();
    const payment = await standardPayment(payer, pr);
    const bytes = Buffer.from(payment.payload['serializedTransaction'] as string, 'base64');
    bytes[5] = bytes[5]! ^ 0xff; // inside the first signature
    const forged = { ...payment, payload: { ...payment.payload, serializedTransaction: bytes.toString('base64') } };
    const other = { ...payment, accepted: { ...payment.accepted, extra: { ...payment.accepted.extra, id: 'f'.repeat(32) } } };
    const landed = h.txCount();
    await expectRefused(STANDARD_PATH, http.encodePaymentSignatureHeader(forged), /signature of .* does not verify/);
    await expectRefused(STANDARD_PATH, http.encodePaymentSignatureHeader(other), /names requirement f{32}, which this resource does not accept/);
    expect(h.txCount()).to.equal(landed);
  });
});
