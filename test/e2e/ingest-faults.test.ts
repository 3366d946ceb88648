/**
 * Ingest under faults, every process real: while `tributary localnet` runs its seeded
 * workload, the indexer process is killed with SIGKILL three times (and restarted), the
 * localnet drops every websocket, and Redis is stopped for 5 s. Afterwards the archive
 * holds every event of the ledger exactly once.
 *
 * Redis here is a private redis-server (test/support/redis-server.ts): the machine's
 * shared one serves every other test and is never stopped.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { cursorKey } from '../../src/indexer/cursor.js';
import { createRedis, type Redis } from '../../infra/redis/client.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startLocalnetProcess, type LocalnetProcess } from '../support/localnet-process.js';
import { freePortPair } from '../support/ports.js';
import { startCli, waitFor, type Proc } from '../support/process.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

const MAX_EVENTS = 5_000;
const RATE = 100;

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
      PROJECTIONS: 'archive', PROJECTOR_BLOCK_MS: '100', PROJECTOR_BATCH_SIZE: '1000', PROJECTOR_CLAIM_IDLE_MS: '2000',
    };
    indexer = startCli(['serve', '--role', 'indexer'], common);
    projector = startCli(['serve', '--role', 'projector'], common);
    ln = await startLocalnetProcess({ seed: 'ingest-faults', rate: RATE, maxEvents: MAX_EVENTS, port: rpcPort });
  });

  afterEach(function () {
    if (this.currentTest?.state !== 'failed') return;
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
  /** the running indexer moved its cursor past `since`: it appended events after the fault */
  const progress = async (since: string, what: string): Promise<string> => waitFor(async () => {
    const c = await cursor();
    return c !== '' && c !== since ? c : undefined;
  }, 60_000, `indexer progress ${what}`);
  const ledgerSize = async (): Promise<number> => (await ln!.state()).events;

  /** SIGKILL, then a new process; the cursor as the dead one left it */
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
    // progress is always measured from the cursor read after a fault, never before it:
    // a write landing between the read and the fault would pass for progress
    const faultsAt: Record<string, number> = {};
    await progress('', 'at start');

    faultsAt['kill -9 #1'] = await ledgerSize();
    await progress(await killIndexer(), 'after kill -9 #1');

    // the restarted indexer's socket may not be up yet: drop once it is there
    faultsAt['websockets dropped'] = await ledgerSize();
    const dropped = await waitFor(async () => {
      const n = await ln!.rpc<number>('tributary_dropWebsockets');
      return n > 0 ? n : undefined;
    }, 30_000, 'a websocket client to drop');
    expect(dropped).to.be.at.least(1);
    await progress(await cursor(), 'after the websocket drop');

    faultsAt['kill -9 #2'] = await ledgerSize();
    await progress(await killIndexer(), 'after kill -9 #2');

    faultsAt['redis stopped'] = await ledgerSize();
    await redisServer.stop();
    await new Promise((r) => setTimeout(r, 5_000));
    await redisServer.start();
    await progress(await cursor(), 'after the Redis outage');

    faultsAt['kill -9 #3'] = await ledgerSize();
    await progress(await killIndexer(), 'after kill -9 #3');

    const state = await ln!.workloadDone(120_000);
    const during = Object.entries(faultsAt).filter(([, n]) => n < state.events).map(([f]) => f);
    expect(during, 'every fault while the workload ran').to.deep.equal(Object.keys(faultsAt));

    const archived = async () => (await sql<{ n: string; d: string }>`SELECT count(*) AS n, count(DISTINCT id) AS d FROM events`.execute(env.db)).rows[0]!;
    await waitFor(async () => Number((await archived()).n) >= state.events, 90_000, `${state.events} archived events`);
    const ledger = await ln!.ledger();
    expect(ledger.length).to.equal(state.events);
    const { n, d } = await archived();
    expect(Number(n)).to.equal(ledger.length);
    expect(Number(d)).to.equal(ledger.length);
    const ids = new Set((await env.db.selectFrom('events').select('id').execute()).map((r) => r.id));
    expect(ledger.filter((e) => !ids.has(e.id)).map((e) => e.id), 'ledger events missing from the archive').to.deep.equal([]);
    process.stdout.write(`      ${ledger.length} events; faults at ledger sizes ${JSON.stringify(faultsAt)}\n`);
  });
});
