/**
 * x402://prepaid end to end on a localnet started here: a merchant's route (the
 * middleware, in this process, on the service's payment engine and Postgres ledger)
 * answers 402 offering a prepaid credit; `tributary pay` (a real process) pays it: one
 * transaction creates the OneTime policy and executes it, moving the credit to the
 * recipient by exactly the fee formulas; the kept JWT is admitted request after request,
 * each drawing its price from the credit, until the credit cannot cover one more: 402
 * again, and the next `tributary pay` buys a new credit.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import bs58 from 'bs58';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { associatedTokenAddress } from '../../src/kernel/domain/spl-token.js';
import { pdas } from '../../infra/localnet/keys.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { paymentRequired, x402Grant } from '../../commands/x402/middleware.js';
import { runCli } from '../support/process.js';
import { startX402, type X402Harness } from '../integration/x402-harness.js';

const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const bps = (x: bigint, b: bigint): bigint => (x * b) / 10_000n;

describe('x402://prepaid: tributary pay buys a credit, requests draw it down, then 402 again', function () {
  this.timeout(180_000);
  let h: X402Harness;
  let server: Server;
  let url: string;
  let dir: string;
  const env = { LOG_LEVEL: 'silent' };
  const balance = async (owner: string): Promise<bigint> => {
    const r = await h.rpc.call<{ value: { amount: string } }>('getTokenAccountBalance', [associatedTokenAddress(owner, USDC_DEV)]).catch(() => undefined);
    return BigInt(r?.value.amount ?? 0);
  };

  before(async () => {
    h = await startX402('prepaid_cli');
    dir = await mkdtemp(path.join(tmpdir(), 'x402-prepaid-'));
    const gw = h.ln.fixtures.gateways[0]!;
    const app = express();
    const guard = paymentRequired([{
      scheme: 'x402://prepaid', network: 'solana:localnet', amount: 30_000, pricePerRequest: 10_000,
      recipient: gw.authority, gateway: gw.address, tokenMint: USDC_DEV, description: 'a credit of three reports',
    }], h.api.node.x402);
    app.get('/report', guard, (_req, res) => { res.json({ report: 'prepaid report', grant: x402Grant(res) }); });
    server = await new Promise<Server>((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/report`;
  });
  after(async () => {
    await new Promise((r) => server?.close(r));
    await h?.close();
  });

  it('offers the credit in the 402 answer', async () => {
    const res = await fetch(url);
    expect(res.status).to.equal(402);
    const body = (await res.json()) as any;
    expect(body.accepts[0]).to.include({ scheme: 'x402://prepaid', amount: 30_000, pricePerRequest: 10_000, resource: url });
    expect(res.headers.get('payment-required')).to.contain('scheme=x402://prepaid');
  });

  it('pays the credit in one transaction by the fee formulas, draws it per request, then answers 402 and sells a new credit', async () => {
    const gw = h.ln.fixtures.gateways[0]!;
    const gateway = await readProgramAccount(h.rpc, gw.address, 'PaymentGateway', { programId: PROGRAM_ID, commitment: 'confirmed' });
    const config = await readProgramAccount(h.rpc, pdas.config().toBase58(), 'ProgramConfig', { programId: PROGRAM_ID, commitment: 'confirmed' });
    if (gateway.kind !== 'found' || config.kind !== 'found') throw new Error('gateway or config missing');
    const payer = h.payer();
    const parties = [payer.publicKey.toBase58(), gw.authority, gateway.data['fee_recipient'] as string, config.data['fee_recipient'] as string];
    const before = await Promise.all(parties.map(balance));
    const keyFile = path.join(dir, 'payer.b58');
    await writeFile(keyFile, `${bs58.encode(payer.secretKey)}\n`);
    const cache = path.join(dir, 'tokens.json');
    const args = ['pay', url, '--wallet', keyFile, '--rpc', h.ln.rpcUrl, '--scheme', 'x402://prepaid', '--token-cache', cache];

    const txs = h.txCount();
    const first = await runCli(args, env);
    expect(first.code, first.output).to.equal(0);
    expect(first.output).to.match(/paid: x402:\/\/prepaid on solana:localnet: 30000 USDC \(smallest units\) up front, a credit drawn by 10000 per request/);
    expect(first.output).to.contain('HTTP 200');
    expect(first.output).to.contain('"remaining":"20000"');
    expect(h.txCount(), 'one transaction: policy, approve and the credit executed').to.equal(txs + 1);

    const credit = 30_000n;
    const totalFee = bps(credit, BigInt(gateway.data['gateway_fee_bps'] as number));
    const protocolCut = bps(totalFee, BigInt(config.data['protocol_share_bps'] as number));
    const after = await Promise.all(parties.map(balance));
    expect(after.map((a, i) => a - before[i]!)).to.deep.equal([-credit, credit - totalFee, totalFee - protocolCut, protocolCut]);
    const policy = /policy (\w{32,44})/.exec(first.output)?.[1] ?? '';
    const acc = await readProgramAccount(h.rpc, policy, 'PaymentPolicy', { programId: PROGRAM_ID, commitment: 'confirmed' });
    expect(acc.kind === 'found' && acc.data['policy_type']).to.include({ kind: 'OneTime', amount: '30000' });
    expect(acc.kind === 'found' && acc.data['status']).to.equal('Completed');

    for (const remaining of ['10000', '0']) {
      const r = await runCli(args, env);
      expect(r.code, r.output).to.equal(0);
      expect(r.output).to.contain('used the kept JWT; nothing paid');
      expect(r.output).to.contain(`"remaining":"${remaining}"`);
    }
    const jwt = (JSON.parse(await readFile(cache, 'utf8')) as Record<string, string>)[url]!;
    const used = await fetch(url, { headers: { authorization: `Bearer ${jwt}` } });
    expect(used.status).to.equal(402);
    const refusal = (await used.json()) as any;
    expect(refusal.error).to.match(/the prepaid credit of 30000 is used up \(30000 used, this request costs 10000\)/);
    expect(refusal.accepts[0].scheme).to.equal('x402://prepaid');
    expect(await balance(payer.publicKey.toBase58()), 'drawing the credit moves nothing on chain').to.equal(after[0]);

    const again = await runCli(args, env);
    expect(again.code, again.output).to.equal(0);
    expect(again.output).to.match(/paid: x402:\/\/prepaid/);
    expect(again.output).to.contain('"remaining":"20000"');
    const second = /policy (\w{32,44})/.exec(again.output)?.[1];
    expect(second).to.not.equal(policy);
    expect(await balance(payer.publicKey.toBase58())).to.equal(after[0]! - credit);
  });
});
