/**
 * Requests for one key that arrive in the same turn of the event loop are counted in one
 * call to Redis, and each is answered exactly as if it had been counted alone, in turn:
 * a burst across the limit lets exactly `points` through, with remaining counting down and
 * every header as before; refusals carry remaining=0 and Retry-After = reset. Counted on a
 * private redis-server, whose command statistics show the number of calls, and which is
 * stopped to show that an outage still lets requests through with a warning.
 */
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { waitFor } from '../support/process.js';
import { createRedis, type Redis } from '../../infra/redis/client.js';
import { createRateLimit, type RateLimitOutcome } from '../../infra/http/redis-rate-limit.js';
import { registerEventRoutes } from '../../queries/events/routes.js';

const POINTS = 5;
const BURST = 12;

/** Calls of Lua scripts the server has run so far (RateLimiterRedis counts with one). */
async function scriptCalls(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  let n = 0;
  for (const m of info.matchAll(/^cmdstat_(?:evalsha|eval|fcall):calls=(\d+)/gm)) n += Number(m[1]);
  return n;
}

const remainingOf = (o: RateLimitOutcome): number => Number(/remaining=(\d+)/.exec(o.headers['RateLimit'] ?? '')?.[1]);
const resetOf = (o: RateLimitOutcome): number => Number(/reset=(\d+)$/.exec(o.headers['RateLimit'] ?? '')?.[1]);

describe('rate limit counted in batches', function () {
  this.timeout(30_000);
  let server: RedisServer;
  let redis: Redis;
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, new Writable({ write(chunk: Buffer, _enc, done) { warnings.push(chunk.toString()); done(); } }));
  let seq = 0;
  const limit = () => createRateLimit(redis, { keyPrefix: `rl-batch-${++seq}`, points: POINTS, durationSeconds: 60, logger });

  before(async () => {
    server = await startRedisServer();
    redis = createRedis({ url: server.url, sentinels: [], sentinelName: '' }, { enableAutoPipelining: true });
    redis.on('error', () => undefined);
    await redis.ping();
  });
  after(async () => {
    redis?.disconnect();
    await server?.close();
  });

  it('answers a burst across the limit in one call, each request as if counted alone', async () => {
    const l = limit();
    const calls0 = await scriptCalls(redis);
    const outcomes = await Promise.all(Array.from({ length: BURST }, () => l.count('203.0.113.1')));
    expect(await scriptCalls(redis) - calls0, 'Lua calls for the burst').to.equal(1);
    expect(await redis.get(`rl-batch-${seq}:203.0.113.1`)).to.equal(String(BURST));

    const allowed = outcomes.filter((o) => o.refusal === undefined);
    expect(allowed).to.have.length(POINTS);
    expect(outcomes.slice(0, POINTS)).to.deep.equal(allowed);
    expect(allowed.map(remainingOf)).to.deep.equal([4, 3, 2, 1, 0]);
    const reset = resetOf(outcomes[0]!);
    expect(reset).to.be.within(59, 60);
    for (const [i, o] of allowed.entries()) {
      expect(o.headers).to.deep.equal({ 'RateLimit-Policy': `${POINTS};w=60`, RateLimit: `limit=${POINTS}, remaining=${POINTS - 1 - i}, reset=${reset}` });
    }
    for (const o of outcomes.slice(POINTS)) {
      expect(o.headers).to.deep.equal({ 'RateLimit-Policy': `${POINTS};w=60`, RateLimit: `limit=${POINTS}, remaining=0, reset=${reset}` });
      expect([o.refusal?.kind, o.refusal?.status]).to.deep.equal(['rate_limited', 429]);
      expect(o.refusal?.headers).to.deep.equal({ ...o.headers, 'Retry-After': String(reset) });
    }
  });

  it('goes on counting across turns and keys', async () => {
    const l = limit();
    const first = await Promise.all([l.consume('a'), l.consume('a'), l.consume('b')]);
    expect(first.map((d) => [d.allowed, d.remaining])).to.deep.equal([[true, 4], [true, 3], [true, 4]]);
    const second = await Promise.all([l.consume('a'), l.consume('a'), l.consume('a'), l.consume('a'), l.consume('b')]);
    expect(second.map((d) => [d.allowed, d.remaining])).to.deep.equal([[true, 2], [true, 1], [true, 0], [false, 0], [true, 3]]);
    expect(second[3].resetSeconds).to.be.within(1, 60);
    // one alone, as before batching
    const alone = await l.consume('a');
    expect([alone.allowed, alone.remaining]).to.deep.equal([false, 0]);
  });

  it('lets a burst through with a warning while Redis is down', async () => {
    const l = limit();
    await l.consume('c');
    await server.stop();
    await waitFor(async () => redis.status !== 'ready', 5000, 'the client to see Redis gone');
    warnings.length = 0;
    const during = await Promise.all(Array.from({ length: BURST }, () => l.consume('c')));
    expect(during).to.deep.equal(Array(BURST).fill({ allowed: true, limit: POINTS, remaining: POINTS, resetSeconds: 60 }));
    expect(warnings).to.have.length(BURST);
    expect(warnings[0]).to.include('rate limiter unavailable; request allowed');
    await server.start();
    await waitFor(async () => redis.status === 'ready', 10_000, 'the client to reconnect');
    const after = await l.consume('c');
    expect([after.allowed, after.remaining]).to.deep.equal([true, 3]);
  });
});

describe('standard rate limit under a concurrent burst', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let api: TestApi;

  before(async () => {
    env = await createTestEnv('ratelimit-batched');
    api = await startTestApi(env, { RATE_LIMIT_PER_MINUTE: String(POINTS), TRUST_PROXY: 'loopback' }, { modules: [registerEventRoutes] });
  });
  after(async () => {
    await api?.close();
    await env?.close();
  });

  for (const path of ['/v1/events/names', '/v1/events/names?bogus=1']) {
    it(`lets exactly the limit through, each with its own headers (${path})`, async () => {
      const ip = path.includes('bogus') ? '198.51.100.2' : '198.51.100.1';
      const answers = await Promise.all(Array.from({ length: BURST }, () => fetch(`${api.url}${path}`, { headers: { 'x-forwarded-for': ip } })));
      const ok = answers.filter((r) => r.status !== 429);
      const refused = answers.filter((r) => r.status === 429);
      expect(ok).to.have.length(POINTS);
      expect(refused).to.have.length(BURST - POINTS);
      const remaining = ok.map((r) => Number(/remaining=(\d+)/.exec(r.headers.get('ratelimit') ?? '')?.[1])).sort();
      expect(remaining).to.deep.equal([0, 1, 2, 3, 4]);
      for (const r of ok) {
        expect(r.headers.get('ratelimit-policy')).to.equal(`${POINTS};w=60`);
        expect(r.headers.get('ratelimit')).to.match(/^limit=5, remaining=[0-4], reset=(59|60)$/);
      }
      for (const r of refused) {
        const retryAfter = r.headers.get('retry-after');
        expect(Number(retryAfter)).to.be.within(1, 60);
        expect(r.headers.get('ratelimit')).to.equal(`limit=${POINTS}, remaining=0, reset=${retryAfter}`);
        expect(r.headers.get('ratelimit-policy')).to.equal(`${POINTS};w=60`);
        expect(await r.json()).to.include({ success: false, code: 'rate_limited' });
      }
      await Promise.all(ok.map((r) => r.arrayBuffer()));
    });
  }
});
