/**
 * Every text a wallet signs here names its purpose, the service and the key it is for, and
 * a signature given for one is refused for any other. Before, a gateway sign-in nonce was
 * bare random base58: nothing told the signing wallet what it signed, so a page of another
 * service could show one of our nonces to a gateway's signer as its own sign-in, and the
 * signature it got signed the gateway in here. Now the nonce reads
 * `tributary-gateway-sign-in|<service>|<gateway>|<random>`, the token challenge
 * `tributary-wallet-token|<service>|<wallet>|<random>`, and each check refuses the other's,
 * another service's and another gateway's or wallet's text by name.
 */
import { expect } from 'chai';
import * as ed from '@noble/ed25519';
import bs58 from 'bs58';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { registerSigningRoutes } from '../../src/app/signing-routes.js';
import { proofProblem } from '../../commands/x402/proof.js';
import { expectError, insertGateway, newWallet, postJson, type Wallet } from './auth-fixtures.js';

describe('signed messages name their purpose, service and subject', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let api: TestApi;
  let staging: TestApi;
  let signer: Wallet;
  let gateway: string;
  let otherGateway: string;

  before(async () => {
    env = await createTestEnv('signed-purposes');
    const settings = { SOLANA_RPC_URL: 'http://127.0.0.1:1', RATE_LIMIT_GATEWAY_CHALLENGE_PER_MINUTE: '1000' };
    // two deployments on one Redis prefix: only the service in their texts tells them apart
    [api, staging] = await Promise.all([
      startTestApi(env, { ...settings, PUBLIC_BASE_URL: 'https://pay.example.com' }, { modules: [registerSigningRoutes] }),
      startTestApi(env, { ...settings, PUBLIC_BASE_URL: 'https://staging.example.com' }, { modules: [registerSigningRoutes] }),
    ]);
    signer = await newWallet();
    gateway = await insertGateway(env.db, signer.address);
    otherGateway = await insertGateway(env.db, signer.address);
  });
  after(async () => {
    await Promise.all([api?.close(), staging?.close()]);
    await env?.close();
  });

  const sign = async (text: string) => Array.from(await ed.signAsync(new TextEncoder().encode(text), signer.secretKey));
  const gatewayChallenge = async (g: string, node = api) => ((await (await postJson(`${node.url}/v1/gateway/${g}/auth/challenge`, {})).json()) as { nonce: string }).nonce;
  const tokenChallenge = async (node = api) => ((await (await postJson(`${node.url}/v1/tokens/challenge`, { walletPublicKey: signer.address })).json()) as { nonce: string }).nonce;
  const verify = async (g: string, nonce: string, node = api) => postJson(`${node.url}/v1/gateway/${g}/auth/verify`, { signer: signer.address, signature: await sign(nonce), nonce });
  const issue = async (nonce: string, node = api) => postJson(`${node.url}/v1/tokens/issue`, { walletPublicKey: signer.address, nonce, signature: await sign(nonce) });

  it('says what is signed: purpose, service, gateway or wallet', async () => {
    expect(await gatewayChallenge(gateway)).to.match(new RegExp(`^tributary-gateway-sign-in\\|pay\\.example\\.com\\|${gateway}\\|[1-9A-HJ-NP-Za-km-z]{40,44}$`));
    expect(await tokenChallenge()).to.match(new RegExp(`^tributary-wallet-token\\|pay\\.example\\.com\\|${signer.address}\\|[1-9A-HJ-NP-Za-km-z]{40,44}$`));
    const signedIn = await verify(gateway, await gatewayChallenge(gateway));
    expect(signedIn.status).to.equal(200);
  });

  it('a signed token challenge does not sign a gateway in, nor a signed sign-in nonce prove a wallet for a token', async () => {
    const forToken = await tokenChallenge();
    expect(await expectError(await verify(gateway, forToken), 401)).to.match(/not a tributary-gateway-sign-in challenge/);
    const forSignIn = await gatewayChallenge(gateway);
    expect(await expectError(await issue(forSignIn), 401)).to.match(/not a tributary-wallet-token challenge/);
    // both still work for what they were issued for
    expect((await verify(gateway, forSignIn)).status).to.equal(200);
    expect((await issue(forToken)).status).to.equal(403); // proven; the wallet just holds no policy
  });

  it('refuses a nonce of another gateway, and another deployment\'s nonce', async () => {
    const ofOther = await gatewayChallenge(otherGateway);
    expect(await expectError(await verify(gateway, ofOther), 401)).to.match(new RegExp(`issued for ${otherGateway}`));
    const ofStaging = await gatewayChallenge(gateway, staging);
    expect(await expectError(await verify(gateway, ofStaging), 401)).to.match(/service staging\.example\.com, not pay\.example\.com/);
    expect(await expectError(await issue(await tokenChallenge(staging)), 401)).to.match(/service staging\.example\.com/);
  });

  it('a signature of a sign-in nonce is no x402 payment proof', async () => {
    const nonce = await gatewayChallenge(gateway);
    const signature = bs58.encode(Uint8Array.from(await sign(nonce)));
    const problem = proofProblem({ signedAt: 1_795_000_000, signature }, signer.address, { requirementId: nonce, resource: '', transactionSignature: undefined }, 1_795_000_000);
    expect(problem).to.match(/is not the payer's/);
  });
});
