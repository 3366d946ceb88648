/**
 * Redis through Sentinel (REDIS_SENTINELS): a private redis-server, a replica of it and a
 * Sentinel monitoring them (infra/cluster/redis.ts, as `CLUSTER_SENTINEL=1 make cluster`
 * runs them), never the machine's shared Redis. A projector process and an API node
 * process get only the Sentinel's address (REDIS_URL points nowhere); events appended to
 * the stream are archived and served. After a Sentinel failover to the replica, both
 * processes find the new master through the Sentinel and go on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { freePort } from '../support/ports.js';
import { startCli, waitFor, type Proc } from '../support/process.js';
import { appendTestEvents, makeEvent } from '../support/anchor-events.js';
import { startRedisServer, startSentinel, waitRedisReady, waitSentinelMaster } from '../../infra/cluster/redis.js';
import type { Supervised } from '../../infra/cluster/child.js';
import { createRedis, streamKeys } from '../../infra/redis/client.js';

const MASTER = 'tributary-test';

describe('scaling: roles reach Redis through Sentinel (REDIS_SENTINELS)', function () {
  this.timeout(180_000);
  let env: TestEnv;
  let dir = '';
  const servers: Supervised[] = [];
  const procs: Proc[] = [];
  let viaSentinel: Redis;
  let apiUrl = '';
  let ports: { master: number; replica: number; sentinel: number };
  const keys = () => streamKeys(env.env['REDIS_PREFIX']!);

  before(async () => {
    env = await createTestEnv('sentinel');
    dir = mkdtempSync(path.join(tmpdir(), 'tributary-sentinel-'));
    ports = { master: await freePort(), replica: await freePort(), sentinel: await freePort() };
    servers.push(startRedisServer({ name: 'master', port: ports.master, dir: path.join(dir, 'master'), logFile: path.join(dir, 'master.log') }));
    servers.push(startRedisServer({ name: 'replica', port: ports.replica, dir: path.join(dir, 'replica'), logFile: path.join(dir, 'replica.log') }));
    await waitRedisReady(ports.master, 15_000);
    await waitRedisReady(ports.replica, 15_000);
    const r = new Redis({ port: ports.replica, host: '127.0.0.1' });
    await r.replicaof('127.0.0.1', ports.master);
    r.disconnect();
    servers.push(startSentinel({ name: 'sentinel', port: ports.sentinel, dir: path.join(dir, 'sentinel'), logFile: path.join(dir, 'sentinel.log'), masterName: MASTER, masterPort: ports.master }));
    await waitSentinelMaster(ports.sentinel, MASTER, ports.master, 15_000);

    const sentinelEnv = { REDIS_URL: 'redis://127.0.0.1:1', REDIS_SENTINELS: `127.0.0.1:${ports.sentinel}`, REDIS_SENTINEL_NAME: MASTER };
    viaSentinel = createRedis({ url: sentinelEnv.REDIS_URL, sentinels: [sentinelEnv.REDIS_SENTINELS], sentinelName: MASTER });
    viaSentinel.on('error', () => undefined);
    const common = { ...env.env, ...sentinelEnv, PROJECTOR_BLOCK_MS: '100', POOL_SYNC_INTERVAL_MS: '0', SOLANA_RPC_URL: 'http://127.0.0.1:9', SOLANA_CLUSTER: 'localnet' };
    const apiPort = await freePort();
    apiUrl = `http://127.0.0.1:${apiPort}`;
    procs.push(startCli(['serve', '--role', 'projector'], { ...common, PROJECTIONS: 'archive' }));
    procs.push(startCli(['serve', '--role', 'api'], { ...common, PORT: String(apiPort), HOST: '127.0.0.1' }));
    await waitFor(async () => (await fetch(`${apiUrl}/v1/health`)).ok, 60_000, `api through sentinel\n${procs[1]!.output()}`);
  });

  after(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGTERM');
    await Promise.all(procs.map((p) => p.exited));
    viaSentinel?.disconnect();
    for (const s of servers.reverse()) await s.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await env?.close();
  });

  const served = (signature: string) => waitFor(async () => {
    const r = await fetch(`${apiUrl}/v1/events?signature=${signature}`);
    return r.status === 200 ? await r.json() as { id: string } : undefined;
  }, 60_000, `event ${signature.slice(0, 8)} archived and served`);

  it('archives and serves events appended to the stream the Sentinel leads to', async () => {
    const e = makeEvent('PaymentRecord', { memo: 'sentinel-1' }, 'sentinel-1');
    await appendTestEvents({ redis: viaSentinel, keys: keys() }, [e]);
    expect((await served(e.signature)).id).to.equal(e.id);
    const master = new Redis({ port: ports.master, host: '127.0.0.1' });
    try {
      expect(await master.xlen(keys().events)).to.equal(1);
      const clients = (await master.client('LIST') as string).split('\n').filter((l) => l.includes('cmd=xreadgroup'));
      expect(clients.length, 'the projector blocks on the master').to.be.greaterThan(0);
    } finally {
      master.disconnect();
    }
  });

  it('follows a Sentinel failover to the replica', async () => {
    const sentinel = new Redis({ port: ports.sentinel, host: '127.0.0.1' });
    try {
      // the Sentinel learns the replica from the master's INFO (every 10 s at most)
      await waitFor(async () => {
        const replicas = await sentinel.call('SENTINEL', 'replicas', MASTER) as unknown[];
        return replicas.length > 0;
      }, 30_000, 'the sentinel to know the replica');
      await sentinel.call('SENTINEL', 'failover', MASTER);
      await waitSentinelMaster(ports.sentinel, MASTER, ports.replica, 30_000);
    } finally {
      sentinel.disconnect();
    }
    const e = makeEvent('PaymentRecord', { memo: 'sentinel-2' }, 'sentinel-2');
    await waitFor(async () => { await appendTestEvents({ redis: viaSentinel, keys: keys() }, [e]); return true; }, 30_000, 'an append to the new master');
    expect((await served(e.signature)).id).to.equal(e.id);
    const health = await (await fetch(`${apiUrl}/v1/health`)).json() as { data: { checks: { redis: boolean } } };
    expect(health.data.checks.redis).to.equal(true);
    const promoted = new Redis({ port: ports.replica, host: '127.0.0.1' });
    try {
      expect((await promoted.info('replication')).includes('role:master')).to.equal(true);
    } finally {
      promoted.disconnect();
    }
  });
});
