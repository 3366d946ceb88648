/**
 * The spine on a private Redis Cluster (3 masters, 3 replicas): the keys each script and
 * MULTI uses share the deployment's hash tag while the keys used alone spread; events
 * appended on the cluster are projected into Postgres and reach Socket.IO clients on two
 * API nodes through the sharded adapter, once each.
 */
import { expect } from 'chai';
import { startClusterRun, type ClusterRun, type ClusterTestEnv, type TestRedisCluster } from '../support/redis-cluster.js';
import type { TestApi } from '../support/app.js';
import { connectClient, payment, type TestClient } from '../support/realtime-client.js';
import { appendTestEvents } from '../support/anchor-events.js';
import { waitFor } from '../support/process.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { groupPositions } from '../../infra/redis/group-lag.js';
import {
  cursorKey, rateLimitPrefix, realtimeKeys, sharedCacheKey, webhookPoppersKey, webhookRateKey, webhookReadyKey,
} from '../../src/kernel/names/index.js';
import { usageCounterKey } from '../../commands/x402/metering.js';
import { accountOutstandingKey, accountPositionKey } from '../../commands/x402/account-outstanding.js';

describe('the spine on a Redis Cluster', function () {
  this.timeout(180_000);
  let run: ClusterRun;
  let cluster: TestRedisCluster;
  let env: ClusterTestEnv;
  let a: TestApi;
  let b: TestApi;
  const clients: TestClient[] = [];
  const slot = async (key: string) => Number(await env.redis.call('CLUSTER', 'KEYSLOT', key));

  before(async () => {
    run = await startClusterRun('rc-spine', { realtime: true, projector: { maxAttempts: 3 } });
    ({ cluster, env } = run);
    [a, b] = run.realtime!.nodes;
  });
  after(async () => {
    for (const c of clients) c.close();
    await run?.close();
  });

  it('reads REDIS_CLUSTER_NODES as a Cluster client and makes the prefix a hash tag', () => {
    const config = loadConfig(env.env);
    expect(config.redis.clusterNodes).to.deep.equal(cluster.nodes);
    expect(config.redis.prefix).to.equal(`{${env.name}:}`).and.equal(env.prefix);
    expect(a.ctx.redis.isCluster).to.equal(true);
    expect(loadConfig({ ...env.env, REDIS_CLUSTER_NODES: '' }).redis.prefix).to.equal(`${env.name}:`);
  });

  it('keeps the keys of each script and MULTI in one slot and spreads the keys used alone', async () => {
    const p = env.prefix;
    const together = [
      env.keys.events, cursorKey(p), env.keys.deadLetters('payments'), env.keys.attempts('payments'), webhookReadyKey(p), webhookPoppersKey(p),
      env.keys.readGeneration, env.keys.readVersion('merchant'), env.keys.readScope('merchant', 3), realtimeKeys(p).emitted('e1'),
      usageCounterKey(p, 'policyA', 0n), accountOutstandingKey(p, 'accountB'), accountPositionKey(p, 'accountB'),
    ];
    const slots = new Set(await Promise.all(together.map(slot)));
    expect(slots.size).to.equal(1);
    const alone = [
      ...['standard', 'gw-challenge', 'tokens-issue', 'catalog:1'].map((l) => `${rateLimitPrefix(p, l)}127.0.0.1`),
      ...['a', 'b', 'c', 'd'].map((k) => sharedCacheKey(p, k)), ...[1, 2, 3, 4].map((w) => webhookRateKey(p, w)),
    ];
    const spread = new Set(await Promise.all(alone.map(slot)));
    expect(spread.size).to.be.greaterThan(4);
    for (const k of alone) expect(k.startsWith(`${env.name}:`), k).to.equal(true);
  });

  it('routes every command by its own key when many are in flight (XINFO, XPENDING, EVAL beside writes: no MOVED)', async () => {
    const errors: string[] = [];
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 200; i += 1) {
      calls.push(groupPositions(env.redis, env.keys.events).catch((e: Error) => errors.push(e.message)));
      calls.push(env.redis.set(`${env.name}:k${i}`, 'v', 'EX', 60).catch((e: Error) => errors.push(e.message)));
      calls.push(env.redis.xpending(env.keys.events, 'payments').catch((e: Error) => errors.push(e.message)));
      calls.push(env.redis.eval("return redis.call('GET', KEYS[1])", 1, cursorKey(env.prefix)).catch((e: Error) => errors.push(e.message)));
    }
    await Promise.all(calls);
    expect(errors.slice(0, 3)).to.deep.equal([]);
  });

  it('projects appended payments into Postgres and delivers each to sockets on both API nodes once', async () => {
    const tid = 'rc-both';
    const [ca, cb, other] = await Promise.all([connectClient(a.url), connectClient(b.url), connectClient(b.url)]);
    clients.push(ca, cb, other);
    await ca.subscribe(tid);
    await cb.subscribe(tid);
    await other.subscribe(`${tid}-other`);
    const events = [payment(tid), payment(tid), payment(tid)];
    await appendTestEvents(env, [events[0]!, events[0]!, events[1]!, events[2]!]); // a duplicate, as a re-read transaction gives
    for (const c of [ca, cb]) {
      const got = await c.waitPayments(3);
      expect(got.map((g) => (g.data as { signature: string }).signature).sort()).to.deep.equal(events.map((e) => e.signature).sort());
    }
    expect(other.payments).to.have.length(0);
    await waitFor(async () => Number((await env.db.selectFrom('payments').select((q) => q.fn.countAll().as('n')).executeTakeFirstOrThrow()).n) === 3, 30_000, 'three payments rows');
    const rows = await env.db.selectFrom('payments').select(['event_id', 'tracking_id']).execute();
    expect(rows.map((r) => r.event_id).sort()).to.deep.equal(events.map((e) => e.id).sort());
    expect(await env.redis.xlen(env.keys.events)).to.equal(4);
    await new Promise((r) => setTimeout(r, 500));
    expect(ca.payments).to.have.length(3);
    expect(cb.payments).to.have.length(3);
  });
});
