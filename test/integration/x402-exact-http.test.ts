/**
 * x402 `exact` through the facilitator API, called by @x402/core's own HTTPFacilitatorClient
 * (url <service>/v1/x402, a gateway's x-api-key): /supported lists the exact kind with the
 * fee payer in extra.feePayer and in signers; /verify and /settle take the exact body and
 * settle the payment of @x402/svm's client, attributed to the calling gateway; a refusal is
 * a 200 with the reason, malformed terms a 400 in the error envelope, no credential a 401.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { PublicKey } from '@solana/web3.js';
import { HTTPFacilitatorClient } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import { fundWallet } from '../../infra/localnet/genesis.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { DEVNET_NETWORK, DEVNET_USDC, startDevnetLocalnet, type DevnetLocalnet, type DevnetWallet } from '../support/devnet.js';

describe('x402 exact through the facilitator API and HTTPFacilitatorClient', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let dn: DevnetLocalnet;
  let api: TestApi;
  let key = '';
  let gateway = '';
  let client: HTTPFacilitatorClient;
  let feePayer = '';
  let merchant: DevnetWallet;

  const post = async (path: string, body: unknown, headers: Record<string, string> = { 'x-api-key': key }) => {
    const res = await fetch(`${api.url}/v1/x402${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };
  const requirements = (): PaymentRequirements => ({
    scheme: 'exact', network: DEVNET_NETWORK, amount: '777000', asset: DEVNET_USDC, payTo: merchant.address, maxTimeoutSeconds: 60, extra: { feePayer },
  });
  const pay = async (payer: DevnetWallet, r: PaymentRequirements): Promise<PaymentPayload> => {
    const { payload } = await new ExactSvmClient(await payer.signer(), { rpcUrl: dn.rpcUrl }).createPaymentPayload(2, r);
    return { x402Version: 2, resource: { url: 'https://merchant.example/api', description: 'api', mimeType: 'application/json' }, accepted: r, payload };
  };

  before(async () => {
    env = await createTestEnv('x402-exact-http');
    dn = await startDevnetLocalnet('exact-http');
    api = await startTestApi(env, { SOLANA_RPC_URL: dn.rpcUrl, SOLANA_CLUSTER: 'devnet', SIGNING_KEY_ENCRYPTION_KEY: 'ef'.repeat(32) });
    const gw = dn.ln.fixtures.gateways[0]!;
    gateway = gw.address;
    const jwt = (await api.node.keyRing.sign({ role: 'gateway', signer: gw.authority }, { subject: gw.address, expiresAt: Math.floor(Date.now() / 1000) + 3600 })).token;
    const created = await fetch(`${api.url}/v1/gateway/${gw.address}/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' }, body: '{}' });
    expect(created.status, await created.clone().text()).to.equal(201);
    key = ((await created.json()) as any).key;
    client = new HTTPFacilitatorClient({ url: `${api.url}/v1/x402`, createAuthHeaders: async () => ({ verify: { 'x-api-key': key }, settle: { 'x-api-key': key }, supported: {} }) });
    merchant = dn.fund('merchant');
  });
  after(async () => { await api?.close(); await dn?.close(); await env?.close(); });

  it('getSupported lists exact with the fee payer, in extra and in signers', async () => {
    const s = await client.getSupported();
    const exact = s.kinds.find((k) => k.scheme === 'exact');
    expect(exact).to.deep.include({ x402Version: 2, network: DEVNET_NETWORK });
    feePayer = String(exact?.extra?.['feePayer']);
    expect(s.signers['solana:*']).to.deep.equal([feePayer]);
    fundWallet(dn.ln.chain, new PublicKey(feePayer), 0n);
  });

  it('verify and settle a payment of @x402/svm\'s client; the settlement is the calling gateway\'s', async () => {
    const payer = dn.fund('payer');
    const r = requirements();
    const payment = await pay(payer, r);
    const v = await client.verify(payment, r);
    expect(v).to.deep.include({ isValid: true, payer: payer.address });
    const before = dn.tokenBalance(merchant.address, DEVNET_USDC);
    const s = await client.settle(payment, r);
    expect(s).to.deep.include({ success: true, network: DEVNET_NETWORK, payer: payer.address });
    expect(dn.tokenBalance(merchant.address, DEVNET_USDC)).to.equal(before + 777_000n);
    const row = await env.db.selectFrom('x402_exact_settlements').select(['gateway', 'state']).where('signature', '=', s.transaction).executeTakeFirstOrThrow();
    expect(row).to.deep.equal({ gateway, state: 'settled' });
    // the same settle again (a retry): the same answer
    const again = await post('/settle', { x402Version: 2, paymentPayload: payment, paymentRequirements: r });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.include({ success: true, transaction: s.transaction });
  });

  it('refusals at 200 with the reason; bad input a 400 envelope; no credential a 401', async () => {
    const payer = dn.fund('payer-2');
    const r = requirements();
    const tampered = await pay(payer, { ...r, amount: '1' });
    const v = await post('/verify', { x402Version: 2, paymentPayload: tampered, paymentRequirements: r });
    expect(v.status).to.equal(200);
    expect(v.body).to.deep.include({ isValid: false, invalidReason: 'invalid_exact_svm_payload_amount_mismatch' });
    const s = await post('/settle', { x402Version: 2, paymentPayload: tampered, paymentRequirements: r });
    expect(s.status).to.equal(200);
    expect(s.body).to.deep.include({ success: false, errorReason: 'invalid_exact_svm_payload_amount_mismatch', transaction: '' });

    const garbage = await post('/verify', { x402Version: 2, paymentPayload: { ...tampered, payload: { transaction: 'bm90IGEgdHJhbnNhY3Rpb24=' } }, paymentRequirements: r });
    expect(garbage.status).to.equal(200);
    expect(garbage.body).to.deep.include({ isValid: false, invalidReason: 'invalid_exact_svm_payload_transaction_could_not_be_decoded' });

    const bad = await post('/verify', { x402Version: 2, paymentPayload: tampered, paymentRequirements: { ...r, amount: 'lots' } });
    expect(bad.status).to.equal(400);
    expect(bad.body.error).to.be.a('string');
    const noFeePayer = await post('/settle', { x402Version: 2, paymentPayload: tampered, paymentRequirements: { ...r, extra: {} } });
    expect(noFeePayer.status).to.equal(400);

    const anonymous = await post('/settle', { x402Version: 2, paymentPayload: tampered, paymentRequirements: r }, {});
    expect(anonymous.status).to.equal(401);
  });
});
