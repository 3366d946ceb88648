/**
 * GET /v1/skill/{encoded} against the localnet: the mint's decimals read from the chain,
 * the exact base-unit amount, a markdown document an agent can follow, and 400 / 404 / 503
 * for a bad session, an unknown mint and an unreachable chain.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { key } from '../support/upstreams/fixtures.js';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';
import { registerSkillRoutes } from '../../queries/skill/routes.js';

const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const WSOL = 'So11111111111111111111111111111111111111112';

describe('GET /v1/skill/{encoded}', function () {
  let env: TestEnv;
  let chain: Localnet;
  let api: TestApi;
  let gateway: string;
  let recipient: string;

  before(async () => {
    env = await createTestEnv('skill-document');
    chain = await startLocalnet({ port: 0, seed: 'skill-document', rate: 0 });
    gateway = chain.fixtures.gateways[0]?.address ?? '';
    recipient = chain.fixtures.wallets[0]?.publicKey ?? '';
    api = await startTestApi(env, { SOLANA_RPC_URL: chain.rpcUrl, SOLANA_CLUSTER: 'localnet', PUBLIC_BASE_URL: 'https://pay.example.com' }, { modules: [registerSkillRoutes] });
  });
  after(async () => {
    await api.close();
    await chain.close();
    await env.close();
  });

  const enc = (o: unknown, how: 'base64' | 'base64url' = 'base64url') => encodeURIComponent(Buffer.from(JSON.stringify(o)).toString(how));
  const skill = async (encoded: string, url = api.url) => {
    const res = await fetch(`${url}/v1/skill/${encoded}`);
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };

  it('renders the document of a compact checkout link, with the exact base-unit amount', async () => {
    const session = { tm: USDC, r: recipient, g: gateway, a: '1.5', pf: 'Monthly', ar: true, mr: 12, tid: 'order-7781', su: 'https://shop.example/thanks', cu: 'https://shop.example/cart' };
    const { status, type, text } = await skill(enc(session));
    expect(status).to.equal(200);
    expect(type).to.equal('text/markdown; charset=utf-8');
    expect(text).to.match(/^# Skill: subscribe with 1\.5 USDC \(Monthly\)/);
    // the parameter table
    expect(text).to.include('| Parameter | Value | Meaning |');
    expect(text).to.include(`| Token mint (\`tm\`) | \`${USDC}\` | the SPL token paid; 6 decimals, read from the chain |`);
    expect(text).to.include('`1.5` `USDC` = `1500000` base units');
    expect(text).to.include(`| Recipient (\`r\`) | \`${recipient}\``);
    expect(text).to.include('| Max renewals (`mr`) | `12` |');
    expect(text).to.include('| Network | `solana:localnet` |');
    // the steps and their exact commands
    expect(text).to.include("curl -s 'https://pay.example.com/v1/assets/resolve?mint=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'");
    expect(text).to.include(`npx tributary pay 'https://pay.example.com/v1/skill/${enc(session)}' --wallet <path-to-payer-keypair.json>`);
    expect(text).to.include("curl -s 'https://pay.example.com/v1/subscriptions?trackingId=order-7781'");
    expect(text).to.include("curl -s -X POST 'https://pay.example.com/v1/tokens/issue'");
    for (const heading of ['## Parameters', '## Steps', '## When a step fails', '**Check the result**']) expect(text).to.include(heading);
    expect(text).to.include('open the success URL `https://shop.example/thanks`');
  });

  it('accepts spelled-out names in standard base64 and reads 9 decimals for wrapped SOL', async () => {
    const { status, text } = await skill(enc({ tokenMint: WSOL, recipient, gateway, amount: '0.25', paymentFrequency: 86400 }, 'base64'));
    expect(status).to.equal(200);
    expect(text).to.include('= `250000000` base units');
    expect(text).to.include('`Custom (every 86400 s)`');
  });

  it('refuses more decimal places than the mint has with 400', async () => {
    const res = await skill(enc({ tm: USDC, r: recipient, g: gateway, a: '1.0000001' }));
    expect(res.status).to.equal(400);
    const body = JSON.parse(res.text) as { success: boolean; error: string };
    expect(body.success).to.equal(false);
    expect(body.error).to.match(/decimal places/);
  });

  it('refuses a bad encoding or a missing field with 400', async () => {
    for (const bad of ['!!!', enc('just a string'), encodeURIComponent(Buffer.from('{nope').toString('base64url')), enc({ tm: USDC, r: recipient, a: '1' }), enc({ tm: USDC, r: recipient, g: gateway })]) {
      const res = await skill(bad);
      expect(res.status, bad).to.equal(400);
      expect(res.type).to.match(/application\/json/);
    }
  });

  it('answers 404 for a mint that is not on the chain, or an account that is not a mint', async () => {
    expect((await skill(enc({ tm: key('no-such-mint'), r: recipient, g: gateway, a: '1' }))).status).to.equal(404);
    expect((await skill(enc({ tm: gateway, r: recipient, g: gateway, a: '1' }))).status).to.equal(404);
  });

  it('answers 503 when the chain cannot be reached, and keeps decimals it already read', async () => {
    const offline = await startTestApi(env, { SOLANA_RPC_URL: 'http://127.0.0.1:9', SOLANA_RPC_TIMEOUT_MS: '500' }, { modules: [registerSkillRoutes] });
    try {
      const usdt = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
      expect((await skill(enc({ tm: usdt, r: recipient, g: gateway, a: '1' }), offline.url)).status).to.equal(503);
      // USDC's decimals were read above and are shared through Redis
      expect((await skill(enc({ tm: USDC, r: recipient, g: gateway, a: '1' }), offline.url)).status).to.equal(200);
    } finally {
      await offline.close();
    }
  });
});
