/**
 * Gauges read from shared state at scrape time: per-group lag and pending entries, the
 * stream's length, dead letters per projection, the outbox by state, the indexer's slot lag.
 */
import type { Registry } from 'prom-client';
import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import type { Config } from '../../src/kernel/config/config.js';
import type { StreamKeys } from '../../infra/redis/client.js';
import type { Db } from '../../infra/postgres/database.js';
import { groupInfo } from '../../infra/redis/group-lag.js';
import { snapshotGauges } from '../../infra/metrics/snapshot-gauges.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { indexerProgressKey, webhookOutcomesKey } from '../../src/kernel/names/index.js';

/** Where the indexer publishes its progress for scrapes (written by the indexer role). */
export { indexerProgressKey };

interface Snapshot {
  streamLength: number;
  groups: { name: string; lag: number; pending: number }[];
  dead: { group: string; n: number }[];
  slotLag: number | undefined;
  outbox: { state: string; n: number }[];
  outcomes: Record<string, string>;
}

/** Where the spine's figures are read: the stream and its groups in Redis, the read models. */
export interface SpineGaugeDeps { redis: Redis; keys: StreamKeys; dbRead: Db; config: Pick<Config, 'redis'> }

async function readSnapshot(ctx: SpineGaugeDeps): Promise<Snapshot> {
  const groups = (await groupInfo(ctx.redis, ctx.keys.events)).map((g) => ({ name: g.name, lag: g.lag ?? 0, pending: g.pending }));
  const dead = [];
  for (const group of [...PROJECTIONS.map((x) => x.name), 'notifier']) dead.push({ group, n: await ctx.redis.xlen(ctx.keys.deadLetters(group)) });
  const progress = await ctx.redis.hgetall(indexerProgressKey(ctx.config.redis.prefix));
  // Pending rows only: the partial index answers this cheaply at any table size.
  // fanned_out: first attempts of pushed events whose rows are not written yet, at most (the
  // fan-outs are the fast path's backlog: few rows, one per event)
  const outbox = await sql<{ n: string; f: string }>`
    SELECT (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending') AS n,
      (SELECT COALESCE(sum(cardinality(webhook_ids)), 0) FROM webhook_fanouts) AS f`
    .execute(ctx.dbRead).then((r) => [
      { state: 'pending', n: Number(r.rows[0]?.n ?? 0) },
      { state: 'fanned_out', n: Number(r.rows[0]?.f ?? 0) },
    ], () => []);
  return {
    streamLength: await ctx.redis.xlen(ctx.keys.events),
    groups,
    dead,
    slotLag: progress['slotLag'] === undefined ? undefined : Number(progress['slotLag']),
    outbox,
    outcomes: await ctx.redis.hgetall(webhookOutcomesKey(ctx.config.redis.prefix)),
  };
}

export function registerSpineGauges(registry: Registry, ctx: SpineGaugeDeps): void {
  // Several HTTP apps may share one context (tests); the gauges are registered once.
  if (registry.getSingleMetric('tributary_stream_length')) return;
  const gauge = snapshotGauges(registry, () => readSnapshot(ctx));
  gauge('tributary_stream_length', 'entries in the event stream', [], (g, s) => g.set(s.streamLength));
  gauge('tributary_projection_lag', 'stream entries not yet delivered to the group', ['group'], (g, s) => { for (const x of s.groups) g.set({ group: x.name }, x.lag); });
  gauge('tributary_projection_pending', 'entries delivered but not acknowledged', ['group'], (g, s) => { for (const x of s.groups) g.set({ group: x.name }, x.pending); });
  gauge('tributary_dead_letters', 'entries in the dead-letter stream', ['group'], (g, s) => { for (const x of s.dead) g.set({ group: x.group }, x.n); });
  gauge('tributary_webhook_outbox', 'webhook deliveries waiting in the outbox', ['state'], (g, s) => { for (const x of s.outbox) g.set({ state: x.state }, x.n); });
  gauge('tributary_webhook_outcomes_total', 'webhook deliveries finished by the cluster\'s workers, by outcome', ['outcome'], (g, s) => { for (const [o, n] of Object.entries(s.outcomes)) g.set({ outcome: o }, Number(n)); });
  gauge('tributary_indexer_slot_lag', 'cluster slot minus the last slot the indexer processed', [], (g, s) => { if (s.slotLag !== undefined) g.set(s.slotLag); });
  gauge('tributary_scrape_shared_ok', '1 when the shared-state gauges were read in this scrape', [], (g) => g.set(1));
}
