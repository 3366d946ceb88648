/**
 * The reconciliation (queries/reconciliation) wired to a process: its collaborators, the
 * API route, and the periodic run of the scheduler role. The scheduler role runs it, not
 * the API nodes: it already holds the chain connection of the money loop, there are few
 * of its processes (a Redis lock lets one run per interval), and a run's getTransaction
 * calls then never share a node's request budget. Every run, the route's and the CLI's
 * included, publishes its counts for /metrics.
 */
import type { AppContext } from './context.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import { reconcile, type ReconcileDeps } from '../../queries/reconciliation/reconcile.js';
import { DEFAULT_WINDOW_SECONDS, registerReconciliationRoute } from '../../queries/reconciliation/routes.js';
import type { RouteModule } from './node.js';

/** How often the scheduler role reconciles every served gateway (the last 30 days each time). */
export const RECONCILE_INTERVAL_MS = 10 * 60_000;

/** Usage metered this long ago and in no charge is lost: several settle intervals, five minutes at least. */
export const unsettledBoundMs = (settleIntervalMs: number): number => Math.max(5 * settleIntervalMs, 300_000);

export function reconcileDeps(ctx: AppContext, rpc: RpcClient): ReconcileDeps {
  const { solana } = ctx.config;
  return {
    db: ctx.dbRead, redis: ctx.redis, redisPrefix: ctx.config.redis.prefix,
    chain: { rpc, programId: solana.programId, commitment: solana.commitment },
    nowMs: () => ctx.clock.now(),
    unsettledBoundMs: unsettledBoundMs(ctx.config.scheduler.settleIntervalMs),
  };
}

export const registerReconciliationRoutes: RouteModule = (api, node) => {
  registerReconciliationRoute(api, {
    keyRing: node.keyRing, gatewayKeys: node.gatewayKeys, apiKeys: node.apiKeys, adminKey: node.config.keys.adminApiKey,
    reconcile: reconcileDeps(node, node.rpc),
  });
};

/** The scheduler role's periodic run: one process per interval across the cluster (SET NX). */
export function startPeriodicReconciliation(ctx: AppContext, rpc: RpcClient, intervalMs = RECONCILE_INTERVAL_MS): { stop(): Promise<void> } {
  const deps = reconcileDeps(ctx, rpc);
  const log = ctx.logger.child({ component: 'reconciliation' });
  const run = async (): Promise<void> => {
    const won = await ctx.redis.set(`${ctx.config.redis.prefix}reconciliation:lock`, String(process.pid), 'PX', Math.max(1000, intervalMs - 1000), 'NX');
    if (won !== 'OK') return;
    const r = await reconcile(deps, { since: Math.floor(deps.nowMs() / 1000) - DEFAULT_WINDOW_SECONDS });
    const found = r.differences.length;
    log[found > 0 ? 'warn' : 'info']({ counts: r.counts, gateways: r.gateways.length, policies: r.policies }, found > 0 ? 'reconciliation found differences (tributary reconcile lists them)' : 'reconciliation: chain and ledgers agree');
  };
  let inFlight: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (inFlight) return; // a run longer than the interval is not overlapped
    inFlight = run().catch((err: Error) => log.error({ err: err.message }, 'reconciliation run failed')).finally(() => { inFlight = undefined; });
  }, intervalMs);
  timer.unref();
  // a run in flight finishes (and publishes) before stop returns, never after
  return { stop: async () => { clearInterval(timer); await inFlight; } };
}
