/**
 * A gateway JWT (gateway sign-in) is for the service's gateway routes only. Before: it had
 * the service's shared audience, so a verifier asking for that audience (every merchant's
 * check of wallet and x402 tokens before they were bound to a gateway, and
 * createTokenVerifier's verify) took it; and anyone gets one for the price of a gateway of
 * their own. Now its aud is "<JWT_AUDIENCE>:gateway-session:<gateway>": refused there,
 * honoured by the service's gateway routes, as are gateway JWTs issued before until exp.
 */
import { expect } from 'chai';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { createTokenVerifier } from '../../commands/x402/client/verify-token.js';
import { expectError, insertGateway, movableClock, newWallet, signIn } from './auth-fixtures.js';

describe('gateway JWTs have an audience of their own', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let api: TestApi;
  const clock = movableClock();
  let gatewayA: string;
  let gatewayB: string;
  let token = '';

  before(async () => {
    env = await createTestEnv('auth-gateway-audience');
    api = await startTestApi(env, { SOLANA_RPC_URL: 'http://127.0.0.1:1' }, { clock });
    const [a, b] = await Promise.all([newWallet(), newWallet()]);
    gatewayA = await insertGateway(env.db, a.address);
    gatewayB = await insertGateway(env.db, b.address);
    ({ token } = await signIn(api.url, gatewayA, a));
  });
  after(async () => {
    await api?.close();
    await env?.close();
  });

  const policies = (gw: string, t: string) => fetch(`${api.url}/v1/gateway/${gw}/merchant/policies`, { headers: { authorization: `Bearer ${t}` } });
  const refused = (p: Promise<unknown>) => p.then(() => false, () => true);
  const plain = (t: string, audience: string) =>
    jwtVerify(t, createRemoteJWKSet(new URL(`${api.url}/v1/jwks`)), { algorithms: ['ES256'], issuer: 'tributary', audience, currentDate: new Date(clock.now()) });

  it('is refused by a verifier asking for the shared audience (before: taken as any token of ours)', async () => {
    expect(decodeJwt(token).aud).to.equal(`tributary-api:gateway-session:${gatewayA}`);
    expect(await refused(plain(token, 'tributary-api')), 'the shared audience took a gateway JWT').to.equal(true);
    expect(await refused(createTokenVerifier({ jwksUrl: `${api.url}/v1/jwks`, now: () => clock.now(), gateway: gatewayB }).verify(token))).to.equal(true);
    expect(await refused(createTokenVerifier({ jwksUrl: `${api.url}/v1/jwks`, now: () => clock.now(), gateway: gatewayA }).verifyX402Token(token))).to.equal(true);
  });

  it('still acts for its gateway at the service, and only for it', async () => {
    expect((await policies(gatewayA, token)).status).to.equal(200);
    await expectError(await policies(gatewayB, token), 403);
  });

  it('a gateway JWT issued before (shared aud) acts until it expires; a wallet token of the gateway never does', async () => {
    const ring = api.node.keyRing;
    const exp = Math.floor(clock.now() / 1000) + 600;
    const claims = decodeJwt(token);
    const { token: legacy } = await ring.sign({ role: 'gateway', signer: claims['signer'] }, { subject: gatewayA, expiresAt: exp });
    expect(decodeJwt(legacy).aud).to.equal('tributary-api');
    expect((await policies(gatewayA, legacy)).status).to.equal(200);
    const { token: wallet } = await ring.sign(
      { role: 'wallet', gateway: gatewayA, policies: [], lastPayments: [] },
      { subject: gatewayA, expiresAt: exp, audience: `tributary-api:gateway:${gatewayA}` },
    );
    expect((await policies(gatewayA, wallet)).status).to.be.oneOf([401, 403]);
    clock.advance(601);
    await expectError(await policies(gatewayA, legacy), 401);
  });
});
