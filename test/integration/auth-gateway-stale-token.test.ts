/**
 * A gateway JWT is honoured only while the wallet that signed in is still the gateway's
 * authority or signer and the gateway is active (docs/proof-of-possession.md). That held
 * for webhooks and the merchant policy listing only: every other route that takes a
 * gateway JWT (API keys, the facilitator, the scheduler, the merchant views) let the old
 * signer act for up to the token's lifetime after a signer change, and an API key minted
 * in that hour never expires. An API key created with a gateway JWT belongs to the wallet
 * that signed in, and stops working when that wallet stops being the gateway's.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { expectError, insertGateway, newWallet, postJson, randomKey, signIn, type Wallet } from './auth-fixtures.js';

describe('gateway JWTs and the API keys they mint stop working when the wallet is no longer the gateway\'s', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let api: TestApi;
  let authority: Wallet;
  let signer: Wallet;

  before(async () => {
    env = await createTestEnv('auth-gateway-stale');
    // no chain: the gateway's keys come from the read model, asked at every use
    api = await startTestApi(env, {
      SOLANA_RPC_URL: 'http://127.0.0.1:1', GATEWAY_KEYS_CACHE_MS: '0', RATE_LIMIT_GATEWAY_CHALLENGE_PER_MINUTE: '1000', ADMIN_API_KEY: 'stale-token-admin-key',
    });
    [authority, signer] = await Promise.all([newWallet(), newWallet()]);
  });
  after(async () => {
    await api?.close();
    await env?.close();
  });

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const replaceSigner = async (gw: string) => {
    const next = await newWallet();
    await env.db.updateTable('gateways').set({ signer: next.address }).where('address', '=', gw).execute();
  };
  const requirement = (gw: string) => ({
    scheme: 'deferred', network: api.ctx.config.solana.network, amount: '1000000', recipient: randomKey(), gateway: gw,
    tokenMint: randomKey(), resource: 'https://merchant.example/report', paymentFrequency: 'Monthly',
  });
  const usage = (gw: string, headers: Record<string, string>) =>
    postJson(`${api.url}/v1/x402/usage`, { jwt: 'not-a-jwt', paymentRequirements: requirement(gw) }, headers);

  it('refuses the old signer\'s JWT on every route that acts for the gateway', async () => {
    const gw = await insertGateway(env.db, authority.address, signer.address);
    const { token } = await signIn(api.url, gw, signer);
    // while the wallet is the gateway's signer, each route serves it
    expect((await postJson(`${api.url}/v1/gateway/${gw}/api-keys`, { label: 'ok' }, bearer(token))).status).to.equal(201);
    expect((await usage(gw, bearer(token))).status).to.equal(200);
    expect((await fetch(`${api.url}/v1/gateway/${gw}/merchant/subscribers`, { headers: bearer(token) })).status).to.equal(200);

    await replaceSigner(gw);
    expect(await expectError(await postJson(`${api.url}/v1/gateway/${gw}/api-keys`, { label: 'after' }, bearer(token)), 401)).to.match(/no longer/);
    await expectError(await fetch(`${api.url}/v1/gateway/${gw}/api-keys`, { headers: bearer(token) }), 401);
    expect(await expectError(await usage(gw, bearer(token)), 401)).to.match(/no longer/);
    await expectError(await fetch(`${api.url}/v1/gateway/${gw}/merchant/subscribers`, { headers: bearer(token) }), 401);
    await expectError(await fetch(`${api.url}/v1/gateway/${gw}/scheduler`, { method: 'DELETE', headers: bearer(token) }), 401);
    const keys = await env.db.selectFrom('gateway_api_keys').select('label').where('gateway', '=', gw).execute();
    expect(keys.map((k) => k.label)).to.deep.equal(['ok']);
  });

  it('ends every session of a gateway on POST …/auth/revoke: its JWTs issued before are refused, a new sign-in and other gateways go on', async () => {
    const gw = await insertGateway(env.db, authority.address, signer.address);
    const other = await insertGateway(env.db, randomKey(), (await newWallet()).address);
    const leaked = (await signIn(api.url, gw, signer)).token;
    const byAuthority = (await signIn(api.url, gw, authority)).token;
    expect((await fetch(`${api.url}/v1/gateway/${gw}/api-keys`, { headers: bearer(leaked) })).status).to.equal(200);
    const minted = await postJson(`${api.url}/v1/gateway/${gw}/api-keys`, { label: 'minted' }, bearer(leaked));
    expect(minted.status).to.equal(201);
    const mintedKey = ((await minted.json()) as { key: string }).key;
    expect(await expectError(await postJson(`${api.url}/v1/gateway/${other}/auth/revoke`, {}, bearer(byAuthority)), 403)).to.be.a('string');

    const revoked = await postJson(`${api.url}/v1/gateway/${gw}/auth/revoke`, {}, bearer(byAuthority));
    expect(revoked.status).to.equal(200);
    const { revokedBefore } = (await revoked.json()) as { revokedBefore: number };
    expect(revokedBefore).to.be.greaterThan(Math.floor(Date.now() / 1000) - 2);
    for (const token of [leaked, byAuthority]) {
      expect(await expectError(await fetch(`${api.url}/v1/gateway/${gw}/api-keys`, { headers: bearer(token) }), 401)).to.match(/revoked its sessions/);
      expect(await expectError(await usage(gw, bearer(token)), 401)).to.match(/revoked its sessions/);
    }
    // an API key is a credential of its own: revoked one by one (the listing names the wallet that created it)
    expect((await usage(gw, { 'x-api-key': mintedKey })).status).to.equal(200);

    while (Date.now() / 1000 < revokedBefore) await new Promise((r) => setTimeout(r, 50));
    const fresh = (await signIn(api.url, gw, authority)).token;
    expect((await fetch(`${api.url}/v1/gateway/${gw}/api-keys`, { headers: bearer(fresh) })).status).to.equal(200);
    const admin = await postJson(`${api.url}/v1/gateway/${gw}/auth/revoke`, {}, { 'x-admin-key': api.ctx.config.keys.adminApiKey ?? '' });
    expect(admin.status, 'the administrator may end them too').to.equal(200);
  });

  it('refuses an API key once the wallet that created it is no longer the gateway\'s; the authority\'s and the admin\'s keys go on', async () => {
    const gw = await insertGateway(env.db, authority.address, signer.address);
    const create = async (headers: Record<string, string>, createdBy: string | null) => {
      const res = await postJson(`${api.url}/v1/gateway/${gw}/api-keys`, {}, headers);
      expect(res.status).to.equal(201);
      const body = (await res.json()) as { key: string; createdBy: string | null };
      expect(body.createdBy, 'the listing names the wallet the key depends on').to.equal(createdBy);
      return body.key;
    };
    const bySigner = await create(bearer((await signIn(api.url, gw, signer)).token), signer.address);
    const byAuthority = await create(bearer((await signIn(api.url, gw, authority)).token), authority.address);
    const byAdmin = await create({ 'x-admin-key': api.ctx.config.keys.adminApiKey ?? '' }, null);
    for (const key of [bySigner, byAuthority, byAdmin]) expect((await usage(gw, { 'x-api-key': key })).status).to.equal(200);

    await replaceSigner(gw);
    expect(await expectError(await usage(gw, { 'x-api-key': bySigner }), 401)).to.match(/no longer/);
    expect((await usage(gw, { 'x-api-key': byAuthority })).status).to.equal(200);
    expect((await usage(gw, { 'x-api-key': byAdmin })).status).to.equal(200);

    // an inactive gateway is served by none of its keys
    await env.db.updateTable('gateways').set({ active: false }).where('address', '=', gw).execute();
    for (const key of [byAuthority, byAdmin]) expect(await expectError(await usage(gw, { 'x-api-key': key }), 401)).to.match(/inactive/);
  });
});
