/**
 * Issue 15, finding 2 and 4: POST /v1/tokens/issue hands out a wallet's token only to
 * whoever holds the wallet (a signed POST /v1/tokens/challenge nonce), and its limits run
 * before any database work: the per-IP limit first, the per-wallet limit for proven
 * wallets only. Queries on the read pool are counted by a Kysely plugin on the real
 * database, so "before any database query" is measured, not assumed.
 */
import { expect } from 'chai';
import * as ed from '@noble/ed25519';
import bs58 from 'bs58';
import type { KyselyPlugin } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startApiServer, type ApiServer } from '../../src/app/api-server.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { createLogger } from '../../infra/log/logger.js';
import { registerSigningRoutes } from '../../src/app/signing-routes.js';
import {
  expectError, insertGateway, insertPayment, insertPolicy, movableClock, newWallet, postJson, randomKey, randomSignature, subscription, type Wallet,
} from './auth-fixtures.js';

const T0 = Date.UTC(2027, 0, 15, 12, 0, 0);
const NOW = T0 / 1000;

describe('token issuance: proof of the wallet, limits before work', function () {
  this.timeout(120_000);
  let env: TestEnv;
  const clock = movableClock(T0);
  let queries = 0;
  const counter: KyselyPlugin = {
    transformQuery(args) { queries += 1; return args.node; },
    async transformResult(args) { return args.result; },
  };
  const nodes: ApiServer[] = [];
  let api = '';
  let open = '';
  let owner: Wallet;
  let other: Wallet;
  let paymentSig = '';
  let ip = 0;
  const from = () => ({ 'x-forwarded-for': `10.9.${Math.floor(ip / 250)}.${ip % 250}` });

  const start = async (overrides: Record<string, string>) => {
    const config = loadConfig({ ...env.env, PORT: '0', HOST: '127.0.0.1', SOLANA_RPC_URL: 'http://127.0.0.1:1', TRUST_PROXY: 'true', ...overrides });
    const logger = createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent', 'test-api');
    const ctx = { config, db: env.db, dbRead: env.db.withPlugin(counter), redis: env.redis, keys: env.keys, logger, clock };
    const node = await startApiServer(ctx, { port: 0, host: '127.0.0.1', modules: [registerSigningRoutes] });
    nodes.push(node);
    return node.url;
  };
  const challenge = async (wallet: string, headers = from()) => {
    const res = await postJson(`${api}/v1/tokens/challenge`, { walletPublicKey: wallet }, headers);
    expect(res.status).to.equal(200);
    return (await res.json()) as { nonce: string; walletPublicKey: string; expiresAt: number };
  };
  const sign = async (nonce: string, w: Wallet) => Array.from(await ed.signAsync(new TextEncoder().encode(nonce), w.secretKey));
  const issue = (body: unknown, url = api, headers = from()) => postJson(`${url}/v1/tokens/issue`, body, headers);

  before(async () => {
    env = await createTestEnv('tokens-proof');
    api = await start({});
    open = await start({ TOKENS_REQUIRE_WALLET_PROOF: 'false' });
    owner = await newWallet();
    other = await newWallet();
    const gateway = await insertGateway(env.db, randomKey());
    const policy = await insertPolicy(env.db, { owner: owner.address, gateway, policyType: subscription(NOW + 86_400) });
    paymentSig = await insertPayment(env.db, { payer: owner.address, policy, gateway, timestamp: NOW - 60 });
  });
  after(async () => {
    for (const n of nodes) await n.close();
    await env.close();
  });
  beforeEach(() => { ip += 1; });

  it('hands out a challenge bound to the wallet, and refuses a small-order key', async () => {
    const c = await challenge(owner.address);
    expect(c.walletPublicKey).to.equal(owner.address);
    expect(c.expiresAt).to.equal(T0 + 60_000);
    expect(c.nonce).to.be.a('string').with.length.above(40);
    const res = await postJson(`${api}/v1/tokens/challenge`, { walletPublicKey: bs58.encode(new Uint8Array(32)) }, from());
    expect(await expectError(res, 400)).to.match(/small-order/);
  });

  it('401 proof_required without a proof', async () => {
    const res = await issue({ walletPublicKey: owner.address });
    const body = (await res.clone().json()) as { code: string };
    await expectError(res, 401);
    expect(body.code).to.equal('proof_required');
    expect((await issue({ transactionSignature: paymentSig })).status).to.equal(401);
  });

  it('401 for a challenge signed by another wallet', async () => {
    const c = await challenge(owner.address);
    expect(await expectError(await issue({ walletPublicKey: owner.address, nonce: c.nonce, signature: await sign(c.nonce, other) }), 401)).to.match(/not .* signature/);
  });

  it('200 and the bundle with its own signature (64 integers or base58); a nonce used twice is 401', async () => {
    const c = await challenge(owner.address);
    const body = { walletPublicKey: owner.address, nonce: c.nonce, signature: await sign(c.nonce, owner) };
    const res = await issue(body);
    expect(res.status).to.equal(200);
    const bundle = (await res.json()) as { wallet: string; policies: unknown[]; token: string };
    expect(bundle.wallet).to.equal(owner.address);
    expect(bundle.policies).to.have.length(1);
    expect(await expectError(await issue(body), 401)).to.match(/already used/);

    const d = await challenge(owner.address);
    const b58 = bs58.encode(await ed.signAsync(new TextEncoder().encode(d.nonce), owner.secretKey));
    expect((await issue({ walletPublicKey: owner.address, nonce: d.nonce, signature: b58 })).status).to.equal(200);
  });

  it('401 for another wallet\'s nonce, and for an expired one', async () => {
    const c = await challenge(other.address);
    expect(await expectError(await issue({ walletPublicKey: owner.address, nonce: c.nonce, signature: await sign(c.nonce, owner) }), 401)).to.match(/another wallet/);
    const d = await challenge(owner.address);
    await env.redis.del(`${env.prefix}tokens:challenge:${d.nonce}`); // what 60 s of Redis expiry does
    expect((await issue({ walletPublicKey: owner.address, nonce: d.nonce, signature: await sign(d.nonce, owner) })).status).to.equal(401);
  });

  it('with transactionSignature, only the payment\'s payer gets the token', async () => {
    const c = await challenge(other.address);
    await expectError(await issue({ transactionSignature: paymentSig, nonce: c.nonce, signature: await sign(c.nonce, other) }), 404);
    const d = await challenge(owner.address);
    const res = await issue({ transactionSignature: paymentSig, nonce: d.nonce, signature: await sign(d.nonce, owner) });
    expect(res.status).to.equal(200);
    expect(((await res.json()) as { wallet: string }).wallet).to.equal(owner.address);
  });

  it('counts proven wallets only: 250 unproven requests naming a wallet leave its budget whole', async () => {
    const victim = await newWallet();
    for (let i = 0; i < 250; i += 25) {
      const batch = await Promise.all(Array.from({ length: 25 }, () => issue({ walletPublicKey: victim.address, nonce: 'x', signature: randomSignature() })));
      for (const r of batch) expect(r.status).to.equal(401);
    }
    const c = await challenge(victim.address);
    const res = await issue({ walletPublicKey: victim.address, nonce: c.nonce, signature: await sign(c.nonce, victim) });
    expect(res.status).to.equal(403); // proven, no policy: counted once
    expect(res.headers.get('ratelimit')).to.match(/^limit=200, remaining=199,/);
  });

  const flood = async (url: string, body: () => unknown) => {
    const statuses: number[] = [];
    for (let i = 0; i < 700; i += 50) {
      const batch = await Promise.all(Array.from({ length: 50 }, () => issue(body(), url)));
      statuses.push(...batch.map((r) => r.status));
    }
    return statuses;
  };

  it('700 requests from one address within a minute: 429s from the 601st, with no database query (proofs on: none at all)', async () => {
    const before = queries;
    const statuses = await flood(api, () => ({ walletPublicKey: randomKey(), nonce: randomKey(), signature: randomSignature() }));
    expect(statuses.filter((s) => s === 401)).to.have.length(600);
    expect(statuses.filter((s) => s === 429)).to.have.length(100);
    expect(statuses.slice(600).every((s) => s === 429)).to.equal(true);
    expect(queries - before, 'read-pool queries').to.equal(0);
  });

  it('700 requests from one address within a minute with proofs off: one query per admitted request, none for the 100 refused', async () => {
    const before = queries;
    const statuses = await flood(open, () => ({ transactionSignature: randomSignature() }));
    expect(statuses.filter((s) => s === 404)).to.have.length(600);
    expect(statuses.filter((s) => s === 429)).to.have.length(100);
    expect(queries - before, 'read-pool queries').to.equal(600);
  });
});
