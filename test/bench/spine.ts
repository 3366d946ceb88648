/**
 * Foundation benches: archive projection throughput vs a plain multi-row INSERT of the
 * same rows; replay throughput over a large archive; the events API vs pgbench running
 * the same SQL at the same concurrency.
 */
import { sql } from 'kysely';
import { createTestEnv } from '../support/env.js';
import { syntheticEvents } from '../support/synthetic-events.js';
import { appendRaw } from '../../infra/redis/event-stream.js';
import { serializeEvent } from '../../src/kernel/events/envelope.js';
import { archiveProjection, archiveRow } from '../../projections/archive/projection.js';
import { startProjection } from '../../projections/runner/runner.js';
import { createRedis } from '../../infra/redis/client.js';
import { createLogger } from '../../infra/log/logger.js';
import { groupInfo } from '../../infra/redis/group-lag.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { replayProjection } from '../../projections/replay.js';
import { startTestApi } from '../support/app.js';
import { report, routeVsPgbench, timed } from './harness.js';

const N = Number(process.env['BENCH_ARCHIVE_EVENTS'] ?? 100_000);
const REPLAY_N = Number(process.env['BENCH_REPLAY_EVENTS'] ?? 1_000_000);

export async function benchSpine(): Promise<void> {
  process.stdout.write('spine (issue 2)\n');
  const env = await createTestEnv('bench_spine');
  try {
    const events = syntheticEvents(N, 1);

    // Baseline: the same rows, plain multi-row INSERTs of 1000, straight into the table.
    const base = await timed(async () => {
      for (let i = 0; i < events.length; i += 1000) {
        await env.db.insertInto('events').values(events.slice(i, i + 1000).map(archiveRow)).execute();
      }
    });
    await sql`TRUNCATE events`.execute(env.db);

    // The archive projection through the stream, the runner, dedup and checkpoints.
    for (let i = 0; i < events.length; i += 5000) await appendRaw(env.redis, env.keys, events.slice(i, i + 5000).map(serializeEvent));
    const blocking = createRedis({ url: env.redisUrl, sentinels: [], sentinelName: '' });
    const run = await timed(async () => {
      const r = startProjection({ db: env.db, redis: env.redis, blockingRedis: blocking, keys: env.keys, logger: createLogger('silent', 'bench') }, archiveProjection, { batchSize: 1000, blockMs: 50, maxAttempts: 3, claimIdleMs: 60_000 });
      for (;;) {
        const g = (await groupInfo(env.redis, env.keys.events))[0];
        if (g && g.lag === 0 && g.pending === 0) break;
        await new Promise((res) => setTimeout(res, 20));
      }
      await r.stop();
    });
    blocking.disconnect();
    report({ name: `archive projection (${N} events)`, value: N / (run.ms / 1000), unit: 'events/s', baseline: { name: 'multi-row INSERT', value: N / (base.ms / 1000) }, goal: 0.5 });

    // Replay: fill the archive to REPLAY_N with generate_series-free bulk inserts, then replay each read model.
    const more = REPLAY_N - N;
    for (let from = N; from < N + more; from += 20_000) {
      const chunk = syntheticEvents(Math.min(20_000, N + more - from), 1, from);
      for (let i = 0; i < chunk.length; i += 2000) await env.db.insertInto('events').values(chunk.slice(i, i + 2000).map(archiveRow)).execute();
    }
    for (const p of PROJECTIONS.filter((x) => x.replayable)) {
      const r = await replayProjection(env.db, p, { waitMs: 1000 });
      report({ name: `replay ${p.name} (${REPLAY_N} archived events)`, value: r.events / (r.ms / 1000), unit: 'events/s' });
    }
    if (!PROJECTIONS.some((x) => x.replayable)) process.stdout.write('  replay: no replayable read model registered\n');

    // The events API at 50 connections vs pgbench on the same SQL.
    await sql`ANALYZE events`.execute(env.db);
    const api = await startTestApi(env, { LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '1000000000' });
    const uncached = await startTestApi(env, { LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '1000000000', READ_CACHE_TTL_MS: '0' });
    const path = '/v1/events?eventName=PaymentRecord&limit=100';
    await routeVsPgbench({
      name: `GET ${path}`, url: `${api.url}${path}`, uncachedUrl: `${uncached.url}${path}`, seconds: 10, goal: 0.5,
      sql: "SELECT id, name, signature, slot, block_time, ix_path, event_index, data FROM events WHERE name = 'PaymentRecord' ORDER BY slot DESC, seq DESC LIMIT 100 OFFSET 0",
      dbUrl: env.dbUrl, redis: env.redis, versionKey: env.keys.readVersion('archive'),
    });
    await uncached.close();
    await api.close();
  } finally {
    await env.close();
  }
}
