/**
 * `tributary pay` as a user runs it, a real process, against the demo resource of an API
 * node bound to a localnet started here: it pays on the 402 with a fixture wallet (key
 * given as a base58 file or a Solana CLI JSON keypair file), prints what it paid and the
 * content, and with --token-cache uses the kept JWT on the next run without paying.
 */
import { expect } from 'chai';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import bs58 from 'bs58';
import { runCli } from '../support/process.js';
import { DEMO_PATH, startX402, type X402Harness } from '../integration/x402-harness.js';

describe('tributary pay (real process) against /v1/x402/demo', function () {
  this.timeout(120_000);
  let h: X402Harness;
  let dir: string;
  let url: string;
  const env = () => ({ LOG_LEVEL: 'silent' });

  before(async () => {
    h = await startX402('pay_cli');
    url = `${h.api.url}${DEMO_PATH}`;
    dir = await mkdtemp(path.join(tmpdir(), 'x402-pay-'));
  });
  after(async () => { await h.close(); });

  it('pays a subscription with a base58 key file and prints the payment and the content', async () => {
    const spare = h.ln.fixtures.wallets.find((w) => w.role === 'spare')!;
    const keyFile = path.join(dir, 'wallet.b58');
    await writeFile(keyFile, `${spare.secretKey}\n`);
    const before = h.txCount();
    const r = await runCli(['pay', url, '--wallet', keyFile, '--rpc', h.ln.rpcUrl], env());
    expect(r.code, r.output).to.equal(0);
    expect(r.output).to.contain(`wallet ${spare.publicKey}`);
    expect(r.output).to.match(/paid: deferred on solana:localnet: 1000000 USDC/);
    expect(r.output).to.match(/policy \w{32,44}, transaction \w{87,88}/);
    expect(r.output).to.contain('HTTP 200');
    expect(r.output).to.contain('Tributary demo content');
    expect(h.txCount()).to.equal(before + 1);
  });

  it('pays as you go with a JSON keypair file, and the next run uses the kept JWT', async () => {
    const k = h.payer();
    const keyFile = path.join(dir, 'id.json');
    await writeFile(keyFile, JSON.stringify([...k.secretKey]));
    const cache = path.join(dir, 'tokens.json');
    const args = ['pay', url, '--wallet', keyFile, '--rpc', h.ln.rpcUrl, '--scheme', 'x402://payg', '--token-cache', cache];
    const first = await runCli(args, env());
    expect(first.code, first.output).to.equal(0);
    expect(first.output).to.match(/paid: x402:\/\/payg on solana:localnet: 10000 USDC \(smallest units\) per request/);
    expect(first.output).to.contain('"periodTotal":"10000"');
    const second = await runCli(args, env());
    expect(second.code, second.output).to.equal(0);
    expect(second.output).to.contain('used the kept JWT; nothing paid');
    expect(second.output).to.contain('"periodTotal":"20000"');
  });

  it('refuses a wallet that is not a key, naming the problem', async () => {
    const r = await runCli(['pay', url, '--wallet', bs58.encode(Buffer.alloc(10)), '--rpc', h.ln.rpcUrl], env());
    expect(r.code).to.equal(1);
    expect(r.output).to.contain('--wallet holds 10 bytes');
  });
});
