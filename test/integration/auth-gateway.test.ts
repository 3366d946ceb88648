/**
 * Gateway sign-in and the merchant listing over HTTP, on two API nodes sharing Redis and
 * Postgres: nonces are single use across nodes, expire by the (injected) clock, and only
 * the gateway's authority or signer gets a token; every error in the envelope.
 */
import { expect } from 'chai';
import * as ed from '@noble/ed25519';
import bs58 from 'bs58';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { createTokenVerifier } from '../../commands/x402/client/verify-token.js';
import { startApiServer } from '../../src/app/api-server.js';
import { createDb } from '../../infra/postgres/database.js';
import { MAX_OUTSTANDING } from '../../commands/gateway-auth/nonces.js';
import {
  expectError, insertGateway, insertPolicy, movableClock, newWallet, nodeWith, postJson, randomKey, signIn, subscription, type Wallet,
} from './auth-fixtures.js';

const NONCE_TTL = 60;
const NO_CHAIN = 'http://127.0.0.1:1';

describe('gateway sign-in and merchant policies', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let a: TestApi;
  let b: TestApi;
  const clock = movableClock();
  let authority: Wallet;
  let signer: Wallet;
  let gateway: string;
  let otherGateway: string;
  let other: Wallet;

  before(async () => {
    env = await createTestEnv('auth-gateway');
    // no chain here: gateways are looked up in the read model (the chain-first path is tested below)
    // more challenges per gateway than its rate limit allows: the nonce eviction is tested here, the limit in ratelimit-standard
    const settings = { GATEWAY_NONCE_TTL_SECONDS: String(NONCE_TTL), GATEWAY_TOKEN_TTL_SECONDS: '900', SOLANA_RPC_URL: NO_CHAIN, RATE_LIMIT_GATEWAY_CHALLENGE_PER_MINUTE: '1000' };
    [a, b] = await Promise.all([startTestApi(env, settings, { clock }), startTestApi(env, settings, { clock })]);
    [authority, signer, other] = await Promise.all([newWallet(), newWallet(), newWallet()]);
    gateway = await insertGateway(env.db, authority.address, signer.address);
    otherGateway = await insertGateway(env.db, other.address);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await env?.close();
  });

  const challenge = async (api: TestApi, gw = gateway) => {
    const res = await postJson(`${api.url}/v1/gateway/${gw}/auth/challenge`, {});
    expect(res.status).to.equal(200);
    return (await res.json()) as { nonce: string; gateway: string; expiresAt: number };
  };
  const sign = async (nonce: string, w: Wallet) => Array.from(await ed.signAsync(new TextEncoder().encode(nonce), w.secretKey));
  const verify = (api: TestApi, body: unknown, gw = gateway) => postJson(`${api.url}/v1/gateway/${gw}/auth/verify`, body);

  it('gives a nonce with its expiry in unix milliseconds', async () => {
    const c = await challenge(a);
    expect(c.gateway).to.equal(gateway);
    expect(c.nonce).to.be.a('string').with.length.above(30);
    expect(c.expiresAt).to.equal(clock.now() + NONCE_TTL * 1000);
  });

  it('exchanges a nonce signed by the authority, or by the signer, for a gateway JWT that verifies through /v1/jwks', async () => {
    for (const w of [authority, signer]) {
      const c = await challenge(a);
      const res = await verify(a, { signer: w.address, signature: await sign(c.nonce, w) });
      expect(res.status, await res.clone().text()).to.equal(200);
      const body = (await res.json()) as { token: string; expiresIn: number };
      expect(body.expiresIn).to.equal(900);
      const audience = `tributary-api:gateway-session:${gateway}`;
      const { claims } = await createTokenVerifier({ jwksUrl: `${a.url}/v1/jwks`, now: () => clock.now(), audience }).verify(body.token);
      expect(claims).to.include({ sub: gateway, role: 'gateway', signer: w.address, iss: 'tributary', aud: audience });
      expect(claims.exp! - claims.iat!).to.equal(900);
    }
  });

  it('refuses a nonce used on the other node (single use across nodes)', async () => {
    const c = await challenge(a);
    const body = { signer: authority.address, signature: await sign(c.nonce, authority) };
    expect((await verify(a, body)).status).to.equal(200);
    expect(await expectError(await verify(b, body), 401)).to.match(/already used|expired|never issued/);
  });

  it('gives exactly one token when two nodes race on the same signed nonce', async () => {
    const c = await challenge(b);
    const body = { signer: authority.address, signature: await sign(c.nonce, authority) };
    const statuses = (await Promise.all([verify(a, body), verify(b, body), verify(a, body), verify(b, body)])).map((r) => r.status);
    expect(statuses.sort()).to.deep.equal([200, 401, 401, 401]);
  });

  it('refuses an expired nonce (clock moved past its expiry)', async () => {
    const c = await challenge(a);
    clock.advance(NONCE_TTL + 1);
    await expectError(await verify(b, { signer: authority.address, signature: await sign(c.nonce, authority) }), 401);
  });

  it('refuses a signature over anything but an outstanding nonce, and a signature by a stranger', async () => {
    await challenge(a);
    await expectError(await verify(a, { signer: authority.address, signature: await sign('not the nonce', authority) }), 401);
    await expectError(await verify(a, { signer: authority.address, signature: new Array<number>(64).fill(7) }), 401);
    const stranger = await newWallet();
    const c = await challenge(a);
    expect(await expectError(await verify(a, { signer: stranger.address, signature: await sign(c.nonce, stranger) }), 403)).to.match(/authority/);
    // a signature by the signer, presented as the authority's
    const c2 = await challenge(a);
    await expectError(await verify(a, { signer: authority.address, signature: await sign(c2.nonce, signer) }), 401);
  });

  it('keeps the newest nonces when a gateway has many outstanding', async () => {
    const first = await challenge(a);
    for (let i = 0; i < MAX_OUTSTANDING; i += 1) {
      clock.advance(0.001); // nonces are ordered by expiry: one issued a millisecond later is newer
      await challenge(b);
    }
    await expectError(await verify(a, { signer: authority.address, signature: await sign(first.nonce, authority) }), 401);
    const last = await challenge(a);
    expect((await verify(b, { signer: authority.address, signature: await sign(last.nonce, authority) })).status).to.equal(200);
  });

  it('answers 404 for an unknown gateway and 400 for malformed input, in the envelope', async () => {
    const unknown = randomKey();
    await expectError(await postJson(`${a.url}/v1/gateway/${unknown}/auth/challenge`, {}), 404);
    await expectError(await verify(a, { signer: authority.address, signature: new Array<number>(64).fill(1) }, unknown), 404);
    await expectError(await postJson(`${a.url}/v1/gateway/not-base58-0OIl/auth/challenge`, {}), 400);
    await expectError(await postJson(`${a.url}/v1/gateway/${'1'.repeat(44)}/auth/challenge`, {}), 400); // base58, but not 32 bytes
    const sig = await sign((await challenge(a)).nonce, authority);
    await expectError(await verify(a, { signer: authority.address, signature: sig.slice(0, 63) }), 400);
    await expectError(await verify(a, { signer: authority.address, signature: [...sig.slice(0, 63), 256] }), 400);
    await expectError(await verify(a, { signer: authority.address, signature: sig.map(String).map((s) => `${s}x`) }), 400);
    await expectError(await verify(a, { signer: 'short', signature: sig }), 400);
    await expectError(await verify(a, { signature: sig }), 400);
    await expectError(await verify(a, { signer: authority.address, signature: sig, extra: 1 }), 400);
    await expectError(await fetch(`${a.url}/v1/gateway/${gateway}/auth/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"signer":' }), 400);
  });

  describe('GET /v1/gateway/{gateway}/merchant/policies', () => {
    let mine: string[];
    before(async () => {
      const owner = randomKey();
      mine = [];
      for (let i = 0; i < 3; i += 1) mine.push(await insertPolicy(env.db, { owner, gateway, policyType: subscription(2_000_000_000), slot: 100 + i }));
      await insertPolicy(env.db, { owner, gateway: otherGateway, policyType: subscription(2_000_000_000) });
    });

    const list = (api: TestApi, gw: string, token?: string, query = '') =>
      fetch(`${api.url}/v1/gateway/${gw}/merchant/policies${query}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

    it("lists the gateway's policies, newest first, with limit 100 and offset 0 by default, on any node", async () => {
      const { token } = await signIn(a.url, gateway, authority);
      const res = await list(b, gateway, token);
      expect(res.status).to.equal(200);
      const body = (await res.json()) as { items: { address: string; gateway: string; variant: string }[]; total: number };
      expect(body.total).to.equal(3);
      expect(body.items.map((p) => p.address)).to.deep.equal([...mine].reverse());
      expect(body.items.every((p) => p.gateway === gateway && p.variant === 'Subscription')).to.equal(true);
      const page = (await (await list(a, gateway, token, '?limit=1&offset=1')).json()) as { items: { address: string }[]; total: number };
      expect(page.total).to.equal(3);
      expect(page.items.map((p) => p.address)).to.deep.equal([mine[1]]);
    });

    it('401 without a token or with a bad one, 403 with another gateway\'s, 400 for bad paging', async () => {
      await expectError(await list(a, gateway), 401);
      await expectError(await list(a, gateway, 'not.a.jwt'), 401);
      await expectError(await fetch(`${a.url}/v1/gateway/${gateway}/merchant/policies`, { headers: { authorization: 'Basic abc' } }), 401);
      const theirs = await signIn(a.url, otherGateway, other);
      expect(await expectError(await list(a, gateway, theirs.token), 403)).to.match(/another gateway/);
      const { token } = await signIn(a.url, gateway, signer);
      await expectError(await list(a, gateway, token, '?limit=0'), 400);
      await expectError(await list(a, gateway, token, '?offset=-1'), 400);
      await expectError(await list(a, gateway, token, '?foo=1'), 400);
    });

    it('503 in the envelope when the policy read model is unreachable', async () => {
      const { token } = await signIn(a.url, gateway, authority);
      const down = createDb('postgres://root@127.0.0.1:1/unreachable', 1, 'down');
      const server = await startApiServer(nodeWith(a.ctx, { dbRead: down }), { port: 0, host: '127.0.0.1' });
      try {
        await expectError(await fetch(`${server.url}/v1/gateway/${gateway}/merchant/policies`, { headers: { authorization: `Bearer ${token}` } }), 503);
      } finally {
        await server.close();
        await down.destroy();
      }
    });

    it('401 once the gateway token has expired', async () => {
      const { token } = await signIn(a.url, gateway, authority);
      clock.advance(901);
      await expectError(await list(a, gateway, token), 401);
    });
  });

  describe('against the chain (localnet)', () => {
    let net: Localnet;
    let api: TestApi;
    before(async () => {
      net = await startLocalnet({ port: 0, seed: 'auth-gateway', rate: 0 });
      api = await startTestApi(env, { SOLANA_RPC_URL: net.rpcUrl, SOLANA_WS_URL: net.wsUrl, RATE_LIMIT_GATEWAY_CHALLENGE_PER_MINUTE: '1000' }, { clock });
    });
    after(async () => {
      await api?.close();
      await net?.close();
    });

    it('signs in the authority of a gateway that exists only on chain (not yet in the read model)', async () => {
      const g = net.fixtures.gateways[0]!;
      const authorityWallet: Wallet = { address: g.authority, secretKey: bs58.decode(g.authoritySecretKey).subarray(0, 32) };
      const { token } = await signIn(api.url, g.address, authorityWallet);
      const audience = `tributary-api:gateway-session:${g.address}`;
      const { claims } = await createTokenVerifier({ jwksUrl: `${api.url}/v1/jwks`, now: () => clock.now(), audience }).verify(token);
      expect(claims).to.include({ sub: g.address, signer: g.authority });
      // the read-model gateway of this test is not on this chain: the chain's answer counts
      await expectError(await postJson(`${api.url}/v1/gateway/${gateway}/auth/challenge`, {}), 404);
      // an account that is not a PaymentGateway (here a wallet) is no gateway either
      await expectError(await postJson(`${api.url}/v1/gateway/${g.authority}/auth/challenge`, {}), 404);
    });
  });
});
