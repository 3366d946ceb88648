/**
 * What the scheduler tests share: the x402 harness (a localnet without workload, an API
 * node serving the demo resource), the indexer and the projectors in-process so the
 * policies read model follows the chain, and schedulers and settlers started on demand
 * with the fixture gateway's signer delegated.
 */
import bs58 from 'bs58';
import { Keypair } from '@solana/web3.js';
import { loadConfig, type Config } from '../../src/kernel/config/config.js';
import { createLogger } from '../../infra/log/logger.js';
import { createRpcClient } from '../../infra/solana/rpc-client.js';
import { startIndexer, type RunningIndexer } from '../../infra/indexer/index.js';
import { startProjectorRole } from '../../src/app/roles/projector.js';
import type { RunningRole } from '../../src/app/roles/role.js';
import { chainIo, type ChainIo } from '../../commands/scheduler/chain.js';
import { delegateGateway } from '../../commands/scheduler/signers.js';
import { startScheduler, type RunningScheduler } from '../../commands/scheduler/scheduler.js';
import { startSettler, type RunningSettler } from '../../commands/settlement/settler.js';
import { createRelease } from '../../commands/x402/account-outstanding.js';
import type { RoomEmitter } from '../../commands/scheduler/lifecycle-events.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { dataOf } from '../support/anchor-events.js';

export interface SchedulerHarness {
  h: X402Harness;
  io: ChainIo;
  config: Config;
  gateway: string;
  /** the gateway's authority key (webhooks are registered under it) */
  authority: string;
  signer: Keypair;
  scheduler(opts?: { autoStart?: boolean; rooms?: RoomEmitter }): RunningScheduler;
  settler(opts?: { autoStart?: boolean }): RunningSettler;
  /** PaymentRecords of a policy on the chain, in order */
  records(policy: string): { amount: bigint; recordId: number; signature: string }[];
  close(): Promise<void>;
}

/** `readModel: false` runs no indexer and no projector: the policies read model stays empty; `faults`: the hostile localnet's. */
/**
 * The demo pay-as-you-go terms the settlement tests share: `price` a request, chunks up to
 * 30,000, 200,000 an hour, and usage charged as soon as any is metered, every `settleIntervalMs`.
 */
export function demoPaygEnv(price: bigint, settleIntervalMs: number): Record<string, string> {
  return {
    X402_DEMO_PAYG_PRICE: String(price), X402_DEMO_PAYG_MAX_CHUNK: '30000', X402_DEMO_PAYG_MAX_PER_PERIOD: '200000',
    X402_DEMO_PAYG_PERIOD_SECONDS: '3600', PAYG_SETTLE_THRESHOLD: '1', PAYG_SETTLE_INTERVAL_MS: String(settleIntervalMs),
  };
}

export async function startSchedulerHarness(
  tag: string, extra: Record<string, string> = {}, opts: { readModel?: boolean; faults?: string; faultsSeed?: string } = {},
): Promise<SchedulerHarness> {
  const h = await startX402(tag, extra, { ...(opts.faults ? { faults: opts.faults } : {}), ...(opts.faultsSeed ? { faultsSeed: opts.faultsSeed } : {}) });
  const config = loadConfig({
    ...h.env.env, ...h.overrides, SOLANA_RPC_URL: h.ln.rpcUrl, SCHEDULER_POLL_MS: '200', SCHEDULER_RETRY_MS: '300', PAYG_ABSENCE_CONFIRM_MS: '1000',
    SCHEDULER_LEASE_MS: '3000', X402_CONFIRM_TIMEOUT_MS: '5000', ...extra,
  });
  const logger = createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent', `test-${tag}`);
  const readModel = opts.readModel !== false;
  const indexer: RunningIndexer | undefined = readModel
    ? await startIndexer({ config: { ...config, indexer: { ...config.indexer, backfillIntervalMs: 500 } }, redis: h.env.redis, logger })
    : undefined;
  const projector: RunningRole | undefined = readModel ? await startProjectorRole(h.api.ctx) : undefined;
  const io = chainIo(createRpcClient({ url: h.ln.rpcUrl, timeoutMs: 5000 }), config.solana.programId, 'confirmed');
  const fixture = h.ln.fixtures.gateways[0]!;
  const secret = (fixture as { signerSecretKey?: string }).signerSecretKey ?? fixture.authoritySecretKey;
  const signer = Keypair.fromSecretKey(bs58.decode(secret));
  await delegateGateway(h.env.db, { gateway: fixture.address, authority: fixture.authority, encryptionKey: undefined, source: 'fixtures', keypair: signer });
  const running: { stop(): Promise<void> }[] = [];
  const deps = { db: h.env.db, io, config, logger, nowMs: () => Date.now(), release: createRelease(h.env.redis, config.redis.prefix), upto: { redis: h.env.redis, redisPrefix: config.redis.prefix } };
  return {
    h, io, config, gateway: fixture.address, authority: fixture.authority, signer,
    scheduler(opts = {}) {
      const s = startScheduler({ ...deps, ...(opts.rooms ? { rooms: opts.rooms } : {}) }, opts);
      running.push(s);
      return s;
    },
    settler(opts = {}) {
      const s = startSettler(deps, opts);
      running.push(s);
      return s;
    },
    records: (policy) => h.ln.ledger()
      .filter((e) => e.name === 'PaymentRecord' && e.data['payment_policy'] === policy)
      .map((e) => ({ amount: BigInt(dataOf(e)['amount'] as string), recordId: Number(dataOf(e)['record_id']), signature: e.signature })),
    async close() {
      for (const r of running) await r.stop();
      await projector?.stop();
      await indexer?.stop();
      await h.close();
    },
  };
}
