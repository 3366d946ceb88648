/**
 * The Payment transaction moves money on the localnet as the program does, driven by
 * `tributary pay` (a real process) against an API node bound to a localnet started here:
 * a deferred payment's first period lands in its own transaction and moves the
 * recipient's, the gateway fee recipient's and the protocol's token balances by exactly
 * the fee formulas; the unfunded wallet is refused with the program's reason and no JWT;
 * and a short emergency pause is waited out.
 */
import { expect } from 'chai';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Keypair, PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { deriveActors } from '../../infra/localnet/genesis.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { pdas } from '../../infra/localnet/keys.js';
import { submitTransaction } from '../../infra/localnet/submit.js';
import { signedTransaction } from '../../infra/localnet/transactions.js';
import { associatedTokenAddress } from '../../src/kernel/domain/spl-token.js';
import { runCli, startCli, waitFor } from '../support/process.js';
import { dataOf } from '../support/anchor-events.js';
import { DEMO_PATH, startX402, type X402Harness } from '../integration/x402-harness.js';

const bps = (x: bigint, b: bigint): bigint => (x * b) / 10_000n;

describe('x402 settlement moves tokens on the localnet (tributary pay, real process)', function () {
  this.timeout(120_000);
  let h: X402Harness;
  let dir: string;
  let url: string;
  const env = () => ({ LOG_LEVEL: 'silent' });
  const keyFile = async (k: Keypair, name: string): Promise<string> => {
    const file = path.join(dir, name);
    await writeFile(file, `${bs58.encode(k.secretKey)}\n`);
    return file;
  };
  const balance = async (owner: string, mint: string): Promise<bigint> => {
    const r = await h.rpc.call<{ value: { amount: string } }>('getTokenAccountBalance', [associatedTokenAddress(owner, mint)]).catch(() => undefined);
    return BigInt(r?.value.amount ?? 0);
  };
  const setPause = (paused: boolean): void => {
    const admin = deriveActors(h.seed).admin;
    const tx = signedTransaction(admin, [], [tributaryIx('set_emergency_pause', { admin: admin.publicKey, config: pdas.config() }, { paused })], h.ln.chain.latestBlockhash().blockhash);
    const out = submitTransaction(h.ln.chain, tx, { verifySignatures: true, commit: true });
    expect(out.kind === 'executed' && out.result.err === null).to.equal(true);
  };

  before(async () => {
    h = await startX402('settle_cli');
    url = `${h.api.url}${DEMO_PATH}`;
    dir = await mkdtemp(path.join(tmpdir(), 'x402-settle-'));
  });
  after(async () => { await h.close(); });

  it('pays the first period of a deferred payment in its transaction, by exactly the fee formulas', async () => {
    const [deferred] = await h.accepts();
    const r = deferred!;
    const gateway = await readProgramAccount(h.rpc, r.gateway, 'PaymentGateway', { programId: h.ln.fixtures.programId, commitment: 'confirmed' });
    const config = await readProgramAccount(h.rpc, pdas.config().toBase58(), 'ProgramConfig', { programId: h.ln.fixtures.programId, commitment: 'confirmed' });
    if (gateway.kind !== 'found' || config.kind !== 'found') throw new Error('gateway or config missing');
    const feeRecipient = gateway.data['fee_recipient'] as string;
    const protocol = config.data['fee_recipient'] as string;
    const payer = h.payer();
    const parties = [payer.publicKey.toBase58(), r.recipient, feeRecipient, protocol];
    const before = await Promise.all(parties.map((p) => balance(p, r.tokenMint)));

    const run = await runCli(['pay', url, '--wallet', await keyFile(payer, 'payer.b58'), '--rpc', h.ln.rpcUrl], env());
    expect(run.code, run.output).to.equal(0);
    expect(run.output).to.contain('HTTP 200');
    const after = await Promise.all(parties.map((p) => balance(p, r.tokenMint)));

    const amount = BigInt(r.amount);
    const totalFee = bps(amount, BigInt(gateway.data['gateway_fee_bps'] as number));
    const protocolCut = bps(totalFee, BigInt(config.data['protocol_share_bps'] as number));
    expect(after.map((a, i) => a - before[i]!)).to.deep.equal([-amount, amount - totalFee, totalFee - protocolCut, protocolCut]);
    // the demo's 1 USDC through Acme Streaming (100 bps), 20 % of the fee to the protocol
    expect(after.map((a, i) => a - before[i]!)).to.deep.equal([-1_000_000n, 990_000n, 8_000n, 2_000n]);

    const policy = /policy (\w{32,44})/.exec(run.output)?.[1];
    const records = h.ln.ledger().filter((e) => e.name === 'PaymentRecord' && e.data['payment_policy'] === policy);
    expect(records.map((e) => dataOf(e)['record_id'])).to.deep.equal([1]);
    const ata = await h.rpc.call<{ value: { data: { parsed: { info: Record<string, unknown> } } } }>('getAccountInfo', [associatedTokenAddress(payer.publicKey.toBase58(), r.tokenMint), { encoding: 'jsonParsed' }]);
    expect(ata.value.data.parsed.info['delegate']).to.equal(pdas.userPayment(payer.publicKey, new PublicKey(r.tokenMint)).toBase58());
  });

  it('refuses the unfunded wallet with the program\'s reason, and issues no JWT', async () => {
    const unfunded = h.ln.fixtures.wallets.find((w) => w.role === 'unfunded')!;
    const k = Keypair.fromSecretKey(bs58.decode(unfunded.secretKey));
    const cache = path.join(dir, 'unfunded-tokens.json');
    const landed = h.txCount();
    const run = await runCli(['pay', url, '--wallet', await keyFile(k, 'unfunded.b58'), '--rpc', h.ln.rpcUrl, '--token-cache', cache], env());
    expect(run.code, run.output).to.equal(1);
    expect(run.output).to.match(/the payment was refused \(HTTP 402\): the chain refused the transaction: InsufficientBalance \(6007\): Insufficient balance for payment/);
    expect(run.output).to.not.contain('HTTP 200');
    expect(h.txCount(), 'the preflight refused it: nothing landed').to.equal(landed);
    const kept = await readFile(cache, 'utf8').catch(() => '{}');
    expect(JSON.parse(kept)).to.deep.equal({});
  });

  it('waits out a short emergency pause and says so', async () => {
    const payer = h.payer();
    setPause(true);
    const proc = startCli(['pay', url, '--wallet', await keyFile(payer, 'paused.b58'), '--rpc', h.ln.rpcUrl], env());
    await waitFor(async () => proc.output().includes('the program is paused'), 30_000, 'the client reports the pause');
    expect(proc.output()).to.match(/ProgramPaused \(6000\): Program is paused/);
    setPause(false);
    const code = await proc.exited;
    expect(code, proc.output()).to.equal(0);
    expect(proc.output()).to.contain('HTTP 200');
  });
});
