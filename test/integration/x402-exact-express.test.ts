/**
 * A merchant on @x402/express sells x402 `exact` through this service: paymentMiddleware +
 * x402ResourceServer with @x402/svm's exact server scheme registered for devnet, its
 * HTTPFacilitatorClient pointed at <service>/v1/x402 with a gateway's x-api-key. Its 402
 * carries the service's fee payer (read from /v1/x402/supported) in accepts[0].extra.feePayer;
 * an unmodified @x402/fetch with @x402/svm's exact client pays it and gets the content; the
 * price moves once, the fee payer pays the network fee, the settlement is the gateway's.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PublicKey } from '@solana/web3.js';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, HTTPFacilitatorClient } from '@x402/core/http';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import { ExactSvmScheme as ExactSvmServer } from '@x402/svm/exact/server';
import { fundWallet } from '../../infra/localnet/genesis.js';
import { exactFacilitatorOf } from '../../src/app/x402-exact.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { DEVNET_NETWORK, DEVNET_USDC, startDevnetLocalnet, type DevnetLocalnet, type DevnetWallet } from '../support/devnet.js';

describe('x402 exact: a merchant on @x402/express with this service as facilitator, paid by an unmodified @x402/fetch', function () {
  this.timeout(90_000);
  let env: TestEnv;
  let dn: DevnetLocalnet;
  let api: TestApi;
  let server: Server;
  let base = '';
  let merchant: DevnetWallet;
  let gateway = '';
  let feePayer = '';
  let facilitatorCalls = 0;

  before(async () => {
    env = await createTestEnv('x402-exact-express');
    dn = await startDevnetLocalnet('exact-express');
    api = await startTestApi(env, { SOLANA_RPC_URL: dn.rpcUrl, SOLANA_CLUSTER: 'devnet', SIGNING_KEY_ENCRYPTION_KEY: '12'.repeat(32), X402_CONFIRM_TIMEOUT_MS: '10000' });
    const kind = await exactFacilitatorOf(api.node).supportedKind(DEVNET_NETWORK);
    feePayer = String(kind?.kind.extra?.['feePayer']);
    fundWallet(dn.ln.chain, new PublicKey(feePayer), 0n);

    const gw = dn.ln.fixtures.gateways[0]!;
    gateway = gw.address;
    const jwt = (await api.node.keyRing.sign({ role: 'gateway', signer: gw.authority }, { subject: gw.address, expiresAt: Math.floor(Date.now() / 1000) + 3600 })).token;
    const created = await fetch(`${api.url}/v1/gateway/${gw.address}/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' }, body: '{}' });
    expect(created.status, await created.clone().text()).to.equal(201);
    const auth = { 'x-api-key': ((await created.json()) as any).key as string };

    merchant = dn.fund('merchant');
    const facilitator = new HTTPFacilitatorClient({
      url: `${api.url}/v1/x402`, createAuthHeaders: async () => { facilitatorCalls++; return { verify: auth, settle: auth, supported: auth }; },
    });
    const resourceServer = new x402ResourceServer(facilitator).register(DEVNET_NETWORK, new ExactSvmServer());
    const app = express();
    app.use(paymentMiddleware({
      'GET /weather': { description: 'today\'s weather', accepts: [{ scheme: 'exact', network: DEVNET_NETWORK, payTo: merchant.address, price: '$0.02' }] },
    }, resourceServer));
    app.get('/weather', (_req, res) => { res.json({ weather: 'sunny' }); });
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    if (server) await new Promise((r) => { server.closeAllConnections(); server.close(r); });
    await api?.close(); await dn?.close(); await env?.close();
  });

  it('the merchant\'s 402 offers exact in devnet USDC with this service\'s fee payer', async () => {
    const res = await fetch(`${base}/weather`);
    expect(res.status).to.equal(402);
    const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
    expect(required.accepts[0]).to.deep.include({ scheme: 'exact', network: DEVNET_NETWORK, amount: '20000', asset: DEVNET_USDC, payTo: merchant.address });
    expect(required.accepts[0]!.extra['feePayer']).to.equal(feePayer);
    expect(facilitatorCalls, 'the merchant read /supported with its key').to.be.greaterThan(0);
  });

  it('an unmodified @x402/fetch with @x402/svm\'s exact client pays it; the price moves once, the fee payer pays the fee', async () => {
    const payer = dn.fund('payer');
    const start = { payer: dn.tokenBalance(payer.address, DEVNET_USDC), merchant: dn.tokenBalance(merchant.address, DEVNET_USDC), fee: dn.lamports(feePayer), sol: dn.lamports(payer.address) };
    const client = new x402Client().register(DEVNET_NETWORK, new ExactSvmClient(await payer.signer(), { rpcUrl: dn.rpcUrl }));
    const res = await wrapFetchWithPayment(fetch, client)(`${base}/weather`);
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body).to.deep.equal({ weather: 'sunny' });
    const settled = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(settled).to.deep.include({ success: true, network: DEVNET_NETWORK, payer: payer.address });

    expect(dn.tokenBalance(payer.address, DEVNET_USDC)).to.equal(start.payer - 20_000n);
    expect(dn.tokenBalance(merchant.address, DEVNET_USDC)).to.equal(start.merchant + 20_000n);
    expect(dn.lamports(payer.address)).to.equal(start.sol);
    // two signatures at 5,000 lamports, and the exact client's compute budget rounded up to 1 lamport
    expect(dn.lamports(feePayer)).to.equal(start.fee - 10_001);
    const rows = await env.db.selectFrom('x402_exact_settlements').select(['gateway', 'state', 'signature']).execute();
    expect(rows).to.deep.equal([{ gateway, state: 'settled', signature: settled.transaction }]);
  });
});
