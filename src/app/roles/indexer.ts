/**
 * The indexer role: the chain's events into the stream (infra/indexer). Its progress is
 * published to Redis every few seconds so any API node's /metrics can report slot lag.
 */
import type { AppContext } from '../context.js';
import { startIndexer } from '../../../infra/indexer/index.js';
import { indexerProgressKey } from '../../kernel/names/index.js';
import type { RunningRole } from './role.js';

const PUBLISH_MS = 5000;

export async function startIndexerRole(ctx: AppContext): Promise<RunningRole> {
  const indexer = await startIndexer({ config: ctx.config, redis: ctx.redis, logger: ctx.logger });
  ctx.logger.info({ rpcUrl: ctx.config.solana.rpcUrl, commitment: ctx.config.solana.commitment }, 'indexer started');
  const key = indexerProgressKey(ctx.config.redis.prefix);
  const publish = setInterval(() => {
    const s = indexer.stats();
    ctx.redis
      .multi()
      .hset(key, { slotLag: s.slotLag, lastSlot: s.lastSlot, clusterSlot: s.clusterSlot, eventsAppended: s.eventsAppended, unknownDiscriminators: s.unknownDiscriminators, at: Date.now() })
      .expire(key, 60)
      .exec()
      .catch(() => undefined);
  }, PUBLISH_MS);
  return {
    name: 'indexer',
    async stop() {
      clearInterval(publish);
      await indexer.stop();
    },
  };
}
