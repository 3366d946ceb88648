/**
 * The indexer role: Tributary events from the chain into the Redis stream.
 *
 * Every trigger (start, a logs notification, a websocket (re)subscription, the periodic
 * timer) asks for a catch-up round; rounds never overlap, and triggers arriving during
 * one coalesce into one more round. A notified signature the RPC does not list yet
 * (nodes index signatures a little after notifying) earns a few quick extra rounds.
 * Because every path goes through the cursor, a crash, a dropped websocket or a Redis
 * restart loses nothing: the next round starts where the stream is known complete. The
 * cursor also keeps two indexers from appending a transaction twice: an append is refused
 * once another writer moved the cursor, and that round ends early, to be followed at once
 * by one from the stored cursor.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../../src/kernel/config/config.js';
import { streamKeys } from '../redis/client.js';
import { createChainReader } from '../solana/chain-reader.js';
import { subscribeLogs } from '../solana/logs-subscription.js';
import { createRpcClient, type RpcClient } from '../solana/rpc-client.js';
import { catchUp } from './catch-up.js';
import { sleep, StoppedError } from './retry.js';
import { newCounters, type IndexerStats } from './stats.js';

export type { IndexerStats } from './stats.js';

export interface IndexerDeps {
  config: Pick<Config, 'solana' | 'redis' | 'indexer'>;
  redis: Redis;
  logger: Logger;
  rpc?: RpcClient;
  /** transactions fetched per step (default INDEXER_BATCH_SIZE) */
  concurrency?: number;
  /** how often the cluster slot is polled for the lag figure (default 2 s) */
  slotPollMs?: number;
}

export interface RunningIndexer {
  stop(): Promise<void>;
  stats(): IndexerStats;
  /** resolves after the next complete catch-up round (tests and readiness checks) */
  settled(): Promise<void>;
}

const RECENT_LIMIT = 20_000;
const LIVE_RETRIES = 8;

export async function startIndexer(deps: IndexerDeps): Promise<RunningIndexer> {
  const { solana, redis: redisConfig, indexer } = deps.config;
  const log = deps.logger.child({ role: 'indexer' });
  const abort = new AbortController();
  const rpc = deps.rpc ?? createRpcClient({ url: solana.rpcUrl, timeoutMs: solana.rpcTimeoutMs });
  const reader = createChainReader(rpc, { commitment: solana.commitment, logger: log, signal: abort.signal });
  const counters = newCounters();
  const recent = new Set<string>();
  const awaitingLive = new Map<string, number>();
  let dirty = false;
  let loop: Promise<void> | undefined;
  let waiters: (() => void)[] = [];

  const remember = (signature: string): void => {
    recent.add(signature);
    awaitingLive.delete(signature);
    if (recent.size > RECENT_LIMIT) recent.delete(recent.values().next().value as string);
  };

  /** One catch-up round; false when another writer's cursor move ended it early (not complete). */
  const round = async (): Promise<boolean> => {
    const clusterSlot = await reader.getSlot();
    counters.clusterSlot = Math.max(counters.clusterSlot, clusterSlot);
    const r = await catchUp({
      reader, redis: deps.redis, keys: streamKeys(redisConfig.prefix), prefix: redisConfig.prefix, programId: solana.programId,
      pageSize: indexer.pageSize, concurrency: deps.concurrency ?? indexer.batchSize, batchRequests: indexer.batchRequests, counters, signal: abort.signal, logger: log, onHandled: remember,
    });
    counters.catchUpRounds += 1;
    if (r.refused) return false;
    counters.syncedSlot = Math.max(counters.syncedSlot, clusterSlot);
    return true;
  };

  const runLoop = async (): Promise<void> => {
    while (dirty && !abort.signal.aborted) {
      dirty = false;
      // only rounds that begin after a settled() call may answer it
      const answering = waiters;
      waiters = [];
      try {
        if (await round()) {
          answering.forEach((w) => w());
        } else {
          // the stream is complete only up to the other writer's cursor: go on from it at once
          waiters.push(...answering);
          dirty = true;
        }
      } catch (err) {
        waiters.push(...answering);
        if (err instanceof StoppedError || abort.signal.aborted) return;
        counters.catchUpErrors += 1;
        log.error({ err: (err as Error).message }, 'catch-up round failed; retrying');
        await sleep(1_000, abort.signal);
        dirty = true;
      }
      for (const [sig, tries] of awaitingLive) {
        if (tries >= LIVE_RETRIES) awaitingLive.delete(sig);
        else awaitingLive.set(sig, tries + 1);
      }
      if (!dirty && awaitingLive.size > 0) {
        await sleep(250, abort.signal);
        dirty = true;
      }
    }
  };

  const request = (): void => {
    dirty = true;
    if (loop || abort.signal.aborted) return;
    loop = runLoop().finally(() => {
      loop = undefined;
      if (dirty && !abort.signal.aborted) request();
    });
  };

  const subscription = subscribeLogs({
    wsUrl: solana.wsUrl,
    mentions: solana.programId,
    commitment: solana.commitment,
    logger: log,
    onSubscribed: () => {
      log.info('logs subscription active; repairing any gap');
      request();
    },
    onLogs: (n) => {
      counters.clusterSlot = Math.max(counters.clusterSlot, n.slot);
      if (n.err !== null || recent.has(n.signature)) return;
      awaitingLive.set(n.signature, awaitingLive.get(n.signature) ?? 0);
      request();
    },
  });
  const periodic = setInterval(request, indexer.backfillIntervalMs);
  const slotPoll = setInterval(() => {
    reader.getSlot().then((s) => (counters.clusterSlot = Math.max(counters.clusterSlot, s)), () => undefined);
  }, deps.slotPollMs ?? 2_000);
  request();

  return {
    stats: () => ({
      ...counters,
      slotLag: Math.max(0, counters.clusterSlot - counters.syncedSlot),
      websocketConnected: subscription.connected(),
      websocketReconnects: subscription.reconnects(),
    }),
    settled: () => new Promise<void>((resolve) => {
      waiters.push(resolve);
      request();
    }),
    stop: async () => {
      abort.abort();
      clearInterval(periodic);
      clearInterval(slotPoll);
      await subscription.close();
      await loop?.catch(() => undefined);
      waiters.forEach((w) => w());
    },
  };
}
