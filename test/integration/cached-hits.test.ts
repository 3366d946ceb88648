/**
 * Read cache hits answered before the router, and before express (infra/http/cached-hits.ts):
 * a hit is the router's answer byte for byte (status, headers, body, ETag), with or without
 * an Origin; the request is counted once under the standard rate limit whether it hits or
 * misses, a 429 is the same refusal, the request's metrics name its route, and a commit's
 * version bump is seen by the very next request; a revalidation (If-None-Match) and a GET
 * with a body are answered as express answers them.
 */
import { request, type IncomingHttpHeaders } from 'node:http';
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { makeEvent } from '../support/anchor-events.js';
import { archiveRow } from '../../projections/archive/projection.js';
import { bumpReadVersions } from '../../infra/cache/read-cache.js';

const LIMIT = 8;
const PATH = '/v1/events?eventName=PaymentRecord&limit=5';

describe('cached hits before the router', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let api: TestApi;
  let slot = 5000;
  let ipSeq = 0;
  const nextIp = () => `203.0.113.${++ipSeq}`;

  const payment = (seed: string) => makeEvent('PaymentRecord', {}, { seed, slot: (slot += 1), blockTime: 1_704_067_200 + slot, ixPath: '0', index: 0 });
  const get = (path: string, ip: string, headers: Record<string, string> = {}) => fetch(`${api.url}${path}`, { headers: { 'x-forwarded-for': ip, ...headers } });
  const outcomes = async (): Promise<Record<string, number>> => {
    const m = await api.node.metrics.readCache.get();
    return Object.fromEntries(m.values.map((v) => [String(v.labels['result']), v.value]));
  };
  /** requests the latency histogram counted under a route */
  const served = async (route: string): Promise<number> => {
    const m = await api.node.metrics.httpDuration.get();
    return m.values.filter((v) => v.metricName?.endsWith('_count') && v.labels['route'] === route).reduce((n, v) => n + v.value, 0);
  };
  /** the headers that may differ between two answers to the same request */
  const VARYING = new Set(['date', 'ratelimit', 'keep-alive', 'connection']);
  const stable = (res: Response) => Object.fromEntries([...res.headers].filter(([k]) => !VARYING.has(k)));

  const plainGet = (path: string, headers: Record<string, string>, body?: string) => new Promise<{ status: number; headers: IncomingHttpHeaders }>((resolve, reject) => {
    const req = request(`${api.url}${path}`, { method: 'GET', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });

  before(async () => {
    env = await createTestEnv('cached-hits');
    await env.db.insertInto('events').values([payment('a'), payment('b')].map(archiveRow)).execute();
    api = await startTestApi(env, { READ_CACHE_TTL_MS: '60000', RATE_LIMIT_PER_MINUTE: String(LIMIT), TRUST_PROXY: 'loopback', CORS_ORIGINS: 'https://shop.example' });
    // a new Redis: the first read names the generation, uncached (a read while the node's
    // connection is still opening bypasses the cache before it gets that far)
    await get(PATH, '198.18.0.1');
    await get(PATH, '198.18.0.1');
  });
  after(async () => {
    await api?.close();
    await env?.close();
  });

  it('answers a hit with the bytes and headers the router answered', async () => {
    const ip = nextIp();
    const headers = { origin: 'https://shop.example', 'x-request-id': 'req-cached-1' };
    const routed = await get('/v1/events?eventName=PaymentRecord&limit=4', ip, headers);
    const before = await outcomes();
    const servedBefore = await served('/v1/events');
    const hit = await get('/v1/events?eventName=PaymentRecord&limit=4', ip, headers);
    expect((await outcomes())['hit']).to.equal((before['hit'] ?? 0) + 1);
    expect(await served('/v1/events')).to.equal(servedBefore + 1);
    expect(hit.status).to.equal(routed.status);
    expect(stable(hit)).to.deep.equal(stable(routed));
    expect(hit.headers.get('x-request-id')).to.equal('req-cached-1');
    expect(hit.headers.get('access-control-allow-origin')).to.equal('https://shop.example');
    expect(hit.headers.get('etag')).to.match(/^W\//);
    expect(hit.headers.get('ratelimit')).to.match(/^limit=8, remaining=6, reset=\d+$/);
    expect(await hit.text()).to.equal(await routed.text());
  });

  it('answers a hit without an Origin with the headers the router answered, and a revalidation with a 304', async () => {
    const ip = nextIp();
    const url = '/v1/events?eventName=PaymentRecord&limit=3';
    const routed = await get(url, ip);
    const before = await outcomes();
    const hit = await get(url, ip);
    expect((await outcomes())['hit']).to.equal((before['hit'] ?? 0) + 1);
    expect(stable(hit)).to.deep.equal({ ...stable(routed), 'x-request-id': hit.headers.get('x-request-id') });
    expect(hit.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    expect(hit.headers.get('x-request-id')).to.not.equal(routed.headers.get('x-request-id'));
    expect(hit.headers.get('access-control-allow-origin')).to.equal(null);
    expect(await hit.text()).to.equal(await routed.text());
    // node:http, not fetch: fetch marks a conditional request no-cache, which HTTP answers in full
    const again = await plainGet(url, { 'if-none-match': routed.headers.get('etag')!, 'x-forwarded-for': ip });
    expect(again.status).to.equal(304);
    expect(again.headers['ratelimit']).to.match(/^limit=8, remaining=5, reset=\d+$/);
  });

  it('leaves a GET with a body to express, whose body parser reads it first', async () => {
    const bad = await plainGet('/v1/events?eventName=PaymentRecord&limit=3', { 'content-type': 'application/json', 'x-forwarded-for': nextIp() }, '{not json');
    expect(bad.status).to.equal(400);
  });

  it('counts each request once under the standard limit, hits and misses alike, and refuses the same way', async () => {
    const ip = nextIp();
    const answers: Response[] = [];
    for (let i = 0; i < LIMIT; i++) answers.push(await get(PATH, ip));
    expect(answers.map((r) => r.status)).to.deep.equal(Array(LIMIT).fill(200));
    expect(answers.map((r) => /remaining=(\d+)/.exec(r.headers.get('ratelimit') ?? '')?.[1])).to.deep.equal(['7', '6', '5', '4', '3', '2', '1', '0']);
    const before = await outcomes();
    const refused = await get(PATH, ip);
    expect(refused.status).to.equal(429);
    expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
    expect(await refused.json()).to.include({ success: false, code: 'rate_limited' });
    // refused before the cache was asked, as the router refuses before the handler
    expect(await outcomes()).to.deep.equal(before);
  });

  it('serves the very next request after a commit bumped the versions from the new state', async () => {
    const ip = nextIp();
    const cached = await (await get(PATH, ip)).json() as { id: string }[];
    const next = payment('c');
    await env.db.insertInto('events').values(archiveRow(next)).execute();
    expect(await (await get(PATH, ip)).json()).to.deep.equal(cached); // same versions: still cached
    await bumpReadVersions(env.redis, env.keys, 'archive');
    const now = await (await get(PATH, ip)).json() as { id: string }[];
    expect(now[0]!.id).to.equal(next.id);
  });

  it('leaves other methods and unknown URLs to the router', async () => {
    const ip = nextIp();
    expect((await fetch(`${api.url}${PATH}`, { method: 'POST', headers: { 'x-forwarded-for': ip } })).status).to.equal(404);
    const head = await fetch(`${api.url}${PATH}`, { method: 'HEAD', headers: { 'x-forwarded-for': ip } });
    expect(head.status).to.equal(200);
    expect(await head.text()).to.equal('');
    expect((await get('/v1/events?eventName=PaymentRecord&limit=abc', ip)).status).to.equal(400);
  });
});
