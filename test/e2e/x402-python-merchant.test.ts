/**
 * x402 beyond Node, as real processes: the Python example merchant (standard library
 * only, run with python3) protects /report through the facilitator of an API node bound to
 * a localnet started here; `tributary pay` gets 402, pays, and gets 200 with the content.
 * And the curl session of docs/protocol.md (commands/x402/facilitator/examples/curl) verifies and settles a Payment.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { ROOT, runCli, terminate, waitFor, type Proc } from '../support/process.js';
import { freePort } from '../support/ports.js';
import { startX402, type X402Harness } from '../integration/x402-harness.js';
import { call, gatewayJwt } from '../integration/x402-facilitator-support.js';

const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';

function startProcess(cmd: string, args: string[], env: Record<string, string>): Proc {
  const child = spawn(cmd, args, { cwd: ROOT, env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

describe('x402 beyond Node: the Python merchant and the curl session (real processes)', function () {
  this.timeout(120_000);
  let h: X402Harness;
  let merchant: Proc;
  let url = '';
  let key = '';
  let dir = '';

  before(async () => {
    h = await startX402('python');
    const gw = h.ln.fixtures.gateways[0]!;
    const jwt = await gatewayJwt(h, gw.address, gw.authority);
    key = (await call(h.api.url, 'POST', `/v1/gateway/${gw.address}/api-keys`, { label: 'python' }, { authorization: `Bearer ${jwt}` })).body.key;
    const port = await freePort();
    url = `http://127.0.0.1:${port}/report`;
    merchant = startProcess('python3', ['commands/x402/facilitator/examples/python/merchant.py'], {
      TRIBUTARY_URL: h.api.url, TRIBUTARY_API_KEY: key, MERCHANT_PORT: String(port), X402_SCHEME: 'deferred', X402_NETWORK: 'solana:localnet',
      X402_AMOUNT: '250000', X402_RECIPIENT: gw.authority, X402_GATEWAY: gw.address, X402_TOKEN_MINT: USDC_DEV,
    });
    await waitFor(async () => merchant.output().includes('listening'), 20_000, `the python merchant to listen: ${merchant.output()}`);
    dir = await mkdtemp(path.join(tmpdir(), 'x402-py-'));
  });
  after(async () => {
    if (merchant) await terminate(merchant);
    await h.close();
  });

  it('answers 402 with the requirement the facilitator registered, then 200 after tributary pay', async () => {
    const unpaid = await fetch(url);
    expect(unpaid.status).to.equal(402);
    const body = (await unpaid.json()) as any;
    expect(body.accepts[0]).to.include({ scheme: 'deferred', amount: 250_000, resource: url });
    expect(body.accepts[0].id).to.match(/^[0-9a-f]{32}$/);
    expect(unpaid.headers.get('payment-required')).to.contain(`id=${body.accepts[0].id}`);

    const wallet = h.payer();
    const keyFile = path.join(dir, 'id.json');
    await writeFile(keyFile, JSON.stringify([...wallet.secretKey]));
    const txs = h.txCount();
    const r = await runCli(['pay', url, '--wallet', keyFile, '--rpc', h.ln.rpcUrl], { LOG_LEVEL: 'silent' });
    expect(r.code, r.output).to.equal(0);
    expect(r.output).to.match(/paid: deferred on solana:localnet: 250000/);
    expect(r.output).to.contain('HTTP 200');
    expect(r.output).to.contain("the python merchant's daily report");
    expect(h.txCount()).to.equal(txs + 1);
    const listed = await call(h.api.url, 'GET', '/v1/x402/discovery/resources');
    expect(listed.body.items.map((i: any) => i.resource)).to.include(url);
  });

  it('refuses a forged Payment with 402 and the reason, sending nothing', async () => {
    const accepts = ((await (await fetch(url)).json()) as any).accepts;
    const built = await buildPayment(accepts[0], { wallet: h.payer(), rpc: h.rpc });
    const payload = JSON.parse(Buffer.from(built.header, 'base64').toString());
    const tx = Buffer.from(payload.payload.serializedTransaction, 'base64');
    tx[10] = tx[10]! ^ 1;
    payload.payload.serializedTransaction = tx.toString('base64');
    const txs = h.txCount();
    const r = await fetch(url, { headers: { payment: Buffer.from(JSON.stringify(payload)).toString('base64') } });
    expect(r.status).to.equal(402);
    expect(((await r.json()) as any).error).to.match(/does not verify/);
    expect(h.txCount()).to.equal(txs);
  });

  it('runs the documented curl session: verify (nothing sent), then settle (sent once, a JWT)', async () => {
    const accepts = ((await (await fetch(url)).json()) as any).accepts;
    const built = await buildPayment(accepts[0], { wallet: h.payer(), rpc: h.rpc });
    const txs = h.txCount();
    const p = startProcess('sh', ['commands/x402/facilitator/examples/curl/verify-and-settle.sh'], {
      TRIBUTARY_URL: h.api.url, TRIBUTARY_API_KEY: key, PAYMENT: built.header, REQUIREMENTS: JSON.stringify(accepts[0]),
    });
    expect(await p.exited, p.output()).to.equal(0);
    const [, verify, settle] = p.output().split(/== \w+\n/);
    expect(JSON.parse(verify!)).to.deep.equal({ isValid: true, payer: built.transaction.message.staticAccountKeys[0]!.toBase58() });
    const s = JSON.parse(settle!);
    expect(s).to.include({ success: true, network: 'solana:localnet', transaction: built.signature, policy: built.policyAddress });
    expect(s.jwt).to.be.a('string');
    expect(h.txCount()).to.equal(txs + 1);
  });
});
