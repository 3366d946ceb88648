/**
 * The token walk-through a user (or the skill document) follows, with `tributary sign` as
 * a real process: challenge, sign the nonce with a key file, issue; the token is the
 * wallet's, and the same signature does not serve twice.
 */
import { expect } from 'chai';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { runCli } from '../support/process.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { insertGateway, insertPolicy, postJson, randomKey, subscription } from '../integration/auth-fixtures.js';

describe('tributary sign (real process) for POST /v1/tokens/issue', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let api: TestApi;

  before(async () => {
    env = await createTestEnv('tokens-sign-cli');
    api = await startTestApi(env, { SOLANA_RPC_URL: 'http://127.0.0.1:1' });
  });
  after(async () => { await api.close(); await env.close(); });

  it('signs the challenge nonce with a key file; the issued token is the wallet\'s, once', async () => {
    const k = Keypair.generate();
    const wallet = k.publicKey.toBase58();
    await insertPolicy(env.db, { owner: wallet, gateway: await insertGateway(env.db, randomKey()), policyType: subscription(Math.floor(Date.now() / 1000) + 86_400) });
    const dir = await mkdtemp(path.join(tmpdir(), 'sign-'));
    const keyFile = path.join(dir, 'id.json');
    await writeFile(keyFile, JSON.stringify([...k.secretKey]));
    const { nonce } = (await (await postJson(`${api.url}/v1/tokens/challenge`, { walletPublicKey: wallet })).json()) as { nonce: string };
    const r = await runCli(['sign', nonce, '--wallet', keyFile], { LOG_LEVEL: 'silent' });
    expect(r.code, r.output).to.equal(0);
    // stdout is the signature; stderr (merged here) says what was signed
    expect(r.output).to.include(`signing tributary-wallet-token for ${wallet}`);
    const signature = r.output.trim().split('\n').at(-1) ?? '';
    expect(bs58.decode(signature)).to.have.length(64);
    const res = await postJson(`${api.url}/v1/tokens/issue`, { walletPublicKey: wallet, nonce, signature });
    expect(res.status).to.equal(200);
    expect(((await res.json()) as { wallet: string }).wallet).to.equal(wallet);
    expect((await postJson(`${api.url}/v1/tokens/issue`, { walletPublicKey: wallet, nonce, signature })).status).to.equal(401);

    // another flow's message (an x402 payment proof) or bare text: not signed
    for (const text of [`tributary-x402|req-1|${api.url}/v1/x402/demo|-|1795000000`, 'hello']) {
      const refused = await runCli(['sign', text, '--wallet', keyFile], { LOG_LEVEL: 'silent' });
      expect(refused.code, refused.output).to.not.equal(0);
      expect(refused.output).to.match(/not signing/);
    }
  });
});
