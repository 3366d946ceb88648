/**
 * POST /v1/tokens/issue over HTTP on two API nodes: bundles for policies of all five
 * variants and for a recent payment, verified with jose against /v1/jwks fetched over
 * HTTP; the filters; the five errors in the envelope; 200 requests per minute per wallet
 * across both nodes.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startApiServer } from '../../src/app/api-server.js';
import { createDb } from '../../infra/postgres/database.js';
import { createTokenVerifier, type WalletTokenClaims } from '../../commands/x402/client/verify-token.js';
import { NOT_BEFORE_SKEW_SECONDS } from '../../infra/signing-keys/key-ring.js';
import type { PolicyType } from '../../src/kernel/domain/policy-type.js';
import {
  expectError, insertGateway, insertPayment, insertPolicy, movableClock, newWallet, nodeWith, postJson, randomKey, randomSignature, subscription,
} from './auth-fixtures.js';

const T0 = Date.UTC(2027, 0, 15, 12, 0, 0);
const NOW = T0 / 1000;
const USDT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';

interface Bundle { token: string; expiresAt: number; wallet: string; policies: { variant: string; address: string; validUntil: number | null }[]; lastPayments: { signature: string }[] }

describe('token issuance', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let a: TestApi;
  let b: TestApi;
  const clock = movableClock(T0);
  let wallet: string;
  let gateway: string;
  const addr: Record<string, string> = {};
  let recipient: string;

  const types: Record<string, PolicyType> = {
    Subscription: subscription(NOW + 86_400),
    Milestone: { kind: 'Milestone', milestone_amounts: ['5', '5', '0', '0'], milestone_timestamps: [String(NOW + 100), String(NOW + 200), '0', '0'], current_milestone: 0, release_condition: 0, total_milestones: 2, escrow_amount: '10' },
    PayAsYouGo: { kind: 'PayAsYouGo', max_amount_per_period: '1000', max_chunk_amount: '10', period_length_seconds: '3600', current_period_start: String(NOW - 60), current_period_total: '300', expiry_date: null },
    OneTime: { kind: 'OneTime', amount: '7', due_date: String(NOW + 50), expiry_date: String(NOW + 900) },
    UpTo: { kind: 'UpTo', max_amount: '70', valid_after: String(NOW - 10), deadline: String(NOW + 1200) },
  };

  before(async () => {
    env = await createTestEnv('tokens-issue');
    // no chain: gateways come from the read model; the open behaviour of SPEC.md (tokens-proof.test.ts covers proofs)
    const settings = { SOLANA_RPC_URL: 'http://127.0.0.1:1', TOKENS_REQUIRE_WALLET_PROOF: 'false' };
    [a, b] = await Promise.all([startTestApi(env, settings, { clock }), startTestApi(env, settings, { clock })]);
    wallet = (await newWallet()).address;
    gateway = await insertGateway(env.db, randomKey());
    recipient = randomKey();
    let slot = 1;
    for (const [variant, policyType] of Object.entries(types)) {
      addr[variant] = await insertPolicy(env.db, {
        owner: wallet, gateway, policyType, slot: slot++,
        // the subscription paid its first period (the PaymentRecord below)
        ...(variant === 'Subscription' ? { paymentCount: 1 } : {}),
        ...(variant === 'UpTo' ? { tokenMint: USDT } : {}),
        ...(variant === 'OneTime' ? { recipient, trackingId: 'order-42' } : {}),
      });
    }
    await insertPolicy(env.db, { owner: wallet, gateway, policyType: subscription(NOW + 10), status: 'Paused' });
    await insertPayment(env.db, { payer: wallet, policy: addr['Subscription']!, gateway, timestamp: NOW - 3600 });
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await env?.close();
  });

  const issue = (body: unknown, api = a) => postJson(`${api.url}/v1/tokens/issue`, body);
  const ok = async (body: unknown, api = a): Promise<Bundle> => {
    const res = await issue(body, api);
    const json = (await res.json()) as Bundle;
    expect(res.status, JSON.stringify(json)).to.equal(200);
    return json;
  };
  const verifier = (api: TestApi) => createTokenVerifier({ jwksUrl: `${api.url}/v1/jwks`, now: () => clock.now(), gateway });

  it('issues a bundle for a wallet with active policies of all five variants; the JWT verifies against /v1/jwks', async () => {
    const bundle = await ok({ walletPublicKey: wallet });
    expect(bundle.wallet).to.equal(wallet);
    expect(bundle.policies.map((p) => p.variant)).to.deep.equal(['UpTo', 'OneTime', 'PayAsYouGo', 'Milestone', 'Subscription']);
    expect(bundle.policies.find((p) => p.variant === 'PayAsYouGo')).to.include({ remainingThisPeriod: '700', currentPeriodEnd: NOW - 60 + 3600 });
    expect(bundle.policies.find((p) => p.variant === 'Subscription')).to.include({ nextPaymentDue: NOW + 86_400, validUntil: NOW + 86_400 + 259_200, paymentStanding: 'paid' }); // + SUBSCRIPTION_GRACE_SECONDS
    expect(bundle.lastPayments).to.have.length(1);
    expect(bundle.lastPayments[0]).to.include({ payer: wallet, paymentPolicy: addr['Subscription'], amount: '1000', gateway });
    // the latest proof is the subscription, beyond the one-hour cap
    expect(bundle.expiresAt).to.equal(T0 + 3600 * 1000);

    const claims: WalletTokenClaims = await verifier(b).verifyWalletToken(bundle.token);
    expect(claims).to.include({ sub: wallet, iss: 'tributary', aud: `tributary-api:gateway:${gateway}`, gateway, role: 'wallet', iat: NOW, nbf: NOW - NOT_BEFORE_SKEW_SECONDS, exp: NOW + 3600 });
    expect(claims.jti).to.be.a('string');
    expect(claims.policies).to.deep.equal(bundle.policies);
    expect(claims.lastPayments).to.deep.equal(bundle.lastPayments);
  });

  it('a subscription never paid is not proof of payment: unpaid, for 5 minutes, whatever due date its creator chose; a paid one is paid through its due date', async () => {
    // anyone may create a Subscription at an active gateway, due when they like, and never pay it
    const owner = (await newWallet()).address;
    const yearAhead = NOW + 365 * 86_400;
    const unpaid = await insertPolicy(env.db, { owner, gateway, policyType: subscription(yearAhead), slot: 2 });
    const paid = await insertPolicy(env.db, { owner, gateway, policyType: subscription(NOW + 86_400), slot: 1, paymentCount: 1 });

    const alone = await ok({ walletPublicKey: owner, policyAddress: unpaid });
    const claim = alone.policies[0];
    expect(claim).to.include({ address: unpaid, nextPaymentDue: yearAhead, paymentCount: 0, paymentStanding: 'unpaid' });
    expect(claim?.validUntil).to.be.at.most(NOW + 300);
    // the JWT lasts as long as its claim, not a year nor the one-hour cap
    expect(alone.expiresAt).to.be.at.most((NOW + 300) * 1000);
    expect((await verifier(a).verifyWalletToken(alone.token)).policies).to.deep.equal(alone.policies);

    const both = await ok({ walletPublicKey: owner });
    expect(both.policies.find((p) => p.address === paid)).to.include({ paymentStanding: 'paid', validUntil: NOW + 86_400 + 259_200 });
    expect(both.policies.find((p) => p.address === unpaid)).to.include({ paymentStanding: 'unpaid' });
  });

  it('derives exp from the policies\' own times, within the cap', async () => {
    const bundle = await ok({ walletPublicKey: wallet, policyAddress: addr['Milestone'] }, b);
    expect(bundle.policies.map((p) => p.address)).to.deep.equal([addr['Milestone']]);
    expect(bundle.expiresAt).to.equal((NOW + 100) * 1000);
    const { claims } = await verifier(a).verify(bundle.token);
    expect(claims.exp).to.equal(NOW + 100);
  });

  it('narrows by tokenMint, recipient and trackingId', async () => {
    expect((await ok({ walletPublicKey: wallet, tokenMint: USDT })).policies.map((p) => p.variant)).to.deep.equal(['UpTo']);
    expect((await ok({ walletPublicKey: wallet, recipient })).policies.map((p) => p.variant)).to.deep.equal(['OneTime']);
    expect((await ok({ walletPublicKey: wallet, trackingId: 'order-42' })).policies.map((p) => p.variant)).to.deep.equal(['OneTime']);
  });

  it('403 when no active policy matches (none, paused only, or filtered out)', async () => {
    expect(await expectError(await issue({ walletPublicKey: randomKey() }), 403)).to.match(/no active payment policy/);
    await expectError(await issue({ walletPublicKey: wallet, trackingId: 'order-43' }), 403);
    const paused = randomKey();
    await insertPolicy(env.db, { owner: paused, gateway, policyType: subscription(NOW + 10), status: 'Paused' });
    await expectError(await issue({ walletPublicKey: paused }), 403);
  });

  it('issues for a recent payment signature alone, bound to its payer; 404 when unknown, too old or another wallet\'s', async () => {
    const payer = randomKey();
    const policy = randomKey();
    const recent = await insertPayment(env.db, { payer, policy, gateway, timestamp: NOW - 120, trackingId: 'chk-1' });
    const old = await insertPayment(env.db, { payer, policy, gateway, timestamp: NOW - 601 });

    const bundle = await ok({ transactionSignature: recent });
    expect(bundle.wallet).to.equal(payer);
    expect(bundle.policies).to.deep.equal([]);
    expect(bundle.lastPayments[0]).to.include({ signature: recent, trackingId: 'chk-1', timestamp: NOW - 120 });
    expect(bundle.expiresAt).to.equal((NOW - 120 + 3600) * 1000);
    const claims = await verifier(a).verifyWalletToken(bundle.token);
    expect(claims.sub).to.equal(payer);
    expect((await ok({ transactionSignature: recent, walletPublicKey: payer, trackingId: 'chk-1' })).wallet).to.equal(payer);

    expect(await expectError(await issue({ transactionSignature: randomSignature() }), 404)).to.match(/no payment/);
    expect(await expectError(await issue({ transactionSignature: old }), 404)).to.match(/too old/);
    await expectError(await issue({ transactionSignature: recent, walletPublicKey: wallet }), 404);
    await expectError(await issue({ transactionSignature: recent, tokenMint: USDT }), 404);
  });

  it('400 for invalid input, in the envelope', async () => {
    expect(await expectError(await issue({}), 400)).to.match(/walletPublicKey/);
    await expectError(await issue({ walletPublicKey: 'not-a-key' }), 400);
    await expectError(await issue({ walletPublicKey: wallet, tokenMint: 'O0O0' }), 400);
    await expectError(await issue({ transactionSignature: 'abc' }), 400);
    await expectError(await issue({ walletPublicKey: wallet, surprise: true }), 400);
    await expectError(await issue({ walletPublicKey: wallet, trackingId: 'é'.repeat(40) }), 400); // 80 bytes
    await expectError(await issue({ walletPublicKey: wallet, trackingId: '' }), 400);
    await expectError(await fetch(`${a.url}/v1/tokens/issue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[' }), 400);
  });

  it('allows 200 requests per minute per wallet across both nodes, then 429 with Retry-After', async () => {
    const w = randomKey();
    const statuses: number[] = [];
    for (let i = 0; i < 200; i += 10) {
      const batch = await Promise.all(Array.from({ length: 10 }, (_, j) => issue({ walletPublicKey: w }, (i + j) % 2 === 0 ? a : b)));
      for (const r of batch) {
        statuses.push(r.status);
        await r.body?.cancel();
      }
    }
    expect(statuses.filter((s) => s === 403)).to.have.length(200);
    const limited = await issue({ walletPublicKey: w }, b);
    expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 60);
    expect(limited.headers.get('ratelimit-policy')).to.equal('200;w=60');
    expect(limited.headers.get('ratelimit')).to.match(/^limit=200, remaining=0, reset=\d+$/);
    expect(await expectError(limited, 429)).to.match(/rate limit/);
    await expectError(await issue({ walletPublicKey: w }, a), 429);
    // another wallet has its own budget
    await expectError(await issue({ walletPublicKey: randomKey() }, a), 403);
  });

  it('503 when the index or the keys are unavailable, in the envelope', async () => {
    const down = createDb('postgres://root@127.0.0.1:1/unreachable', 1, 'down');
    const server = await startApiServer(nodeWith(a.ctx, { db: down, dbRead: down }), { port: 0, host: '127.0.0.1' });
    try {
      await expectError(await postJson(`${server.url}/v1/tokens/issue`, { walletPublicKey: wallet }), 503);
      await expectError(await fetch(`${server.url}/v1/jwks`), 503);
      await expectError(await postJson(`${server.url}/v1/gateway/${gateway}/auth/challenge`, {}), 503);
      const keysDown = await startApiServer(nodeWith(a.ctx, { db: down }), { port: 0, host: '127.0.0.1' });
      try {
        await expectError(await postJson(`${keysDown.url}/v1/tokens/issue`, { walletPublicKey: wallet }), 503);
      } finally {
        await keysDown.close();
      }
    } finally {
      await server.close();
      await down.destroy();
    }
  });
});
