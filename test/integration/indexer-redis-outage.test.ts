/**
 * A Redis restart during the workload loses no event and duplicates none: the indexer
 * waits the outage out and resumes from its cursor. Runs a private redis-server (with an
 * append-only file, as a production Redis keeps the stream) so it can be stopped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import pino from 'pino';
import { loadConfig } from '../../src/config/config.js';
import { parseEvent } from '../../src/events/envelope.js';
import { startIndexer } from '../../src/indexer/index.js';
import { createRedis, streamKeys } from '../../infra/redis/client.js';
import { startLocalnet } from '../../infra/localnet/index.js';

const freePort = (): Promise<number> => new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const port = (s.address() as { port: number }).port;
    s.close(() => resolve(port));
  });
});

function startRedis(port: number, dir: string): Promise<ChildProcess> {
  const p = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--dir', dir], { stdio: 'pipe' });
  return new Promise((resolve, reject) => {
    p.stdout?.on('data', (d: Buffer) => d.toString().includes('Ready to accept connections') && resolve(p));
    p.once('error', reject);
  });
}

const stopRedis = (p: ChildProcess): Promise<void> => new Promise((resolve) => {
  p.once('exit', () => resolve());
  p.kill('SIGTERM');
});

describe('indexer through a Redis restart', function () {
  this.timeout(60_000);

  it('holds every ledger event exactly once after Redis was down for 2 s', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tributary-redis-'));
    const port = await freePort();
    let server = await startRedis(port, dir);
    const ln = await startLocalnet({ port: 0, seed: 'redis-outage', rate: 60 });
    const url = `redis://127.0.0.1:${port}`;
    const redis = createRedis({ url, sentinels: [], sentinelName: '' });
    redis.on('error', () => undefined);
    const config = loadConfig({ SOLANA_RPC_URL: ln.rpcUrl, SOLANA_WS_URL: ln.wsUrl, REDIS_URL: url, REDIS_PREFIX: 'outage:', INDEXER_BACKFILL_INTERVAL_MS: '1000' });
    const indexer = await startIndexer({ config, redis, logger: pino({ level: 'silent' }) });
    try {
      await new Promise((r) => setTimeout(r, 1_500));
      await stopRedis(server);
      await new Promise((r) => setTimeout(r, 2_000));
      server = await startRedis(port, dir);
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
      await stopRedis(server);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
