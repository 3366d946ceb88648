/**
 * The API node's read cache (infra/cache/read-cache.ts) on the real archive projection:
 * an answer is never older than an uncached read of the primary (the runner bumps the
 * version before acknowledging), concurrent misses share one query, a commit that bypasses
 * the runner is seen within the TTL, a replay expires cached answers, a Redis that does
 * not answer bypasses the cache, and a cached body revalidates with its ETag.
 */
import { get } from 'node:http';
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { waitFor } from '../support/process.js';
import { appendTestEvents, makeEvent } from '../support/anchor-events.js';
import { archiveProjection, archiveRow } from '../../projections/archive/projection.js';
import { startProjection, type RunningProjection } from '../../projections/runner/runner.js';
import { groupInfo } from '../../infra/redis/group-lag.js';
import { createRedis, type Redis } from '../../infra/redis/client.js';
import { createLogger } from '../../infra/log/logger.js';
import { bumpReadVersions, createReadCache } from '../../infra/cache/read-cache.js';
import { streamKeys } from '../../src/kernel/names/index.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import type { ApiEvent } from '../../queries/events/events-query.js';

const PATH = '/v1/events?eventName=PaymentRecord&limit=5';

describe('read cache', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let api: TestApi;
  let blocking: Redis;
  let runner: RunningProjection;
  let slot = 1000;

  const payment = (seed: string) => makeEvent('PaymentRecord', {}, { seed, slot: (slot += 1), blockTime: 1_704_067_200 + slot, ixPath: '0', index: 0 });
  const list = async (path = PATH): Promise<string[]> => {
    const res = await fetch(`${api.url}${path}`);
    expect(res.status).to.equal(200);
    return ((await res.json()) as ApiEvent[]).map((e) => e.id);
  };
  const outcomes = async (): Promise<Record<string, number>> => {
    const m = await api.node.metrics.readCache.get();
    return Object.fromEntries(m.values.map((v) => [String(v.labels['result']), v.value]));
  };
  const caughtUp = () => waitFor(async () => {
    const g = (await groupInfo(env.redis, env.keys.events)).find((x) => x.name === 'archive');
    return g?.lag === 0 && g.pending === 0;
  }, 20_000, 'the archive to catch up');

  before(async () => {
    env = await createTestEnv('read-cache');
    blocking = createRedis({ url: env.redisUrl, sentinels: [], sentinelName: '' });
    runner = startProjection({ db: env.db, redis: env.redis, blockingRedis: blocking, keys: env.keys, logger: createLogger('silent', 'test') },
      archiveProjection, { batchSize: 100, blockMs: 50, maxAttempts: 3, claimIdleMs: 5000 });
    api = await startTestApi(env, { READ_CACHE_TTL_MS: '3000' });
  });
  after(async () => {
    await api?.close();
    await runner?.stop();
    blocking?.disconnect();
    await env?.close();
  });

  it('serves a repeated query from the cache, and a commit through the runner at once', async () => {
    const first = payment('a');
    await appendTestEvents(env, [first]);
    await caughtUp();
    expect(await list()).to.deep.equal([first.id]);
    expect(await list()).to.deep.equal([first.id]); // a new Redis: the first read named the generation, uncached
    const before = await outcomes();
    expect(await list()).to.deep.equal([first.id]);
    expect((await outcomes())['hit']).to.equal((before['hit'] ?? 0) + 1);

    // no sleep: a group caught up means the version moved, so the very next read sees it
    for (const seed of ['b', 'c', 'd']) {
      const next = payment(seed);
      await appendTestEvents(env, [next]);
      await caughtUp();
      expect((await list())[0]).to.equal(next.id);
    }
  });

  it('lets concurrent misses share one query', async () => {
    await appendTestEvents(env, [payment('e')]);
    await caughtUp();
    const before = await outcomes();
    const answers = await Promise.all(Array.from({ length: 20 }, () => list()));
    for (const a of answers) expect(a).to.deep.equal(answers[0]);
    const after = await outcomes();
    expect((after['miss'] ?? 0) - (before['miss'] ?? 0)).to.equal(1);
    expect((after['shared'] ?? 0) - (before['shared'] ?? 0) + (after['hit'] ?? 0) - (before['hit'] ?? 0)).to.equal(19);
  });

  it('keeps an answer no longer than the TTL when a write bypasses the runner', async () => {
    const cached = await list();
    const direct = payment('direct');
    await env.db.insertInto('events').values(archiveRow(direct)).execute();
    expect(await list()).to.deep.equal(cached); // same version: still the cached answer
    await waitFor(async () => (await list())[0] === direct.id, 10_000, 'the entry to expire');
  });

  it('expires answers when a replay bumps the version', async () => {
    const cached = await list();
    const direct = payment('replayed');
    await env.db.insertInto('events').values(archiveRow(direct)).execute();
    expect(await list()).to.deep.equal(cached);
    await bumpReadVersions(env.redis, env.keys, 'archive'); // what replay's `committed` hook does
    expect((await list())[0]).to.equal(direct.id);
  });

  it('answers 304 to a client holding the current ETag, 200 with the body once it changed', async () => {
    const res = await fetch(`${api.url}${PATH}`);
    const etag = res.headers.get('etag');
    expect(etag).to.match(/^W\/"[0-9a-f]+-[A-Za-z0-9+/]+"$/);
    // node:http, not fetch: fetch marks a conditional request no-cache, which HTTP answers in full
    const conditional = (tag: string) => new Promise<{ status: number; etag: string | undefined }>((resolve, reject) => {
      get(`${api.url}${PATH}`, { headers: { 'If-None-Match': tag } }, (r) => {
        r.resume();
        r.on('end', () => resolve({ status: r.statusCode ?? 0, etag: r.headers.etag }));
      }).on('error', reject);
    });
    expect((await conditional(etag!)).status).to.equal(304);
    await appendTestEvents(env, [payment('f')]);
    await caughtUp();
    const changed = await conditional(etag!);
    expect(changed.status).to.equal(200);
    expect(changed.etag).to.not.equal(etag);
  });

  it('never serves an answer cached before Redis lost its keys, though versions count the same again', async () => {
    const keys = streamKeys(`${env.keys.prefix}lost:`);
    const cache = createReadCache(env.redis, { ttlMs: 60_000, maxBytes: 1 << 20, keys });
    let n = 0;
    const get = () => cache.get(['m'], 'k', () => Promise.resolve({ n: (n += 1) }), () => 1);
    await get(); // a Redis with no generation yet: bypassed, one is named
    await bumpReadVersions(env.redis, keys, 'm');
    const cached = await get();
    expect(await get()).to.deep.equal(cached);
    // Redis restarts empty (or is flushed); the next commit counts version 1 again
    await env.redis.del(keys.readGeneration, keys.readVersion('m'), keys.readEpoch('m'));
    await bumpReadVersions(env.redis, keys, 'm');
    expect(await env.redis.get(keys.readVersion('m'))).to.equal('1');
    expect((await get()).n).to.be.greaterThan(cached.n);
    const fresh = await get();
    expect(fresh.n).to.be.greaterThan(cached.n);
    expect(await get()).to.deep.equal(fresh);
  });

  it('never serves an answer cached before its Redis connection closed (a Redis restarted from an older state)', async () => {
    let redis: RedisServer | undefined;
    try {
      redis = await startRedisServer();
      const own = createRedis({ url: redis.url, sentinels: [], sentinelName: '' });
      own.on('error', () => undefined);
      const cache = createReadCache(own, { ttlMs: 60_000, maxBytes: 1 << 20, keys: streamKeys('s:') });
      await own.ping();
      let n = 0;
      const get = () => cache.get(['m'], 'k', () => Promise.resolve({ n: (n += 1) }), () => 1);
      await get(); // names the generation
      const cached = await get();
      expect(await get()).to.deep.equal(cached);
      // its data file keeps the generation and the versions: only the connection tells
      await redis.stop();
      await waitFor(() => Promise.resolve(own.status !== 'ready'), 5000, 'the client to notice');
      await redis.start();
      await waitFor(() => Promise.resolve(own.status === 'ready'), 10_000, 'the client to reconnect');
      const after = await get();
      expect(after.n).to.be.greaterThan(cached.n);
      expect(await get()).to.deep.equal(after);
      own.disconnect();
    } finally {
      await redis?.close();
    }
  });

  it('bypasses the cache while Redis does not answer, and the answers stay right', async () => {
    let redis: RedisServer | undefined;
    try {
      redis = await startRedisServer();
      const own = createRedis({ url: redis.url, sentinels: [], sentinelName: '' }, { enableAutoPipelining: true });
      own.on('error', () => undefined);
      const cache = createReadCache(own, { ttlMs: 60_000, maxBytes: 1 << 20, keys: streamKeys('v:') });
      await own.set(streamKeys('v:').readGeneration, 'g1');
      let n = 0;
      const produce = () => Promise.resolve({ n: (n += 1) });
      expect(await cache.get(['m'], 'k', produce, () => 1)).to.deep.equal({ n: 1 });
      expect(await cache.get(['m'], 'k', produce, () => 1)).to.deep.equal({ n: 1 });
      await redis.stop();
      await waitFor(() => Promise.resolve(own.status !== 'ready'), 5000, 'the client to notice');
      expect(await cache.get(['m'], 'k', produce, () => 1)).to.deep.equal({ n: 2 });
      expect(await cache.get(['m'], 'k', produce, () => 1)).to.deep.equal({ n: 3 });
      own.disconnect();
    } finally {
      await redis?.close();
    }
  });
});
