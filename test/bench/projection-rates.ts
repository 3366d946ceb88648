/**
 * Build rates of every read model, live and replayed, beside the server-side insert
 * limit measured in the same run (insert-limit.ts):
 *   - live: the stream holds N events; each projection's runner (consumer group, parse,
 *     dedup, apply, checkpoint, ack) takes them from the first to the last, one model at a
 *     time so each has the machine to itself;
 *   - replay: the archive holds REPLAY_N events; each replayable model is rebuilt from it.
 */
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { serializeEvent } from '../../src/kernel/events/envelope.js';
import { appendRaw } from '../../infra/redis/event-stream.js';
import { createRedis } from '../../infra/redis/client.js';
import { createLogger } from '../../infra/log/logger.js';
import { groupInfo } from '../../infra/redis/group-lag.js';
import { startProjection } from '../../projections/runner/runner.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { replayProjection, type ReplaySteps } from '../../projections/replay.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import type { TestEnv } from '../support/env.js';
import { syntheticEvents } from '../support/synthetic-events.js';
import { settleWal, timed } from './harness.js';

/** the goal for every model, live and replayed, on this machine */
const GOAL = 25_000;

function line(name: string, rate: number, limit: number): void {
  const met = rate >= GOAL ? 'met' : 'NOT met';
  process.stdout.write(`  ${name}: ${rate.toFixed(0)} events/s vs server-side insert limit ${limit.toFixed(0)} rows/s → ratio ${(rate / limit).toFixed(2)}  (goal ≥ ${GOAL} events/s: ${met})\n`);
}

/** A replay's steps in seconds, for the line under its rate. */
export function stepsText(s: ReplaySteps): string {
  const sec = (ms: number) => (ms / 1000).toFixed(1);
  const where = s.fresh ? 'fresh tables' : 'in place';
  return `${where}: prepare ${sec(s.prepareMs)} s, apply ${sec(s.applyMs)} s, indexes ${sec(s.indexMs)} s, swap ${sec(s.swapMs)} s, dedup set ${sec(s.dedupMs)} s`;
}

/** BENCH_SPINE_MODELS: the models to measure, comma-separated (all by default) */
const MODELS = process.env['BENCH_SPINE_MODELS']?.split(',').map((x) => x.trim());
const chosen = (p: { name: string }) => MODELS === undefined || MODELS.includes(p.name);

/** stream entries per runner batch (one transaction each) */
const BATCH = Number(process.env['BENCH_PROJECTOR_BATCH'] ?? 2000);

async function drained(env: TestEnv, group: string): Promise<boolean> {
  const g = (await groupInfo(env.redis, env.keys.events)).find((x) => x.name === group);
  return g !== undefined && g.lag === 0 && g.pending === 0;
}

/** Events/s of one projection's runner over every entry of the stream. */
export async function liveRate(env: TestEnv, projectionName: string, events: number): Promise<number> {
  const projection = PROJECTIONS.find((p) => p.name === projectionName)!;
  const blocking = createRedis({ url: env.redisUrl, sentinels: [], sentinelName: '' });
  try {
    await settleWal(env.db);
    const run = await timed(async () => {
      const r = startProjection(
        { db: env.db, redis: env.redis, blockingRedis: blocking, keys: env.keys, logger: createLogger('silent', 'bench') },
        projection, { batchSize: BATCH, blockMs: 50, maxAttempts: 3, claimIdleMs: 60_000 },
      );
      while (!(await drained(env, projection.name))) await new Promise((res) => setTimeout(res, 20));
      await r.stop();
    });
    return events / (run.ms / 1000);
  } finally {
    blocking.disconnect();
  }
}

export async function appendToStream(env: TestEnv, events: readonly TributaryEvent[]): Promise<void> {
  for (let i = 0; i < events.length; i += 5000) await appendRaw(env.redis, env.keys, events.slice(i, i + 5000).map(serializeEvent));
}

/** Fills the archive from `from` up to `to` events with the synthetic history, set-based. */
export async function fillArchive(env: TestEnv, from: number, to: number): Promise<void> {
  for (let at = from; at < to; at += 20_000) {
    const chunk = syntheticEvents(Math.min(20_000, to - at), 1, at);
    await env.db.transaction().execute((trx) => archiveProjection.apply(trx, chunk));
  }
}

/**
 * Live rate of every model over `live` events, then replay rate of every replayable model
 * over `replay` archived events, each beside the rows/s Postgres takes alone, measured
 * before each phase (the machine is shared and its load moves).
 */
export async function benchProjectionRates(env: TestEnv, live: number, replay: number, measureLimit: () => Promise<number>): Promise<void> {
  let limit = await measureLimit();
  await appendToStream(env, syntheticEvents(live, 1));
  for (const p of PROJECTIONS.filter(chosen)) {
    const rate = await liveRate(env, p.name, live);
    line(`live ${p.name} (${live} events, batches of ${BATCH})`, rate, limit);
  }
  // the live archive run archived the first `live` events, unless it was left out
  await fillArchive(env, chosen(archiveProjection) ? live : 0, replay);
  limit = await measureLimit();
  for (const p of PROJECTIONS.filter((x) => x.replayable && chosen(x))) {
    await settleWal(env.db);
    const r = await replayProjection(env.db, p, { waitMs: 1000 });
    line(`replay ${p.name} (${replay} archived events)`, r.events / (r.ms / 1000), limit);
    process.stdout.write(`    ${stepsText(r.steps)}\n`);
  }
}
