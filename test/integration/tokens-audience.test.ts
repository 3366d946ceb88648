/**
 * A wallet token is good at one gateway. Before: every JWT of POST /v1/tokens/issue had the
 * service's one audience ("tributary-api"), so a token a wallet got for its subscription
 * at merchant A (and showed A) verified at merchant B, or any merchant verifying our JWTs
 * through the JWKS, unless B narrowed the claims by recipient or policy itself: A, or
 * whoever saw the token, could be the wallet at B. Now its aud names the gateway alone,
 * createTokenVerifier takes the merchant's gateway and refuses tokens of another.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { createTokenVerifier } from '../../commands/x402/client/verify-token.js';
import { expectError, insertGateway, insertPayment, insertPolicy, movableClock, postJson, randomKey, subscription } from './auth-fixtures.js';

const T0 = Date.UTC(2027, 0, 15, 12, 0, 0);
const NOW = T0 / 1000;

interface Bundle { token: string; gateway: string; wallet: string; policies: { gateway: string }[]; lastPayments: { gateway: string }[] }

describe('wallet tokens are bound to one gateway', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let api: TestApi;
  const clock = movableClock(T0);
  let gatewayA: string;
  let gatewayB: string;

  before(async () => {
    env = await createTestEnv('tokens-audience');
    api = await startTestApi(env, { SOLANA_RPC_URL: 'http://127.0.0.1:1', TOKENS_REQUIRE_WALLET_PROOF: 'false' }, { clock });
    gatewayA = await insertGateway(env.db, randomKey());
    gatewayB = await insertGateway(env.db, randomKey());
  });
  after(async () => {
    await api?.close();
    await env?.close();
  });

  const issue = (body: unknown) => postJson(`${api.url}/v1/tokens/issue`, body);
  const ok = async (body: unknown): Promise<Bundle> => {
    const res = await issue(body);
    const json = (await res.json()) as Bundle;
    expect(res.status, JSON.stringify(json)).to.equal(200);
    return json;
  };
  const merchant = (gateway?: string) => createTokenVerifier({ jwksUrl: `${api.url}/v1/jwks`, now: () => clock.now(), ...(gateway ? { gateway } : {}) });
  const refused = (p: Promise<unknown>) => p.then(() => false, () => true);

  it('a token paid at merchant A is refused by merchant B, and by a verifier that names no gateway', async () => {
    const wallet = randomKey();
    await insertPolicy(env.db, { owner: wallet, gateway: gatewayA, policyType: subscription(NOW + 86_400) });
    const bundle = await ok({ walletPublicKey: wallet });
    expect(bundle.gateway).to.equal(gatewayA);

    expect((await merchant(gatewayA).verifyWalletToken(bundle.token)).sub).to.equal(wallet);
    expect(await refused(merchant(gatewayB).verifyWalletToken(bundle.token)), 'merchant B took A\'s token').to.equal(true);
    expect(await refused(merchant(gatewayB).verify(bundle.token)), 'merchant B\'s plain verify took A\'s token').to.equal(true);
    // what every merchant ran before (the shared audience): refused, not taken anywhere
    expect(await refused(merchant().verify(bundle.token))).to.equal(true);
    expect(await refused(merchant().verifyWalletToken(bundle.token))).to.equal(true);
  });

  it('a wallet paying at two gateways names the one it wants; without a name: 400 naming both', async () => {
    const wallet = randomKey();
    await insertPolicy(env.db, { owner: wallet, gateway: gatewayA, policyType: subscription(NOW + 86_400) });
    await insertPolicy(env.db, { owner: wallet, gateway: gatewayB, policyType: subscription(NOW + 86_400) });
    await insertPayment(env.db, { payer: wallet, policy: randomKey(), gateway: gatewayA, timestamp: NOW - 60 });
    await insertPayment(env.db, { payer: wallet, policy: randomKey(), gateway: gatewayB, timestamp: NOW - 30 });

    const message = await expectError(await issue({ walletPublicKey: wallet }), 400);
    expect(message).to.include(gatewayA).and.to.include(gatewayB).and.to.match(/name one with gateway/);

    const atB = await ok({ walletPublicKey: wallet, gateway: gatewayB });
    expect(atB.gateway).to.equal(gatewayB);
    expect(atB.policies.map((p) => p.gateway)).to.deep.equal([gatewayB]);
    expect(atB.lastPayments.map((p) => p.gateway)).to.deep.equal([gatewayB]);
    expect((await merchant(gatewayB).verifyWalletToken(atB.token)).policies).to.have.length(1);
    expect(await refused(merchant(gatewayA).verifyWalletToken(atB.token))).to.equal(true);

    await expectError(await issue({ walletPublicKey: randomKey(), gateway: gatewayB }), 403);
  });

  it('a payment proof binds the token to the payment\'s gateway; naming another gateway finds no payment', async () => {
    const payer = randomKey();
    await insertPolicy(env.db, { owner: payer, gateway: gatewayA, policyType: subscription(NOW + 86_400) });
    const paidAtB = await insertPayment(env.db, { payer, policy: randomKey(), gateway: gatewayB, timestamp: NOW - 60 });
    const bundle = await ok({ transactionSignature: paidAtB });
    expect(bundle.gateway).to.equal(gatewayB);
    expect(bundle.policies).to.deep.equal([]);
    expect(await refused(merchant(gatewayA).verifyWalletToken(bundle.token))).to.equal(true);
    expect((await merchant(gatewayB).verifyWalletToken(bundle.token)).lastPayments[0]?.signature).to.equal(paidAtB);
    await expectError(await issue({ transactionSignature: paidAtB, gateway: gatewayA }), 404);
  });

  it('a token issued before the binding (shared audience) verifies until it expires only where all it proves is', async () => {
    const ring = api.node.keyRing;
    const claim = (gateway: string) => ({ gateway, address: randomKey(), variant: 'Subscription' });
    const legacy = async (policies: unknown[]) =>
      (await ring.sign({ role: 'wallet', policies, lastPayments: [] }, { subject: randomKey(), expiresAt: NOW + 600 })).token;
    const onlyA = await legacy([claim(gatewayA)]);
    expect((await merchant(gatewayA).verifyWalletToken(onlyA)).gateway).to.equal(gatewayA);
    expect(await refused(merchant(gatewayB).verifyWalletToken(onlyA))).to.equal(true);
    const both = await legacy([claim(gatewayA), claim(gatewayB)]);
    expect(await refused(merchant(gatewayA).verifyWalletToken(both))).to.equal(true);
    expect(await refused(merchant(gatewayB).verifyWalletToken(both))).to.equal(true);
  });
});
