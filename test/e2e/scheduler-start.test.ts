/**
 * `tributary start` as a user runs it (one process: localnet without workload, indexer,
 * projectors, scheduler, API): a deferred payment of the demo with
 * X402_DEMO_FREQUENCY=Custom:10 is paid in its Payment transaction and then executed by
 * the scheduler every period with the fixture gateway's signer: at least 3 PaymentRecords
 * for the policy within 35 s, and `tributary status` reports the executions.
 */
import { expect } from 'chai';
import { readFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import bs58 from 'bs58';
import { Keypair } from '@solana/web3.js';
import { payAndFetch } from '../../src/app/index.js';
import { createRpcClient } from '../../infra/solana/rpc-client.js';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { freePort, freePortPair } from '../support/ports.js';
import { runCli, startCli, terminate, waitFor, type Proc } from '../support/process.js';

describe('tributary start: the scheduler charges a Custom:10 subscription every period', function () {
  this.timeout(150_000);
  let env: TestEnv;
  let proc: Proc | undefined;
  let vars: Record<string, string>;

  before(async () => {
    env = await createTestEnv('sched-start');
    const dir = await mkdtemp(path.join(tmpdir(), 'sched-start-'));
    const port = await freePort();
    const lnPort = await freePortPair();
    vars = {
      ...env.env, PORT: String(port), HOST: '127.0.0.1', LOCALNET_PORT: String(lnPort), LOCALNET_RATE: '0', LOCALNET_SEED: 'sched-start',
      LOCALNET_FIXTURES: path.join(dir, 'fixtures.json'), X402_DEMO_FREQUENCY: 'Custom:10', SCHEDULER_POLL_MS: '250', LOG_LEVEL: 'warn',
    };
    proc = startCli(['start'], vars);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/v1/health`).catch(() => undefined))?.ok, 60_000, 'the service up');
    vars['BASE'] = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    if (proc) await terminate(proc);
    await env?.close();
  });

  it('at least 3 PaymentRecords for the policy within 35 s of paying', async () => {
    const fixtures = JSON.parse(await readFile(vars['LOCALNET_FIXTURES']!, 'utf8')) as { rpcUrl: string; wallets: { role: string; secretKey: string }[] };
    const spare = fixtures.wallets.find((w) => w.role === 'spare')!;
    const started = Date.now();
    const r = await payAndFetch(`${vars['BASE']}/v1/x402/demo`, { wallet: Keypair.fromSecretKey(bs58.decode(spare.secretKey)), rpcUrl: fixtures.rpcUrl, scheme: 'deferred' });
    expect(r.response.status).to.equal(200);
    const policy = r.paid!.policy!;
    const rpc = createRpcClient({ url: fixtures.rpcUrl, timeoutMs: 5000 });
    const count = async () => {
      const a = await readProgramAccount(rpc, policy, 'PaymentPolicy', { programId: PROGRAM_ID, commitment: 'confirmed' });
      return a.kind === 'found' ? Number(a.data['payment_count']) : 0;
    };
    await waitFor(async () => (await count()) >= 3, 35_000, '3 payments of the policy');
    expect(Date.now() - started, 'within 35 s').to.be.below(35_000);
    const status = await runCli(['status'], vars);
    expect(status.code, status.output).to.equal(0);
    expect(status.output).to.match(/scheduler {2}due now \d+ {2}past due 0 {2}executed [2-9]/);
    expect(status.output).to.match(/signer {5}\w+ active \w+ [\d.]+ SOL/);
  });
});
