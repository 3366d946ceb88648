/**
 * The last run's counts, kept in Redis per gateway so that any API node's /metrics shows
 * them whoever ran the reconciliation (the scheduler role's periodic run, the CLI, the
 * route). A gateway's entry is replaced by its next run.
 */
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { snapshotGauges } from '../../infra/metrics/snapshot-gauges.js';
import { CAUSES, type Cause } from './compare.js';

export const reconciliationKey = (prefix: string): string => `${prefix}reconciliation:last`;

interface Entry { at: number; counts: Record<Cause, number> }

export async function publishCounts(redis: Redis, prefix: string, runs: { gateway: string; counts: Record<Cause, number> }[], at: number): Promise<void> {
  if (runs.length === 0) return;
  await redis.hset(reconciliationKey(prefix), Object.fromEntries(runs.map((r) => [r.gateway, JSON.stringify({ at, counts: r.counts } satisfies Entry)])));
}

interface Snapshot { counts: Record<Cause, number>; lastRun: number | undefined }

async function readSnapshot(redis: Redis, prefix: string): Promise<Snapshot> {
  const all = await redis.hgetall(reconciliationKey(prefix));
  const counts = Object.fromEntries(CAUSES.map((c) => [c, 0])) as Record<Cause, number>;
  let lastRun: number | undefined;
  for (const raw of Object.values(all)) {
    const e = JSON.parse(raw) as Entry;
    for (const c of CAUSES) counts[c] += e.counts[c] ?? 0;
    lastRun = Math.max(lastRun ?? 0, e.at);
  }
  return { counts, lastRun };
}

/** tributary_reconciliation_differences{cause} and the time of the latest run, read at scrape time. */
export function registerReconciliationGauges(registry: Registry, ctx: { redis: Redis; config: { redis: { prefix: string } } }): void {
  if (registry.getSingleMetric('tributary_reconciliation_differences')) return;
  const gauge = snapshotGauges<Snapshot>(registry, () => readSnapshot(ctx.redis, ctx.config.redis.prefix));
  gauge('tributary_reconciliation_differences', 'differences between the chain and the service\'s ledgers found by the latest reconciliation of each gateway, by cause', ['cause'], (g, s) => {
    for (const c of CAUSES) g.set({ cause: c }, s.counts[c]);
  });
  gauge('tributary_reconciliation_last_run_seconds', 'unix time of the latest reconciliation run', [], (g, s) => {
    if (s.lastRun !== undefined) g.set(Math.floor(s.lastRun / 1000));
  });
}
