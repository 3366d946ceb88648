/**
 * A rate limit protects the service and must not become the reason it is down: while
 * Redis is away, requests are let through at once (not queued until Redis returns), and
 * counting resumes when it is back. A private redis-server is stopped, not the shared one.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { waitFor } from '../support/process.js';
import { createRedis, type Redis } from '../../infra/redis/client.js';
import { registerEventRoutes } from '../../queries/events/routes.js';

describe('standard rate limit during a Redis outage', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let server: RedisServer;
  let redis: Redis;
  let api: TestApi;

  before(async () => {
    env = await createTestEnv('ratelimit-outage');
    server = await startRedisServer();
    redis = createRedis({ url: server.url, sentinels: [], sentinelName: '' });
    redis.on('error', () => undefined);
    api = await startTestApi({ ...env, redis, redisUrl: server.url }, { REDIS_URL: server.url, RATE_LIMIT_PER_MINUTE: '3' }, { modules: [registerEventRoutes] });
  });
  after(async () => {
    await api?.close();
    redis?.disconnect();
    await server?.close();
    await env?.close();
  });

  const get = () => fetch(`${api.url}/v1/events/names`);

  it('lets requests through at once while Redis is down, and counts again once it is back', async () => {
    expect([(await get()).status, (await get()).status, (await get()).status]).to.deep.equal([200, 200, 200]);
    expect((await get()).status).to.equal(429);

    await server.stop();
    await waitFor(async () => redis.status !== 'ready', 5000, 'the client to see Redis gone');
    const t0 = Date.now();
    const during = [];
    for (let i = 0; i < 5; i += 1) during.push((await get()).status);
    expect(during).to.deep.equal([200, 200, 200, 200, 200]);
    expect(Date.now() - t0, 'no request waited for Redis').to.be.below(2000);

    await server.start();
    await waitFor(async () => redis.status === 'ready', 10_000, 'the client to reconnect');
    // the window's count survived the restart (append-only file): still over the limit
    expect((await get()).status).to.equal(429);
  });
});
