/**
 * The projector role: one runner per projection (all, or those named in PROJECTIONS),
 * each with a blocking connection of its own; a projection that has never run is first
 * built from the archive; the stream is trimmed below what every group acknowledged.
 */
import type { AppContext } from '../context.js';
import { createStreamReader } from '../../../infra/redis/client.js';
import { PROJECTIONS } from '../../../projections/registry.js';
import { startProjection, type RunningProjection } from '../../../projections/runner/runner.js';
import { trimAcknowledged } from '../../../infra/redis/group-lag.js';
import { bootstrapFromArchive } from '../../../projections/replay.js';
import { bumpReadVersions } from '../../../infra/cache/read-cache.js';
import type { Projection } from '../../../projections/runner/projection.js';
import type { RunningRole } from './role.js';

export function selectProjections(only: readonly string[]): Projection[] {
  if (only.length === 0) return [...PROJECTIONS];
  const unknown = only.filter((n) => !PROJECTIONS.some((p) => p.name === n));
  if (unknown.length > 0) throw new Error(`PROJECTIONS names unknown projections: ${unknown.join(', ')} (known: ${PROJECTIONS.map((p) => p.name).join(', ')})`);
  return PROJECTIONS.filter((p) => only.includes(p.name));
}

/** A projection added after the stream was trimmed starts from the archive, not from the stream. */
async function bootstrap(ctx: AppContext, p: Projection): Promise<void> {
  await bootstrapFromArchive(ctx.db, p, {
    starting: () => ctx.logger.info({ projection: p.name }, 'new projection: building it from the archive first'),
    committed: () => bumpReadVersions(ctx.redis, ctx.keys, p.name),
  });
}

export async function startProjectorRole(ctx: AppContext): Promise<RunningRole> {
  const { config, logger } = ctx;
  const selected = selectProjections(config.projector.only);
  // the stream's reads on connections that never send a read again after a reconnect (createStreamReader)
  const blocking = selected.map(() => createStreamReader(config.redis));
  const reads = createStreamReader(config.redis);
  for (const b of [...blocking, reads]) b.on('error', () => undefined);
  const running: RunningProjection[] = [];
  for (const [i, p] of selected.entries()) {
    await bootstrap(ctx, p);
    running.push(startProjection({ db: ctx.db, redis: ctx.redis, streamRedis: reads, blockingRedis: blocking[i]!, keys: ctx.keys, logger, dbUrl: config.db.url }, p, config.projector));
  }
  const groups = PROJECTIONS.map((p) => p.name);
  const trimmer = setInterval(() => {
    trimAcknowledged(ctx.redis, ctx.keys.events, groups).catch((err: Error) => logger.warn({ err: err.message }, 'stream trim failed'));
  }, config.projector.trimIntervalMs);
  logger.info({ projections: selected.map((p) => p.name) }, 'projector started');
  return {
    name: 'projector',
    async stop() {
      clearInterval(trimmer);
      await Promise.all(running.map((r) => r.stop()));
      for (const b of [...blocking, reads]) b.disconnect();
    },
  };
}
