/**
 * An exact settlement answers success only for the terms it was settled for. A payer pays
 * 1 unit to another merchant (X), which settles it through this service's facilitator API
 * (POST /v1/x402/settle, its own API key); the same payment sent to the service's own exact
 * route (/v1/x402/demo-standard), `accepted` copied from that route's 402, is a 402 and the
 * route's recipient gets nothing: the row was settled for X's terms, not the route's. It
 * was served, the stored answer taken for the route's payment. The claim of a payment's one
 * request holds only for the terms and gateway it was settled for. The merchant's own retry
 * still gets its stored answer; another gateway asking with the same terms does not.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { PublicKey } from '@solana/web3.js';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import { fundWallet } from '../../infra/localnet/genesis.js';
import { exactFacilitatorOf } from '../../src/app/x402-exact.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { DEVNET_NETWORK, DEVNET_USDC, startDevnetLocalnet, type DevnetLocalnet, type DevnetWallet } from '../support/devnet.js';

describe('x402 exact: a settled payment answers success only for the terms and gateway it was settled for', function () {
  this.timeout(90_000);
  let env: TestEnv;
  let dn: DevnetLocalnet;
  let api: TestApi;
  let url = '';
  let recipient = '';
  /** the route's exact requirement, as its 402 offers it */
  let offered: PaymentRequirements;
  /** API keys: the other merchant's gateway (it settles X's payments) and a third one */
  let merchantKey = '';
  let thirdKey = '';
  let merchantGateway = '';
  let demoGateway = '';
  let merchantX: DevnetWallet;

  const apiKey = async (gw: { address: string; authority: string }): Promise<string> => {
    const jwt = (await api.node.keyRing.sign({ role: 'gateway', signer: gw.authority }, { subject: gw.address, expiresAt: Math.floor(Date.now() / 1000) + 3600 })).token;
    const created = await fetch(`${api.url}/v1/gateway/${gw.address}/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' }, body: '{}' });
    expect(created.status, await created.clone().text()).to.equal(201);
    return ((await created.json()) as any).key;
  };
  const settle = async (key: string, payment: PaymentPayload, r: PaymentRequirements) => {
    const res = await fetch(`${api.url}/v1/x402/settle`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ x402Version: 2, paymentPayload: payment, paymentRequirements: r }),
    });
    expect(res.status).to.equal(200);
    return (await res.json()) as any;
  };
  /** X's terms: 1 unit to merchant X */
  const termsOfX = (): PaymentRequirements => ({
    scheme: 'exact', network: DEVNET_NETWORK, amount: '1', asset: DEVNET_USDC, payTo: merchantX.address, maxTimeoutSeconds: 60, extra: { feePayer: offered.extra['feePayer'] },
  });
  const pay = async (payer: DevnetWallet, r: PaymentRequirements): Promise<PaymentPayload> => {
    const { payload } = await new ExactSvmClient(await payer.signer(), { rpcUrl: dn.rpcUrl }).createPaymentPayload(2, r);
    return { x402Version: 2, resource: { url: 'https://merchant-x.example/report', description: 'a report', mimeType: 'application/json' }, accepted: r, payload };
  };
  /** the payment's transaction, its `accepted` replaced by the route's own requirement */
  const replayAtRoute = (payment: PaymentPayload) => fetch(url, {
    headers: { 'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify({ x402Version: 2, resource: { url }, accepted: offered, payload: payment.payload })).toString('base64') },
  });
  const wipeRedis = async () => {
    const keys = await env.redis.keys(`${env.prefix}*`);
    if (keys.length > 0) await env.redis.del(...keys);
  };

  before(async () => {
    env = await createTestEnv('x402-exact-terms');
    dn = await startDevnetLocalnet('exact-terms');
    const [demo, merchant, third] = dn.ln.fixtures.gateways;
    recipient = demo!.authority;
    merchantGateway = merchant!.address;
    demoGateway = demo!.address;
    api = await startTestApi(env, {
      SOLANA_RPC_URL: dn.rpcUrl, SOLANA_CLUSTER: 'devnet', SIGNING_KEY_ENCRYPTION_KEY: 'cd'.repeat(32), X402_CONFIRM_TIMEOUT_MS: '10000',
      X402_DEMO_RECIPIENT: recipient, X402_DEMO_GATEWAY: demo!.address,
    });
    url = `${api.url}/v1/x402/demo-standard`;
    merchantKey = await apiKey(merchant!);
    thirdKey = await apiKey(third!);
    merchantX = dn.fund('merchant-x');
    const required = decodePaymentRequiredHeader((await fetch(url)).headers.get('payment-required')!);
    offered = required.accepts[0]!;
    expect(offered).to.deep.include({ scheme: 'exact', payTo: recipient, asset: DEVNET_USDC });
    expect(offered.amount).to.not.equal('1');
    fundWallet(dn.ln.chain, new PublicKey(String(offered.extra['feePayer'])), 0n);
  });
  after(async () => { await api?.close(); await dn?.close(); await env?.close(); });

  it('a payment settled for another merchant\'s terms, replayed at the service\'s exact route: 402, not the content', async () => {
    const payer = dn.fund('payer-replay');
    const payment = await pay(payer, termsOfX());
    const start = { payer: dn.tokenBalance(payer.address, DEVNET_USDC), x: dn.tokenBalance(merchantX.address, DEVNET_USDC), route: dn.tokenBalance(recipient, DEVNET_USDC) };
    const settled = await settle(merchantKey, payment, termsOfX());
    expect(settled, JSON.stringify(settled)).to.deep.include({ success: true, payer: payer.address });

    const res = await replayAtRoute(payment);
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(402);
    expect(body.content).to.equal(undefined);
    expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).error).to.include('duplicate_settlement');

    // Redis lost the stored answer: the ledger's row refuses it the same way
    await wipeRedis();
    const again = await replayAtRoute(payment);
    expect(again.status).to.equal(402);
    expect(decodePaymentRequiredHeader(again.headers.get('payment-required')!).error).to.include('duplicate_settlement');

    expect(dn.tokenBalance(payer.address, DEVNET_USDC), 'the payer paid X\'s 1 unit, once').to.equal(start.payer - 1n);
    expect(dn.tokenBalance(merchantX.address, DEVNET_USDC)).to.equal(start.x + 1n);
    expect(dn.tokenBalance(recipient, DEVNET_USDC), 'the route\'s recipient got nothing').to.equal(start.route);
    const row = await env.db.selectFrom('x402_exact_settlements').select(['gateway', 'pay_to', 'amount', 'served_at']).where('signature', '=', settled.transaction).executeTakeFirstOrThrow();
    expect(row).to.deep.equal({ gateway: merchantGateway, pay_to: merchantX.address, amount: '1', served_at: null });

    // the claim of its one request: the route's terms claim nothing; the terms and gateway it was settled for do, once
    const facilitator = exactFacilitatorOf(api.node);
    const routeTerms = { network: offered.network, gateway: demoGateway, payTo: offered.payTo, asset: offered.asset, amount: offered.amount };
    expect(await facilitator.serveOnce(settled.transaction, routeTerms)).to.equal(false);
    expect(await facilitator.serveOnce(settled.transaction, { ...routeTerms, payTo: merchantX.address, amount: '1' }), 'another gateway').to.equal(false);
    const itsOwn = { ...routeTerms, gateway: merchantGateway, payTo: merchantX.address, amount: '1' };
    expect(await facilitator.serveOnce(settled.transaction, itsOwn)).to.equal(true);
    expect(await facilitator.serveOnce(settled.transaction, itsOwn)).to.equal(false);
  });

  it('the merchant\'s own retry gets its stored answer, after Redis lost it too; another gateway asking with the same terms is refused', async () => {
    const payer = dn.fund('payer-retry');
    const payment = await pay(payer, termsOfX());
    const start = dn.tokenBalance(payer.address, DEVNET_USDC);
    const first = await settle(merchantKey, payment, termsOfX());
    expect(first, JSON.stringify(first)).to.deep.include({ success: true });

    expect(await settle(merchantKey, payment, termsOfX())).to.deep.equal(first);
    const other = await settle(thirdKey, payment, termsOfX());
    expect(other).to.deep.include({ success: false, errorReason: 'duplicate_settlement' });
    // another amount, the same gateway: not the terms it was settled for
    const more = await settle(merchantKey, payment, { ...termsOfX(), amount: '2' });
    expect(more).to.deep.include({ success: false, errorReason: 'duplicate_settlement' });

    await wipeRedis();
    expect(await settle(merchantKey, payment, termsOfX())).to.deep.equal(first);
    expect(await settle(thirdKey, payment, termsOfX())).to.deep.include({ success: false, errorReason: 'duplicate_settlement' });
    expect(dn.tokenBalance(payer.address, DEVNET_USDC), 'charged once').to.equal(start - 1n);
  });

  it('concurrent copies from two gateways: the settling gateway\'s get success, the other\'s are refused, one transfer', async () => {
    const payer = dn.fund('payer-concurrent');
    const payment = await pay(payer, termsOfX());
    const start = dn.tokenBalance(payer.address, DEVNET_USDC);
    const keys = [merchantKey, thirdKey, merchantKey, thirdKey];
    const answers = await Promise.all(keys.map((k) => settle(k, payment, termsOfX())));
    const won = answers.find((a) => a.success);
    expect(won, JSON.stringify(answers)).to.not.equal(undefined);
    const row = await env.db.selectFrom('x402_exact_settlements').select(['gateway']).where('signature', '=', won.transaction).executeTakeFirstOrThrow();
    const winnerKey = row.gateway === merchantGateway ? merchantKey : thirdKey;
    answers.forEach((a, i) => {
      if (keys[i] === winnerKey) expect(a, JSON.stringify(a)).to.deep.equal(won);
      else expect(a, JSON.stringify(a)).to.deep.include({ success: false, errorReason: 'duplicate_settlement' });
    });
    expect(dn.tokenBalance(payer.address, DEVNET_USDC)).to.equal(start - 1n);
  });
});
