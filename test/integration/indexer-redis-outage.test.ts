/**
 * A Redis restart during the workload loses no event and duplicates none: the indexer
 * waits the outage out and resumes from its cursor. Runs a private redis-server (with an
 * append-only file, as a production Redis keeps the stream) so it can be stopped.
 */
import { expect } from 'chai';
import pino from 'pino';
import { loadConfig } from '../../src/kernel/config/config.js';
import { parseEvent } from '../../src/kernel/events/envelope.js';
import { startIndexer } from '../../infra/indexer/index.js';
import { createRedis, streamKeys } from '../../infra/redis/client.js';
import { startLocalnet } from '../../infra/localnet/index.js';
import { startRedisServer } from '../support/redis-server.js';

describe('indexer through a Redis restart', function () {
  this.timeout(60_000);

  it('holds every ledger event exactly once after Redis was down for 2 s', async () => {
    const server = await startRedisServer();
    const ln = await startLocalnet({ port: 0, seed: 'redis-outage', rate: 60 });
    const url = server.url;
    const redis = createRedis({ url, sentinels: [], sentinelName: '' });
    redis.on('error', () => undefined);
    const config = loadConfig({ SOLANA_RPC_URL: ln.rpcUrl, SOLANA_WS_URL: ln.wsUrl, REDIS_URL: url, REDIS_PREFIX: 'outage:', INDEXER_BACKFILL_INTERVAL_MS: '1000' });
    const indexer = await startIndexer({ config, redis, logger: pino({ level: 'silent' }) });
    try {
      await new Promise((r) => setTimeout(r, 1_500));
      await server.stop();
      await new Promise((r) => setTimeout(r, 2_000));
      await server.start();
      await new Promise((r) => setTimeout(r, 1_500));
      const ledger = ln.ledger();
      await indexer.settled();
      const entries = await redis.xrange(streamKeys('outage:').events, '-', '+');
      const ids = entries.map(([, f]) => parseEvent(f[1] ?? '').id);
      expect(new Set(ids).size).to.equal(ids.length);
      const have = new Set(ids);
      expect(ledger.filter((e) => !have.has(e.id)).map((e) => e.id)).to.deep.equal([]);
    } finally {
      await indexer.stop();
      await ln.close();
      redis.disconnect();
      await server.close();
    }
  });
});
