/**
 * Issue 15 on gateway sign-in: a gateway whose signer is the all-zero key (a cleared
 * field) cannot be signed in for with the identity signature; the client names the nonce
 * it signed and a flood of challenges does not evict it; an inactive gateway cannot sign
 * in; a gateway JWT is refused once its wallet is no longer the gateway's signer.
 */
import { expect } from 'chai';
import * as ed from '@noble/ed25519';
import bs58 from 'bs58';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { MAX_OUTSTANDING } from '../../commands/gateway-auth/nonces.js';
import { expectError, insertGateway, newWallet, postJson, signIn, type Wallet } from './auth-fixtures.js';

const ZERO_KEY = bs58.encode(new Uint8Array(32));
/** R = the identity point's encoding (y = 1), S = 0: valid for any message under cofactored (ZIP-215) rules. */
const IDENTITY_SIGNATURE = [1, ...new Array<number>(63).fill(0)];

describe('gateway sign-in: strict signatures, named nonces, keys checked at use', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let api: TestApi;
  let authority: Wallet;
  let signer: Wallet;

  before(async () => {
    env = await createTestEnv('auth-gateway-proof');
    const settings = { SOLANA_RPC_URL: 'http://127.0.0.1:1', GATEWAY_KEYS_CACHE_MS: '0', RATE_LIMIT_GATEWAY_CHALLENGE_PER_MINUTE: '1000' };
    api = await startTestApi(env, settings);
    [authority, signer] = await Promise.all([newWallet(), newWallet()]);
  });
  after(async () => {
    await api?.close();
    await env?.close();
  });

  const challenge = async (gw: string) => {
    const res = await postJson(`${api.url}/v1/gateway/${gw}/auth/challenge`, {});
    expect(res.status).to.equal(200);
    return ((await res.json()) as { nonce: string }).nonce;
  };
  const sign = async (nonce: string, w: Wallet) => Array.from(await ed.signAsync(new TextEncoder().encode(nonce), w.secretKey));
  const verify = (gw: string, body: unknown) => postJson(`${api.url}/v1/gateway/${gw}/auth/verify`, body);

  it('refuses the identity signature for a gateway whose signer is the all-zero key, for every nonce', async () => {
    const gw = await insertGateway(env.db, authority.address, ZERO_KEY);
    for (let i = 0; i < 8; i += 1) {
      const nonce = await challenge(gw);
      await expectError(await verify(gw, { signer: ZERO_KEY, signature: IDENTITY_SIGNATURE, nonce }), 401);
      await expectError(await verify(gw, { signer: ZERO_KEY, signature: IDENTITY_SIGNATURE }), 401);
    }
  });

  it('accepts a named nonce however many challenges came after it', async () => {
    const gw = await insertGateway(env.db, authority.address, signer.address);
    const nonce = await challenge(gw);
    for (let i = 0; i < MAX_OUTSTANDING + 5; i += 1) await challenge(gw);
    const res = await verify(gw, { signer: signer.address, signature: await sign(nonce, signer), nonce });
    expect(res.status).to.equal(200);
    await expectError(await verify(gw, { signer: signer.address, signature: await sign(nonce, signer), nonce }), 401);
  });

  it('refuses sign-in for an inactive gateway', async () => {
    const gw = await insertGateway(env.db, authority.address, signer.address);
    await env.db.updateTable('gateways').set({ active: false }).where('address', '=', gw).execute();
    await expectError(await postJson(`${api.url}/v1/gateway/${gw}/auth/challenge`, {}), 403);
  });

  it('refuses a gateway JWT once its wallet is no longer the gateway\'s signer', async () => {
    const gw = await insertGateway(env.db, authority.address, signer.address);
    const { token } = await signIn(api.url, gw, signer);
    const list = () => fetch(`${api.url}/v1/gateway/${gw}/merchant/policies`, { headers: { authorization: `Bearer ${token}` } });
    expect((await list()).status).to.equal(200);
    const next = await newWallet();
    await env.db.updateTable('gateways').set({ signer: next.address }).where('address', '=', gw).execute();
    expect(await expectError(await list(), 401)).to.match(/no longer/);
    const authorityToken = await signIn(api.url, gw, authority);
    expect((await fetch(`${api.url}/v1/gateway/${gw}/merchant/policies`, { headers: { authorization: `Bearer ${authorityToken.token}` } })).status).to.equal(200);
    await env.db.updateTable('gateways').set({ active: false }).where('address', '=', gw).execute();
    expect(await expectError(await fetch(`${api.url}/v1/gateway/${gw}/merchant/policies`, { headers: { authorization: `Bearer ${authorityToken.token}` } }), 401)).to.match(/inactive/);
  });
});
