/**
 * Ingest under faults, every process real: while `tributary localnet` runs its seeded
 * workload, the indexer process is killed with SIGKILL three times (and restarted), the
 * localnet drops every websocket (twice), and Redis is stopped for 5 s. Afterwards the
 * archive holds every event the ledger had by then exactly once, and nothing else; the
 * stream, too, holds each of them once.
 *
 * The workload runs on through the whole test (it is not capped): the faults take as long
 * as process start-ups take on a loaded machine, and must all land while events flow.
 *
 * Redis here is a private redis-server (test/support/redis-server.ts): the machine's
 * shared one serves every other test and is never stopped.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { parseEvent } from '../../src/kernel/events/envelope.js';
import { cursorKey } from '../../infra/indexer/cursor.js';
import { createRedis, type Redis } from '../../infra/redis/client.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startLocalnetProcess, type LocalnetProcess } from '../support/localnet-process.js';
import { freePortPair } from '../support/ports.js';
import { startCli, waitFor, type Proc } from '../support/process.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

// gentle enough that the localnet keeps answering on a loaded 2-core machine
const RATE = 50;

describe('ingest under faults: kill -9 of the indexer, dropped websockets, a Redis outage', function () {
  this.timeout(240_000);
  let env: TestEnv;
  let redisServer: RedisServer;
  let redis: Redis;
  let ln: LocalnetProcess | undefined;
  let common: Record<string, string>;
  let indexer: Proc;
  let projector: Proc | undefined;
  const exited: Proc[] = [];
  const timeline: string[] = [];

  before(async () => {
    env = await createTestEnv('ingest-faults');
    redisServer = await startRedisServer();
    redis = createRedis({ url: redisServer.url, sentinels: [], sentinelName: '' });
    redis.on('error', () => undefined);
    const rpcPort = await freePortPair();
    common = {
      ...env.env, REDIS_URL: redisServer.url, SOLANA_CLUSTER: 'localnet',
      SOLANA_RPC_URL: `http://127.0.0.1:${rpcPort}`, SOLANA_WS_URL: `ws://127.0.0.1:${rpcPort + 1}`,
      // gap repair on a slow timer: after a dropped websocket, the reconnect must do it
      INDEXER_BACKFILL_INTERVAL_MS: '20000',
      // a starved machine answers slowly; a short timeout would only add retried requests to its queue
      SOLANA_RPC_TIMEOUT_MS: '30000',
      // the stream is kept whole, to be checked as well as the archive
      STREAM_TRIM_INTERVAL_MS: '3600000',
      PROJECTIONS: 'archive', PROJECTOR_BLOCK_MS: '100', PROJECTOR_BATCH_SIZE: '1000', PROJECTOR_CLAIM_IDLE_MS: '2000',
    };
    indexer = startCli(['serve', '--role', 'indexer'], common);
    projector = startCli(['serve', '--role', 'projector'], common);
    ln = await startLocalnetProcess({ seed: 'ingest-faults', rate: RATE, maxEvents: 0, port: rpcPort });
  });

  afterEach(function () {
    if (this.currentTest?.state !== 'failed') return;
    process.stdout.write(`faults: ${timeline.join(', ')}\n`);
    for (const p of [...exited, indexer, projector, ln?.proc]) {
      if (p) process.stdout.write(`--- ${p.child.spawnargs.slice(3).join(' ')}\n${p.output().slice(-3000)}\n`);
    }
  });

  after(async () => {
    for (const p of [indexer, projector]) if (p && p.child.exitCode === null) p.child.kill('SIGTERM');
    await Promise.all([indexer?.exited, projector?.exited]);
    await ln?.stop();
    redis?.disconnect();
    await redisServer?.close();
    await env?.close();
  });

  const cursor = async (): Promise<string> => (await redis.get(cursorKey(env.prefix))) ?? '';
  /**
   * The indexer moved its cursor on from `since`, read after the fault (never before it:
   * a write landing between the read and the fault would pass for progress). After a
   * kill only the new process writes it; after the outage, only writes to the restarted
   * Redis count.
   */
  const progress = async (since: string, what: string): Promise<void> => {
    await waitFor(async () => {
      const c = await cursor();
      return c !== '' && c !== since;
    }, 60_000, `indexer progress ${what}`);
  };
  const ledgerSize = async (): Promise<number> => (await ln!.state()).events;
  const dropWebsockets = (): Promise<number> => waitFor(async () => {
    const n = await ln!.rpc<number>('tributary_dropWebsockets');
    return n > 0 ? n : undefined;
  }, 30_000, 'a websocket client to drop');

  /** SIGKILL, then a new process; returns the cursor as the dead one left it */
  async function killIndexer(): Promise<string> {
    indexer.child.kill('SIGKILL');
    await indexer.exited;
    expect(indexer.child.signalCode).to.equal('SIGKILL');
    exited.push(indexer);
    const left = await cursor();
    indexer = startCli(['serve', '--role', 'indexer'], common);
    return left;
  }

  it('archives every ledger event exactly once', async () => {
    const t0 = Date.now();
    const sizes: number[] = [];
    const mark = async (fault: string): Promise<void> => {
      sizes.push(await ledgerSize());
      timeline.push(`${fault} at ${((Date.now() - t0) / 1000).toFixed(0)} s (ledger ${sizes[sizes.length - 1]})`);
    };
    await waitFor(async () => (await ledgerSize()) >= 300, 60_000, 'the workload under way');
    await progress('', 'before the faults');

    await mark('kill -9 #1');
    await progress(await killIndexer(), 'after kill -9 #1');

    // the restarted indexer's socket may not be up yet: drop once it is there; finding a
    // socket to drop a second time proves the indexer reconnected
    await mark('websockets dropped');
    await dropWebsockets();
    await dropWebsockets();
    await progress(await cursor(), 'after the websocket drops');

    await mark('kill -9 #2');
    await progress(await killIndexer(), 'after kill -9 #2');

    await mark('redis stopped');
    await redisServer.stop();
    await new Promise((r) => setTimeout(r, 5_000));
    await redisServer.start();
    await progress(await cursor(), 'after the Redis outage');

    await mark('kill -9 #3');
    await progress(await killIndexer(), 'after kill -9 #3');
    await mark('after the faults');
    // the workload is not capped, so every fault fell within it; events still flowed after the last
    expect(sizes[sizes.length - 1], timeline.join(', ')).to.be.greaterThan(sizes[sizes.length - 2]!);

    // every event of the ledger as it is now, in the archive once; the workload runs on
    const ledger = await ln!.ledger();
    const wanted = ledger.map((e) => e.id);
    const archivedOf = async (ids: readonly string[]): Promise<number> =>
      Number((await sql<{ n: string }>`SELECT count(*) AS n FROM events WHERE id = ANY(${ids})`.execute(env.db)).rows[0]!.n);
    await waitFor(async () => (await archivedOf(wanted)) === wanted.length, 90_000, `the ${wanted.length} ledger events archived`);

    // and nothing the ledger does not hold, none twice (the archive keys on the id; the
    // stream does not); both read before the ledger they are checked against
    const archived = (await env.db.selectFrom('events').select('id').execute()).map((r) => r.id);
    const streamIds = (await redis.xrange(`${env.prefix}events`, '-', '+')).map(([, f]) => parseEvent(f[1] ?? '').id);
    const ledgerNow = new Set((await ln!.ledger()).map((e) => e.id));
    expect(archived.filter((id) => !ledgerNow.has(id)), 'archived events the ledger never emitted').to.deep.equal([]);
    const inStream = new Set(streamIds);
    expect(streamIds.length - inStream.size, 'events appended twice to the stream').to.equal(0);
    expect(streamIds.filter((id) => !ledgerNow.has(id)), 'stream events the ledger never emitted').to.deep.equal([]);
    expect(wanted.filter((id) => !inStream.has(id)), 'ledger events missing from the stream').to.deep.equal([]);
    process.stdout.write(`      ${ledger.length} events checked; ${timeline.join(', ')}; settled at ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
  });
});
