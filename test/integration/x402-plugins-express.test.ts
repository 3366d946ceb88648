/**
 * A merchant on @x402/express whose facilitator is this service sells a route with
 * Tributary's server schemes: paymentMiddleware + x402ResourceServer with
 * tributaryServerSchemes registered, HTTPFacilitatorClient pointing at /v1/x402 with the
 * gateway's x-api-key from createAuthHeaders. Its 402 offers a subscription, a prepaid
 * credit and an upto authorization in Tributary's standard form (id, gateway, programId, terms); @x402/fetch with our
 * client schemes pays it, the facilitator settles once (the policy created before the
 * handler runs), and the content is served with a PAYMENT-RESPONSE naming the transaction.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HTTPFacilitatorClient, decodePaymentRequiredHeader } from '@x402/core/http';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { tributaryClientSchemes } from '../../commands/x402/plugins/client.js';
import { tributaryServerSchemes } from '../../commands/x402/plugins/server.js';
import { normalizeRequirement } from '../../commands/x402/requirement-forms.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { call, gatewayJwt } from './x402-facilitator-support.js';
import { paidFetch, USDC_DEV } from './x402-plugins-support.js';

const SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{87,88}$/;

describe('x402 plugins: a merchant on @x402/express with this service as facilitator sells a route with Tributary\'s server schemes', function () {
  this.timeout(90_000);
  let h: X402Harness;
  let server: Server;
  let base = '';

  before(async () => {
    h = await startX402('plugins-express');
    const gw = h.ln.fixtures.gateways[0]!;
    const jwt = await gatewayJwt(h, gw.address, gw.authority);
    const key: string = (await call(h.api.url, 'POST', `/v1/gateway/${gw.address}/api-keys`, {}, { authorization: `Bearer ${jwt}` })).body.key;
    const auth = { 'x-api-key': key };
    const facilitator = new HTTPFacilitatorClient({
      url: `${h.api.url}/v1/x402`, createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }),
    });
    const resourceServer = new x402ResourceServer(facilitator);
    for (const s of tributaryServerSchemes({ gateway: gw.address })) resourceServer.register('solana:*', s);
    const app = express();
    app.use(paymentMiddleware({
      'GET /report': {
        description: 'the monthly report',
        accepts: [
          { scheme: 'deferred', network: 'solana:localnet', payTo: gw.authority, price: '$1.00', extra: { paymentFrequency: 'Monthly' } },
          { scheme: 'x402://prepaid', network: 'solana:localnet', payTo: gw.authority, price: { amount: '200000', asset: USDC_DEV }, extra: { pricePerRequest: 2000 } },
          { scheme: 'x402://upto', network: 'solana:localnet', payTo: gw.authority, price: '$0.50', maxTimeoutSeconds: 600 },
        ],
      },
    }, resourceServer));
    app.get('/report', (_req, res) => { res.json({ report: 'the monthly report' }); });
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((r) => { server.closeAllConnections(); server.close(r); });
    await h.close();
  });

  it('offers a subscription and a prepaid credit in Tributary\'s standard form, with the ids the service computes', async () => {
    const res = await fetch(`${base}/report`);
    expect(res.status).to.equal(402);
    const pr = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
    const gw = h.ln.fixtures.gateways[0]!;
    const [sub, credit] = pr.accepts;
    expect(sub).to.deep.include({ scheme: 'deferred', network: 'solana:localnet', amount: '1000000', asset: USDC_DEV, payTo: gw.authority, maxTimeoutSeconds: 300 });
    expect(sub!.extra).to.include({ gateway: gw.address, programId: PROGRAM_ID, paymentFrequency: 'Monthly', currency: 'USDC', paymentFlow: 'upfront' });
    const expected = normalizeRequirement({
      scheme: 'deferred', network: 'solana:localnet', amount: 1_000_000, recipient: gw.authority, gateway: gw.address, tokenMint: USDC_DEV, paymentFrequency: 'Monthly',
    }, PROGRAM_ID);
    expect(sub!.extra['id']).to.equal(expected.id);
    expect(credit).to.deep.include({ scheme: 'x402://prepaid', amount: '200000' });
    expect(credit!.extra).to.include({ pricePerRequest: 2000, gateway: gw.address });
  });

  it('@x402/fetch with our client schemes pays the subscription: one transaction, settled by the facilitator before the handler, the content served', async () => {
    const payer = h.payer();
    const landed = h.txCount();
    const res = await paidFetch(h, payer)(`${base}/report`);
    const body = await res.json() as any;
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body).to.deep.equal({ report: 'the monthly report' });
    expect(h.txCount()).to.equal(landed + 1);
    const settled = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(settled).to.include({ success: true, network: 'solana:localnet', payer: payer.publicKey.toBase58() });
    expect(settled.transaction).to.match(SIGNATURE);
    expect(settled.extra).to.include({ scheme: 'deferred', created: true });
    expect(settled.extra!['jwt']).to.be.a('string');
  });

  for (const scheme of ['x402://prepaid', 'x402://upto']) {
    it(`pays the ${scheme} offer when the payer prefers it (an x402Client policy)`, async () => {
      const payer = h.payer();
      const landed = h.txCount();
      const client = new x402Client().registerPolicy((_v, reqs) => reqs.filter((r) => r.scheme === scheme));
      for (const s of tributaryClientSchemes(payer, { rpcUrl: h.ln.rpcUrl })) client.register('solana:*', s);
      const res = await wrapFetchWithPayment(fetch, client)(`${base}/report`);
      expect(res.status, await res.clone().text()).to.equal(200);
      expect(h.txCount()).to.equal(landed + 1);
      expect(decodePaymentResponseHeader(res.headers.get('payment-response')!).extra).to.include({ scheme, created: true });
    });
  }
});
