/**
 * The money scripts, the idempotency lease, rate limits and the read cache on a private
 * Redis Cluster, with the keys the service builds: each script runs (no CROSSSLOT) and
 * keeps its guarantees, and the rate limit counters land on more than one master.
 */
import { expect } from 'chai';
import { startClusterRun, type ClusterRun, type ClusterTestEnv, type TestRedisCluster } from '../support/redis-cluster.js';
import { runScript } from '../../infra/redis/scripts.js';
import { METER_SCRIPT, meterKeys, raiseCounter } from '../../commands/x402/meter-slices.js';
import { usageCounterKey } from '../../commands/x402/metering.js';
import { accountOutstandingKey, accountPositionKey, createRelease } from '../../commands/x402/account-outstanding.js';
import { createIdempotency, type SettledResult } from '../../commands/x402/idempotency.js';
import { createRateLimit } from '../../infra/http/redis-rate-limit.js';
import { bumpReadVersions, createReadCache } from '../../infra/cache/read-cache.js';
import { rateLimitPrefix } from '../../src/kernel/names/index.js';

describe('money, limits and the read cache on a Redis Cluster', function () {
  this.timeout(120_000);
  let run: ClusterRun;
  let cluster: TestRedisCluster;
  let env: ClusterTestEnv;
  const p = () => env.prefix;

  before(async () => {
    run = await startClusterRun('rc-money');
    ({ cluster, env } = run);
  });
  after(async () => {
    await run?.close();
  });

  it('meters a period counter and an account in one script, and hands out disjoint slices up to the limit', async () => {
    const keys = meterKeys(usageCounterKey(p(), 'policyA', 100n), { owed: accountOutstandingKey(p(), 'accountA'), position: accountPositionKey(p(), 'accountA') });
    const exat = Math.floor(Date.now() / 1000) + 3600;
    const meter = (r = env.redis) => runScript(r, METER_SCRIPT, keys, [10, 50, exat, '0', 0, 1000, '0', '0', 600]);
    const other = env.connect();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => meter(i % 2 === 0 ? env.redis : other)));
    const admitted = results.filter((r) => r[0] === 1);
    expect(admitted).to.have.length(5);
    expect(admitted.map((r) => r[3]).sort((x, y) => x - y)).to.deep.equal([0, 10, 20, 30, 40]);
    expect(results.filter((r) => r[0] === 0)).to.have.length(3);
    expect(await env.redis.get(keys[2]!)).to.equal('50');
    await raiseCounter(env.redis, keys[0]!, 70n);
    expect(await env.redis.get(keys[0]!)).to.equal('70');
  });

  it('releases several accounts in one script, once per charge', async () => {
    await env.redis.set(accountOutstandingKey(p(), 'acc1'), '100');
    await env.redis.set(accountOutstandingKey(p(), 'acc2'), '40');
    const release = createRelease(env.redis, p());
    const charge = [{ userPayment: 'acc1', amount: 30n }, { userPayment: 'acc2', amount: 50n }];
    await Promise.all([release(charge, 'charge-1'), createRelease(env.connect(), p())(charge, 'charge-1')]);
    expect(await env.redis.get(accountOutstandingKey(p(), 'acc1'))).to.equal('70');
    expect(await env.redis.get(accountOutstandingKey(p(), 'acc2'))).to.equal('0');
  });

  it('settles a payment once when two nodes race on its idempotency lease', async () => {
    let settles = 0;
    const result: SettledResult = { paymentResponse: 'r', body: { jwt: 'j', message: 'ok' } };
    const settle = async () => { settles += 1; await new Promise((r) => setTimeout(r, 200)); return result; };
    const nodes = [env.redis, env.connect(), env.connect()].map((redis) => createIdempotency({ redis, keyPrefix: p(), leaseMs: 5000, ttlSeconds: 60, pollMs: 20 }));
    const got = await Promise.all(nodes.map((n) => n.once('sig-1', settle)));
    expect(settles).to.equal(1);
    for (const g of got) expect(g).to.deep.equal(result);
  });

  it('counts rate limits per key across nodes, on counters spread over the masters', async () => {
    const limits = ['standard', 'tokens-issue', 'gw-challenge', 'catalog:0', 'catalog:1', 'payer-challenge'];
    const masters = new Set<number>();
    for (const name of limits) {
      const keyPrefix = rateLimitPrefix(p(), name);
      const a = createRateLimit(env.redis, { keyPrefix, points: 3, durationSeconds: 60 });
      const b = createRateLimit(env.connect(), { keyPrefix, points: 3, durationSeconds: 60 });
      const decisions = await Promise.all([a, b, a, b, a].map((l) => l.consume('198.51.100.7')));
      expect(decisions.filter((d) => d.allowed), name).to.have.length(3);
      const counter = `${keyPrefix}:198.51.100.7`;
      expect(await env.redis.exists(counter), counter).to.equal(1);
      masters.add(await cluster.masterOf(counter));
    }
    expect(masters.size).to.be.greaterThan(1);
  });

  it('serves the read cache from versions kept on the cluster and expires it when a commit bumps them', async () => {
    const cache = createReadCache(env.redis, { ttlMs: 60_000, maxBytes: 1 << 20, keys: env.keys });
    let produced = 0;
    const get = () => cache.get(['merchant', 'payments'], 'page-1', async () => ({ n: ++produced }), () => 16, ['gw1']);
    const first = await get(); // names the generation, bypassed
    const second = await get();
    const third = await get();
    expect(third).to.deep.equal(second);
    expect(produced).to.equal(first.n === second.n ? 1 : 2);
    await bumpReadVersions(env.connect(), env.keys, 'merchant', ['gw1']);
    const after = await get();
    expect(after.n).to.equal(produced).and.be.greaterThan(second.n);
  });
});
