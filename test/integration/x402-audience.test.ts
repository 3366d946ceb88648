/**
 * An x402 token is good at the gateway it was paid at. Before: the JWT of a paid 402
 * exchange carried the service's one audience ("tributary-api"), so a merchant verifying
 * our JWTs the documented plain way (JWKS + issuer + audience) took a token paid at another
 * gateway: merchant A's customer's token replayed at merchant B. Now its aud names the
 * gateway and the requirement paid for; createTokenVerifier's verifyX402Token, any JWT
 * library asking for the gateway's x402 audience, and the middleware refuse it elsewhere.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { Keypair } from '@solana/web3.js';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import { createTokenVerifier } from '../../commands/x402/client/verify-token.js';
import { DEMO_PATH, startX402, type X402Harness } from './x402-harness.js';

describe('x402 tokens are bound to the gateway they were paid at', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let url: string;
  let deferred: AcceptedRequirement;
  let payg: AcceptedRequirement;
  let jwt = '';
  const gatewayB = Keypair.generate().publicKey.toBase58();

  const get = async (headers: Record<string, string> = {}) => {
    const res = await fetch(url, { headers });
    return { status: res.status, body: (await res.json()) as any };
  };
  const merchant = (gateway?: string) => createTokenVerifier({ jwksUrl: `${h.api.url}/v1/jwks`, ...(gateway ? { gateway } : {}) });
  const refused = (p: Promise<unknown>) => p.then(() => false, () => true);
  /** what a merchant in any language does: JWKS, issuer, one audience */
  const plain = (token: string, audience: string) =>
    jwtVerify(token, createRemoteJWKSet(new URL(`${h.api.url}/v1/jwks`)), { algorithms: ['ES256'], issuer: 'tributary', audience });

  before(async () => {
    h = await startX402('x402-audience');
    url = `${h.api.url}${DEMO_PATH}`;
    [deferred, payg] = (await h.accepts()) as [AcceptedRequirement, AcceptedRequirement];
    const payer = h.payer();
    const r = await get({ payment: (await buildPayment(deferred, { wallet: payer, rpc: h.rpc })).header });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    jwt = r.body.jwt;
  });
  after(async () => { await h?.close(); });

  it('names the gateway and the requirement paid for in aud and claims', () => {
    const c = decodeJwt(jwt);
    expect(c).to.include({ role: 'x402', gateway: deferred.gateway, requirementId: deferred.id });
    expect(c.aud).to.deep.equal([`tributary-api:gateway:${deferred.gateway}:x402`, `tributary-api:gateway:${deferred.gateway}:x402:${deferred.id}`]);
  });

  it('a plain JWKS + audience verifier of another merchant refuses it (before: the shared audience took it)', async () => {
    expect(await refused(plain(jwt, 'tributary-api')), 'the shared audience took a gateway-bound token').to.equal(true);
    expect(await refused(plain(jwt, `tributary-api:gateway:${gatewayB}:x402`))).to.equal(true);
    expect(await refused(plain(jwt, `tributary-api:gateway:${deferred.gateway}`)), 'the gateway\'s wallet-token audience took it').to.equal(true);
    expect((await plain(jwt, `tributary-api:gateway:${deferred.gateway}:x402`)).payload.sub).to.be.a('string');
    expect((await plain(jwt, `tributary-api:gateway:${deferred.gateway}:x402:${deferred.id}`)).payload.sub).to.be.a('string');
    expect(await refused(plain(jwt, `tributary-api:gateway:${deferred.gateway}:x402:${payg.id}`)), 'another requirement\'s audience took it').to.equal(true);
  });

  it('verifyX402Token takes it at its gateway only, and for its requirement only', async () => {
    const claims = await merchant(deferred.gateway).verifyX402Token(jwt);
    expect(claims).to.include({ gateway: deferred.gateway, requirementId: deferred.id, role: 'x402' });
    expect((await merchant(deferred.gateway).verifyX402Token(jwt, { requirementIds: [deferred.id, payg.id] })).requirementId).to.equal(deferred.id);
    expect(await refused(merchant(deferred.gateway).verifyX402Token(jwt, { requirementIds: [payg.id] }))).to.equal(true);
    expect(await refused(merchant(gatewayB).verifyX402Token(jwt))).to.equal(true);
    expect(await refused(merchant().verifyX402Token(jwt))).to.equal(true);
    // the generic verify with no gateway (the shared audience, as merchants wrote before): refused
    expect(await refused(merchant().verify(jwt))).to.equal(true);
    expect(await refused(merchant(gatewayB).verify(jwt))).to.equal(true);
  });

  it('other tokens of the same gateway are not x402 tokens: a gateway sign-in JWT and a wallet token are refused', async () => {
    const ring = h.api.node.keyRing;
    const exp = Math.floor(Date.now() / 1000) + 600;
    const { token: session } = await ring.sign({ role: 'gateway', signer: deferred.recipient }, { subject: deferred.gateway, expiresAt: exp });
    expect(await refused(merchant(deferred.gateway).verifyX402Token(session))).to.equal(true);
    expect(await refused(plain(session, `tributary-api:gateway:${deferred.gateway}:x402`))).to.equal(true);
    const { token: wallet } = await ring.sign(
      { role: 'wallet', gateway: deferred.gateway, policies: [], lastPayments: [] },
      { subject: Keypair.generate().publicKey.toBase58(), expiresAt: exp, audience: `tributary-api:gateway:${deferred.gateway}` },
    );
    expect(await refused(merchant(deferred.gateway).verifyX402Token(wallet))).to.equal(true);
    expect((await get({ authorization: `Bearer ${wallet}` })).status).to.equal(402);
  });

  it('the middleware serves it, and refuses a token whose gateway is not the requirement\'s', async () => {
    expect((await get({ authorization: `Bearer ${jwt}` })).status).to.equal(200);
    const c = decodeJwt(jwt);
    // signed by the service for gateway B but naming A's requirement: the id alone does not decide
    const { token } = await h.api.node.keyRing.sign(
      { ...c, gateway: gatewayB, aud: undefined, iss: undefined, sub: undefined, exp: undefined, iat: undefined, nbf: undefined, jti: undefined },
      { subject: c.sub!, expiresAt: c.exp!, audience: [`tributary-api:gateway:${gatewayB}:x402`, `tributary-api:gateway:${gatewayB}:x402:${deferred.id}`] },
    );
    const r = await get({ authorization: `Bearer ${token}` });
    expect(r.status).to.equal(402);
    expect(r.body.error).to.match(/another gateway|paid at gateway/);
  });

  it('a token issued before the binding (shared aud, no gateway) serves until exp where its requirement is unambiguous', async () => {
    const c = decodeJwt(jwt);
    const { token: legacy } = await h.api.node.keyRing.sign(
      { role: 'x402', policy: c['policy'], requirementId: c['requirementId'], scheme: c['scheme'], network: c['network'], tokenMint: c['tokenMint'] },
      { subject: c.sub!, expiresAt: c.exp! },
    );
    expect(decodeJwt(legacy).aud).to.equal('tributary-api');
    expect((await get({ authorization: `Bearer ${legacy}` })).status).to.equal(200);
    expect((await merchant(deferred.gateway).verifyX402Token(legacy, { requirementIds: [deferred.id] })).requirementId).to.equal(deferred.id);
    // without the requirement ids the verifier cannot tell where it was paid: refused
    expect(await refused(merchant(deferred.gateway).verifyX402Token(legacy))).to.equal(true);
    expect(await refused(merchant(gatewayB).verifyX402Token(legacy, { requirementIds: [payg.id] }))).to.equal(true);
  });
});
