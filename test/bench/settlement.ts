/**
 * Settlement: the first of the month. 10,000 monthly subscriptions of a served
 * gateway fall due at one instant; the real scheduler (intents in Postgres, claims,
 * execute_payment signed as the gateway's signer and sent to the localnet over RPC,
 * confirmations) runs from before that instant until every one is executed. Figure:
 * executions per second, from the due instant to the last execution, as a ratio to the
 * localnet's raw rate in this run: execute_payment transactions of other policies of the
 * same kind (2,000 by default: a rate, not a backlog) signed and sent straight to the RPC by a plain loop at the same
 * concurrency (goal ≥ 0.5). Also the due → executed p50/p99, and exactly once checked
 * on chain (payment_count 1 on every policy) and in the intents.
 *
 * The localnet runs in a worker thread (settlement-chain.ts), as a chain runs apart from
 * the scheduler; the policies are made through its in-process fast path.
 */
import { Worker } from 'node:worker_threads';
import bs58 from 'bs58';
import { Keypair } from '@solana/web3.js';
import { sql } from 'kysely';
import { createTestEnv } from '../support/env.js';
import { createDb, type Db } from '../../infra/postgres/database.js';
import { createLogger } from '../../infra/log/logger.js';
import { readProgramAccounts, type AccountRead } from '../../infra/solana/accounts.js';
import { createRpcClient } from '../../infra/solana/rpc-client.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { policyDoc } from '../../projections/policies/doc.js';
import { chainIo, latestBlockhash, signExecution, type ChainIo, type ExecutionContext } from '../../commands/scheduler/chain.js';
import { delegateGateway } from '../../commands/scheduler/signers.js';
import { startScheduler } from '../../commands/scheduler/scheduler.js';
import type { LocalnetFixtures } from '../../infra/localnet/fixtures.js';
import type { ChainCommand, CreatedPolicy } from './settlement-chain.js';
import { report } from './harness.js';

const POLICIES = Number(process.env['BENCH_SETTLEMENT_POLICIES'] ?? 10_000);
const CONCURRENCY = Number(process.env['BENCH_SETTLEMENT_CONCURRENCY'] ?? 32);
const RAW = Number(process.env['BENCH_SETTLEMENT_RAW'] ?? Math.min(POLICIES, 2000));
const BATCH = Number(process.env['BENCH_SETTLEMENT_BATCH'] ?? 500);
const AMOUNT = '10000000';

interface ChainWorker { rpcUrl: string; fixtures: LocalnetFixtures; ask<T>(c: ChainCommand): Promise<T>; close(): Promise<void> }

async function startChainWorker(seed: string): Promise<ChainWorker> {
  // a worker's entry is loaded before tsx's hooks apply to it: the entry imports the TypeScript module
  const module = JSON.stringify(new URL('./settlement-chain.ts', import.meta.url).href);
  const entry = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${module}); })`;
  const worker = new Worker(entry, { eval: true, workerData: { seed } });
  const next = (): Promise<Record<string, unknown>> => new Promise((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    worker.once('error', onError);
    worker.once('message', (m: Record<string, unknown>) => {
      worker.off('error', onError);
      if (m['kind'] === 'error') reject(new Error(String(m['message'])));
      else resolve(m);
    });
  });
  const ready = await next() as { rpcUrl: string; fixtures: LocalnetFixtures };
  return {
    rpcUrl: ready.rpcUrl, fixtures: ready.fixtures,
    async ask<T>(c: ChainCommand) { const reply = next(); worker.postMessage(c); return await reply as T; },
    async close() { const reply = next(); worker.postMessage({ kind: 'close' }); await reply; await worker.terminate(); },
  };
}

/** The policies read model as the projector would hold it: what the scheduler reads due work from. */
async function seedReadModel(db: Db, policies: readonly CreatedPolicy[], gateway: string, dueAt: number): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  const rows = policies.map((p, i) => {
    const memo = Buffer.alloc(64);
    memo.write(p.memo);
    const policyType = { kind: 'Subscription', amount: AMOUNT, auto_renew: true, max_renewals: null, payment_frequency: 'Monthly', next_payment_due: String(dueAt) };
    const row = {
      address: p.address, policy_id: 1, user_payment: p.userPayment, owner: p.owner, token_mint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      gateway, recipient: p.recipient, variant: 'Subscription', policy_type: JSON.stringify(policyType), memo, tracking_id: p.memo,
      status: 'Active', total_paid: '0', total_output: null, extra: null, payment_count: 0, last_payment_at: null,
      last_payment_signature: null, next_payment_due: String(dueAt), created_at: now, updated_at: now, created_slot: 1000 + i,
      created_signature: 'bench', deleted: false, deleted_at: null,
    };
    return {
      ...row,
      doc: policyDoc('payment', { ...row, policy_id: '1', created_at: String(now), created_slot: String(row.created_slot), updated_at: String(now), policy_type: policyType }),
    };
  });
  for (let i = 0; i < rows.length; i += 1000) await db.insertInto('payment_policies').values(rows.slice(i, i + 1000)).execute();
  await sql`ANALYZE payment_policies`.execute(db);
}

/** The execution contexts of policies read in batches of 100 (gateway and config once). */
async function contexts(io: ChainIo, policies: readonly CreatedPolicy[], gateway: string): Promise<ExecutionContext[]> {
  const opts = { programId: io.programId, commitment: io.commitment };
  const found = (r: AccountRead | undefined): AccountRead & { kind: 'found' } => {
    if (r?.kind !== 'found') throw new Error(`bench account missing: ${r?.address}`);
    return r;
  };
  const [gw] = await answered(() => readProgramAccounts(io.rpc, [gateway], 'PaymentGateway', opts));
  const [config] = await answered(() => readProgramAccounts(io.rpc, [io.pdas.config()], 'ProgramConfig', opts));
  const out: ExecutionContext[] = [];
  for (let i = 0; i < policies.length; i += 100) {
    const slice = policies.slice(i, i + 100);
    const ps = await answered(() => readProgramAccounts(io.rpc, slice.map((p) => p.address), 'PaymentPolicy', opts));
    const ups = await answered(() => readProgramAccounts(io.rpc, slice.map((p) => p.userPayment), 'UserPayment', opts));
    slice.forEach((_, k) => out.push({ policy: found(ps[k]), userPayment: found(ups[k]), gateway: found(gw), config: found(config) }));
  }
  return out;
}

/**
 * The localnet's raw rate: sign and send each execute_payment straight to the RPC,
 * `concurrency` at a time; the rate counts what landed (paymentCounts), since a send
 * that got no answer under load may have landed or not.
 */
async function rawSends(io: ChainIo, ctxs: readonly ExecutionContext[], signer: Keypair, concurrency: number): Promise<number> {
  let blockhash = await answered(() => latestBlockhash(io));
  let hashAt = Date.now();
  let next = 0;
  let failed = 0;
  const t0 = performance.now();
  const worker = async (): Promise<void> => {
    for (let i = next++; i < ctxs.length; i = next++) {
      try {
        if (Date.now() - hashAt > 10_000) { hashAt = Date.now(); blockhash = await latestBlockhash(io); }
        const signed = signExecution(io, ctxs[i]!, signer, blockhash, null);
        await io.rpc.call('sendTransaction', [signed.wire, { encoding: 'base64', preflightCommitment: io.commitment }]);
      } catch (err) {
        failed += 1;
        if (failed <= 3) process.stdout.write(`    raw send failed: ${(err as Error).message.slice(0, 160)}\n`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - t0) / 1000;
  if (failed > 0) process.stdout.write(`  warning: ${failed} raw sends failed or got no answer\n`);
  return seconds;
}

/** A read the bench needs answered: the loaded localnet now and then drops a connection (fetch failed), so it is asked again. */
async function answered<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 500 * attempt));
    }
  }
}

async function paymentCounts(io: ChainIo, policies: readonly CreatedPolicy[]): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  for (let i = 0; i < policies.length; i += 100) {
    const reads = await answered(() => readProgramAccounts(io.rpc, policies.slice(i, i + 100).map((p) => p.address), 'PaymentPolicy', { programId: io.programId, commitment: io.commitment }));
    for (const r of reads) {
      const n = r.kind === 'found' ? Number(r.data['payment_count']) : -1;
      counts.set(n, (counts.get(n) ?? 0) + 1);
    }
  }
  return counts;
}

export async function benchSettlement(): Promise<void> {
  process.stdout.write(`settlement: ${POLICIES} monthly subscriptions due at one instant, concurrency ${CONCURRENCY}, claims of ${BATCH}\n`);
  const seed = 'bench-settlement';
  const env = await createTestEnv('bench_settlement');
  const chain = await startChainWorker(seed);
  const db = createDb(env.dbUrl, CONCURRENCY + 8, 'bench-settlement');
  try {
    const gw = chain.fixtures.gateways[0]!;
    const signer = Keypair.fromSecretKey(bs58.decode(gw.signerSecretKey));
    const t0 = performance.now();
    const served = (await chain.ask<{ policies: CreatedPolicy[] }>({ kind: 'create', count: POLICIES, tag: 'served', amount: AMOUNT })).policies;
    const raw = (await chain.ask<{ policies: CreatedPolicy[] }>({ kind: 'create', count: RAW, tag: 'raw', amount: AMOUNT })).policies;
    process.stdout.write(`  ${served.length + raw.length} policies created on the localnet's fast path in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);

    const config = loadConfig({
      ...env.env, LOG_LEVEL: 'silent', SOLANA_RPC_URL: chain.rpcUrl, SOLANA_CLUSTER: 'localnet', LOCALNET_SEED: seed,
      SCHEDULER_POLL_MS: '200', SCHEDULER_BATCH_SIZE: String(BATCH), SCHEDULER_CONCURRENCY: String(CONCURRENCY), SCHEDULER_LEASE_MS: '120000',
      SCHEDULER_UPCOMING_LEAD_SECONDS: '0',
    });
    const io = chainIo(createRpcClient({ url: chain.rpcUrl, timeoutMs: 30_000 }), config.solana.programId, 'confirmed');
    const dueAt = Math.floor(Date.now() / 1000) + 5;
    await chain.ask({ kind: 'due', policies: [...served, ...raw].map((p) => p.address), dueAt });
    await seedReadModel(db, served, gw.address, dueAt);
    await delegateGateway(db, { gateway: gw.address, authority: gw.authority, encryptionKey: config.keys.encryptionKey, source: 'fixtures', keypair: signer });

    const scheduler = startScheduler({ db, io, config, logger: createLogger('silent', 'bench-settlement'), nowMs: () => Date.now() });
    const executed = async () => Number((await sql<{ n: string }>`SELECT count(*)::text AS n FROM execution_intents WHERE status = 'executed'`.execute(db)).rows[0]?.n ?? 0);
    const deadline = Date.now() + Number(process.env['BENCH_SETTLEMENT_MAX_SECONDS'] ?? 1800) * 1000;
    let done = 0;
    while ((done = await executed()) < POLICIES && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    const endMs = Date.now();
    await scheduler.stop();
    const seconds = (endMs - dueAt * 1000) / 1000;
    const schedRate = done / seconds;

    const lag = (await sql<{ p50: string; p99: string; max: string }>`
      SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY lag_ms)::bigint::text AS p50,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY lag_ms)::bigint::text AS p99, max(lag_ms)::text AS max
      FROM execution_attempts WHERE outcome = 'executed'`.execute(db)).rows[0]!;
    const others = (await sql<{ outcome: string; n: string }>`SELECT outcome, count(*)::text AS n FROM execution_attempts WHERE outcome <> 'executed' GROUP BY outcome`.execute(db)).rows;
    const counts = await paymentCounts(io, served);

    const once = counts.get(1) ?? 0;
    const other = [...counts].filter(([k]) => k !== 1).map(([k, v]) => `${v} with payment_count ${k}`).join(', ');
    process.stdout.write(`  scheduler: ${done} executed in ${seconds.toFixed(1)} s from the due instant (${schedRate.toFixed(1)} exec/s)\n`);
    process.stdout.write(`  due → executed: p50 ${lag.p50} ms, p99 ${lag.p99} ms, max ${lag.max} ms\n`);
    process.stdout.write(`  exactly once: ${once} of ${served.length} policies with payment_count 1 on chain${other ? `; ${other}` : ''}; attempts not executed: ${others.map((o) => `${o.outcome} ${o.n}`).join(', ') || 'none'}\n`);

    const ctxs = await contexts(io, raw, gw.address);
    const rawSeconds = await rawSends(io, ctxs, signer, CONCURRENCY);
    const rawLanded = (await paymentCounts(io, raw)).get(1) ?? 0;
    const rawRate = rawLanded / rawSeconds;
    process.stdout.write(`  raw loop: ${rawLanded} of ${raw.length} landed in ${rawSeconds.toFixed(1)} s\n`);
    report({ name: `scheduled executions, due → ${done === POLICIES ? 'all ' : ''}${done} of ${POLICIES} executed`, value: schedRate, unit: 'exec/s', baseline: { name: `raw execute_payment sends @${CONCURRENCY}`, value: rawRate }, goal: 0.5 });
  } finally {
    await db.destroy();
    await chain.close();
    await env.close();
  }
}
