/**
 * The policy query API over the read models built from the story in
 * readmodels-scenario.ts: the three filtered lists and every filter rule (each broken
 * one a 400), executions, one-time payments, and the chain-unavailable fallback of
 * /{address} (the RPC points at a closed port). Answers are checked against the
 * normalized policy's JSON schema, as published in the OpenAPI document.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are checked by shape here, and against the response schema */
import { createServer } from 'node:net';
import { expect } from 'chai';
import { Ajv } from 'ajv';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { policyListResponse, policyResponse } from '../../queries/policies/schemas.js';
import { buildScenario, G1, G2, K, key, P, project, UP, USDC_DEV, USDT } from './readmodels-scenario.js';

interface Body { success?: boolean; data?: any; error?: string }

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('policy query API', () => {
  let env: TestEnv;
  let api: TestApi;
  const ajv = new Ajv({ strict: false });
  const validList = ajv.compile(policyListResponse);
  const validOne = ajv.compile(policyResponse);

  const get = async (path: string): Promise<{ status: number; body: Body }> => {
    const res = await fetch(`${api.url}${path}`);
    return { status: res.status, body: (await res.json()) as Body };
  };
  const list = async (path: string): Promise<any[]> => {
    const { status, body } = await get(path);
    expect(status, JSON.stringify(body)).to.equal(200);
    expect(validList(body), JSON.stringify(validList.errors)).to.equal(true);
    return body.data as any[];
  };
  const addresses = async (path: string) => (await list(path)).map((p: { address: string }) => p.address);
  const rejects = async (path: string, pattern: RegExp) => {
    const { status, body } = await get(path);
    expect(status, path).to.equal(400);
    expect(body.success).to.equal(false);
    expect(body.error).to.match(pattern);
  };

  before(async () => {
    env = await createTestEnv('policies-api');
    await project(env, PROJECTIONS.filter((p) => p !== archiveProjection).concat(archiveProjection), buildScenario());
    api = await startTestApi(env, { SOLANA_RPC_URL: `http://127.0.0.1:${await closedPort()}`, SOLANA_CLUSTER: 'localnet', SOLANA_RPC_TIMEOUT_MS: '500' });
  });
  after(async () => { await api?.close(); await env?.close(); });

  describe('lists and their filters', () => {
    it('/v1/subscriptions by gateway: subscriptions only, default stablecoin mint, newest first', async () => {
      expect(await addresses(`/v1/subscriptions?gatewayPublicKey=${G1}`)).to.deep.equal([P.sub1]);
      expect(await addresses(`/v1/subscriptions?gatewayPublicKey=${G1}&tokenMint=${USDT}`)).to.deep.equal([P.subUsdt]);
      expect(await addresses(`/v1/subscriptions?gatewayPublicKey=${G2}`)).to.deep.equal([P.sub2]); // sub3 is deleted
    });

    it('/v1/payment-policies returns every variant', async () => {
      expect(await addresses(`/v1/payment-policies?gatewayPublicKey=${G1}`)).to.deep.equal([P.once2, P.mile1, P.once1, P.sub1]);
      expect(await addresses(`/v1/payment-policies?recipient=${K.r2}`)).to.deep.equal([P.once2, P.sub2, P.payg1, P.mile1]);
      expect(await addresses(`/v1/payment-policies?recipient=${K.r2}&gatewayPublicKey=${G2}`)).to.deep.equal([P.sub2, P.payg1]);
    });

    it('userPublicKey: the owner wallet on /v1/subscriptions, the user payment account elsewhere', async () => {
      expect(await addresses(`/v1/subscriptions?userPublicKey=${K.w1}`)).to.deep.equal([P.sub1]);
      expect(await addresses(`/v1/subscriptions?userPublicKey=${UP.w1usdc}`)).to.deep.equal([]);
      const all = [P.upto1, P.payg1, P.mile1, P.once1, P.sub1];
      expect(await addresses(`/v1/payment-policies?userPublicKey=${UP.w1usdc}`)).to.deep.equal(all);
      expect(await addresses(`/v1/payment-policies?userPublicKey=${K.w1}`)).to.deep.equal([]);
      expect(await addresses(`/v1/composable-policies?userPublicKey=${UP.w1usdc}`)).to.deep.equal([P.comp1]);
    });

    it('walletPublicKey with tokenMint finds the wallet\'s user payment for that mint', async () => {
      expect(await addresses(`/v1/payment-policies?walletPublicKey=${K.w1}&tokenMint=${USDC_DEV}`)).to.deep.equal([P.upto1, P.payg1, P.mile1, P.once1, P.sub1]);
      expect(await addresses(`/v1/payment-policies?walletPublicKey=${K.w1}&tokenMint=${USDT}`)).to.deep.equal([P.subUsdt]);
      expect(await addresses(`/v1/subscriptions?walletPublicKey=${K.w2}&tokenMint=${USDC_DEV}`)).to.deep.equal([P.sub2]);
      expect(await addresses(`/v1/composable-policies?walletPublicKey=${K.w1}&tokenMint=${USDC_DEV}`)).to.deep.equal([P.comp1]);
    });

    it('trackingId through the 64-byte memo (32 bytes on composable policies)', async () => {
      expect(await addresses('/v1/subscriptions?trackingId=order-1')).to.deep.equal([P.sub1]);
      expect(await addresses(`/v1/subscriptions?trackingId=order-1&tokenMint=${USDT}`)).to.deep.equal([P.subUsdt]);
      expect(await addresses(`/v1/payment-policies?trackingId=${encodeURIComponent('upto ünïcode')}`)).to.deep.equal([P.upto1]);
      expect(await addresses('/v1/payment-policies?trackingId=order')).to.deep.equal([]);
      expect(await addresses('/v1/composable-policies?trackingId=comp-1')).to.deep.equal([P.comp1]);
      expect(await addresses(`/v1/composable-policies?trackingId=${'c'.repeat(32)}`)).to.deep.equal([]);
      expect(await addresses(`/v1/payment-policies?trackingId=${'c'.repeat(64)}`)).to.deep.equal([]);
    });

    it('limit and offset page a list without counting as filters', async () => {
      expect(await addresses(`/v1/payment-policies?userPublicKey=${UP.w1usdc}&limit=2&offset=1`)).to.deep.equal([P.payg1, P.mile1]);
    });

    it('answers normalized policies: one shape, amounts as decimal strings', async () => {
      const [sub1] = await list(`/v1/subscriptions?userPublicKey=${K.w1}`);
      expect(sub1).to.include({
        address: P.sub1, kind: 'payment', policyId: 1, variant: 'Subscription', gateway: G1, recipient: K.r1, owner: K.w1,
        userPayment: UP.w1usdc, tokenMint: USDC_DEV, trackingId: 'order-1', status: 'Completed', totalPaid: '3000000',
        paymentCount: 3, nextPaymentDue: null, composable: null, source: 'read-model',
      });
      expect(sub1.memoHex).to.have.length(128);
      expect(sub1.lastPaymentAt).to.be.a('number');
      expect(sub1.lastPaymentSignature).to.be.a('string');
      // the program counts max_renewals down with each payment: 3 payments of 3 leave 0
      expect(sub1.parameters).to.include({ amount: '1000000', autoRenew: true, maxRenewals: 0, paymentFrequency: 'Monthly', frequencySeconds: '2592000' });
      const [sub2] = await list(`/v1/subscriptions?walletPublicKey=${K.w2}&tokenMint=${USDC_DEV}`);
      expect(sub2.parameters).to.include({ amount: '18446744073709551615', paymentFrequency: 'Custom', frequencySeconds: '3600' });
      expect(sub2.totalPaid).to.equal((2n * 18446744073709551615n).toString());
      expect(sub2.nextPaymentDue).to.equal(Number(sub2.parameters.nextPaymentDue));
      const [comp] = await list('/v1/composable-policies?trackingId=comp-1');
      expect(comp.composable).to.include({ totalInput: '600', totalOutput: '590', targetProgram: K.target, inputMint: USDC_DEV });
      expect(comp.composable.postValidation).to.deep.equal({ kind: 'ProgramCall', programId: K.target });
      const mile = (await list(`/v1/payment-policies?recipient=${K.r2}&gatewayPublicKey=${G1}`)).find((p) => p.address === P.mile1);
      expect(mile.parameters).to.include({ currentMilestone: 2, escrowAmount: '600', totalMilestones: 3 });
      expect(mile.nextPaymentDue).to.equal(Number(mile.parameters.milestoneTimestamps[2]));
    });
  });

  describe('every broken filter rule is a 400', () => {
    it('no filter at all (paging alone is none)', async () => {
      for (const path of ['/v1/subscriptions', '/v1/payment-policies?limit=5', '/v1/composable-policies']) await rejects(path, /at least one filter/);
    });
    it('more than three filters', async () => {
      await rejects(`/v1/payment-policies?gatewayPublicKey=${G1}&recipient=${K.r1}&trackingId=x&userPublicKey=${UP.w1usdc}`, /at most three/);
    });
    it('walletPublicKey without tokenMint', async () => {
      await rejects(`/v1/subscriptions?walletPublicKey=${K.w1}`, /walletPublicKey requires tokenMint/);
      await rejects(`/v1/composable-policies?walletPublicKey=${K.w1}&gatewayPublicKey=${G1}`, /walletPublicKey requires tokenMint/);
    });
    it('a trackingId that does not fit its memo, or is empty', async () => {
      await rejects(`/v1/payment-policies?trackingId=${'x'.repeat(65)}`, /trackingId/);
      await rejects(`/v1/payment-policies?trackingId=${encodeURIComponent('é'.repeat(33))}`, /trackingId must be 1 to 64/);
      await rejects(`/v1/composable-policies?trackingId=${'x'.repeat(33)}`, /trackingId/);
      await rejects('/v1/subscriptions?trackingId=', /trackingId/);
    });
    it('a key that is not a base58 32-byte public key', async () => {
      await rejects('/v1/subscriptions?gatewayPublicKey=0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl', /gatewayPublicKey/);
      await rejects(`/v1/subscriptions?recipient=${'z'.repeat(44)}`, /recipient is not a base58 public key/);
      await rejects(`/v1/payment-policies?tokenMint=${'z'.repeat(44)}&gatewayPublicKey=${G1}`, /tokenMint/);
    });
    it('an unknown parameter, a repeated one, a bad page', async () => {
      await rejects(`/v1/subscriptions?gateway=${G1}`, /unknown query parameter 'gateway'/);
      await rejects(`/v1/subscriptions?gatewayPublicKey=${G1}&gatewayPublicKey=${G2}`, /gatewayPublicKey/);
      await rejects(`/v1/subscriptions?gatewayPublicKey=${G1}&limit=0`, /limit/);
      await rejects(`/v1/subscriptions?gatewayPublicKey=${G1}&offset=-1`, /offset/);
    });
  });

  describe('executions', () => {
    it('PaymentRecord events of a payment policy, newest first, paged', async () => {
      const { status, body } = await get(`/v1/payment-policies/${P.sub1}/executions`);
      expect(status).to.equal(200);
      const items = body.data as any[];
      expect(items.map((e) => e.data.record_id)).to.deep.equal([3, 2, 1]);
      expect(items[0]).to.include({ name: 'PaymentRecord', trackingId: 'order-1' });
      expect(items[0].data).to.include({ payment_policy: P.sub1, gateway: G1, amount: '1000000', payer: K.w1, memo: 'order-1', token_mint: USDC_DEV });
      expect(items[0].signature).to.be.a('string');
      expect(items[0].timestamp).to.match(/^\d{4}-\d\d-\d\dT/);
      const page = await get(`/v1/payment-policies/${P.sub1}/executions?limit=1&offset=1`);
      expect((page.body.data as any[]).map((e) => e.data.record_id)).to.deep.equal([2]);
    });
    it('ComposableExecuted events of a composable policy, with the policy\'s trackingId', async () => {
      const items = (await get(`/v1/composable-policies/${P.comp1}/executions`)).body.data as any[];
      expect(items.map((e) => e.data.record_id)).to.deep.equal([2, 1]);
      expect(items[0]).to.include({ name: 'ComposableExecuted', trackingId: 'comp-1' });
      expect(items[0].data).to.include({ input_amount: '300', output_amount: '295', gateway_fee: '4', protocol_fee: '1', target_program: K.target });
      expect((await get(`/v1/composable-policies/${P.sub1}/executions`)).body.data).to.deep.equal([]);
    });
    it('an unknown policy has none; a bad address or page is a 400', async () => {
      expect((await get(`/v1/payment-policies/${key('nobody')}/executions`)).body.data).to.deep.equal([]);
      await rejects('/v1/payment-policies/not-an-address/executions', /address/);
      await rejects(`/v1/payment-policies/${'z'.repeat(44)}/executions`, /address/);
      await rejects(`/v1/payment-policies/${P.sub1}/executions?limit=100000000`, /limit/);
    });
  });

  describe('a policy by address while the chain is unreachable', () => {
    it('answers from the read model and says so', async () => {
      const { status, body } = await get(`/v1/payment-policies/${P.sub2}`);
      expect(status).to.equal(200);
      expect(validOne(body), JSON.stringify(validOne.errors)).to.equal(true);
      expect(body.data).to.include({ address: P.sub2, source: 'read-model', chainUnavailable: true, status: 'Active' });
      const comp = await get(`/v1/composable-policies/${P.comp1}`);
      expect(comp.body.data).to.include({ address: P.comp1, kind: 'composable', chainUnavailable: true });
    });
    it('503 when the read model has none, 404 when it knows the account was closed', async () => {
      const missing = await get(`/v1/payment-policies/${key('nobody')}`);
      expect(missing.status).to.equal(503);
      expect(missing.body.error).to.match(/chain is unavailable/);
      expect((await get(`/v1/composable-policies/${P.sub1}`)).status).to.equal(503);
      expect((await get(`/v1/payment-policies/${P.sub3}`)).status).to.equal(404);
    });
    it('400 for an invalid address', async () => {
      await rejects('/v1/payment-policies/xyz', /address/);
      await rejects(`/v1/composable-policies/${'z'.repeat(44)}`, /address/);
      await rejects(`/v1/payment-policies/${P.sub1}?x=1`, /unknown query parameter/);
    });
  });

  describe('/v1/onetime/{trackingId}', () => {
    it('an array when several records match, one object when exactly one does', async () => {
      const both = await get('/v1/onetime/onetime-42');
      expect((both.body.data as any[]).map((p) => p.address)).to.deep.equal([P.once2, P.once1]);
      const one = await get(`/v1/onetime/onetime-42?recipient=${K.r1}`);
      expect(one.body.data).to.include({ address: P.once1, variant: 'OneTime', status: 'Completed', totalPaid: '5000000', trackingId: 'onetime-42' });
      expect((await get('/v1/onetime/onetime-42?limit=1')).body.data.map((p: any) => p.address)).to.deep.equal([P.once2]); // an array of one: two records match
      expect((await get('/v1/onetime/order-1')).body.data).to.deep.equal([]);
      expect((await get('/v1/onetime/nothing-here')).body.data).to.deep.equal([]);
    });
    it('400 for a trackingId past 64 bytes or a bad recipient', async () => {
      await rejects(`/v1/onetime/${'x'.repeat(65)}`, /trackingId/);
      await rejects(`/v1/onetime/${encodeURIComponent('é'.repeat(40))}`, /trackingId must be 1 to 64/);
      await rejects('/v1/onetime/abc?recipient=nope', /recipient/);
      await rejects(`/v1/onetime/abc?recipient=${'z'.repeat(44)}`, /recipient/);
    });
  });

  it('publishes the routes and the normalized policy in the OpenAPI document', async () => {
    const doc = await (await fetch(`${api.url}/openapi.yaml`)).text();
    for (const p of ['/v1/subscriptions:', '/v1/payment-policies/{address}:', '/v1/payment-policies/{address}/executions:', '/v1/composable-policies:', '/v1/onetime/{trackingId}:']) {
      expect(doc).to.include(p);
    }
    expect(doc).to.include('NormalizedPolicy');
  });
});
