/**
 * The socket protocol on one API node: CORS of the Socket.IO endpoint, the forms of
 * `since`, the per-socket subscription limit, and connection-slot leases (renewed while
 * the node lives, expired ones pruned on acquire, a lost lease ends its subscription).
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { connectClient, type TestClient } from '../support/realtime-client.js';
import { waitFor } from '../support/process.js';
import { realtimeAttachment } from '../../queries/realtime/attachment.js';
import { realtimeKeys } from '../../queries/realtime/keys.js';
import { MAX_SUBSCRIPTIONS_PER_SOCKET } from '../../queries/realtime/subscriptions.js';

describe('real-time socket protocol', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let api: TestApi;
  const clients: TestClient[] = [];
  const connect = async () => { const c = await connectClient(api.url); clients.push(c); return c; };
  const slots = (tid: string) => realtimeKeys(env.prefix).slots(tid);
  const redisNow = async () => { const [s, us] = await env.redis.time(); return Number(s) * 1000 + Math.floor(Number(us) / 1000); };

  before(async () => {
    env = await createTestEnv('realtime-protocol');
    api = await startTestApi(env, { CORS_ORIGINS: 'https://shop.example', WS_LEASE_SECONDS: '2', WS_MAX_CONNECTIONS_PER_TRACKING_ID: '2' },
      { attachments: [realtimeAttachment()] });
  });
  afterEach(() => { for (const c of clients.splice(0)) c.close(); });
  after(async () => { await api?.close(); await env?.close(); });

  it('allows the configured CORS origins on /ws/v1 and no others', async () => {
    const handshake = (origin: string) => fetch(`${api.url}/ws/v1/?EIO=4&transport=polling`, { headers: { Origin: origin } });
    const ok = await handshake('https://shop.example');
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('access-control-allow-origin')).to.equal('https://shop.example');
    const other = await handshake('https://evil.example');
    expect(other.headers.get('access-control-allow-origin')).to.equal(null);
  });

  it('reads since as ISO time, unix seconds or milliseconds (number or digits), or a signature', async () => {
    const c = await connect();
    const iso = '2026-01-02T03:04:05.000Z';
    const secs = Date.parse(iso) / 1000;
    for (const [i, since] of [iso, secs, String(secs), secs * 1000, String(secs * 1000)].entries()) {
      const r = await c.subscribe(`since-${i}`, since);
      expect(r, String(since)).to.include({ ok: true, since: iso });
    }
    for (const bad of [-1, 'soon', '', {}, '2026-13-45']) {
      const r = await c.subscribe('since-bad', bad);
      expect(r.error?.code, JSON.stringify(bad)).to.equal('invalid_since');
    }
    const r = await c.subscribe('since-payload', undefined);
    expect(r.ok).to.equal(true);
    expect((await c.socket.timeout(2000).emitWithAck('subscribe', 'just-a-string')) as { error: { code: string } }).to.have.nested.property('error.code', 'invalid_payload');
  });

  it('limits the trackingIds one socket follows', async () => {
    const c = await connect();
    for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_SOCKET; i += 1) expect((await c.subscribe(`many-${i}`)).ok).to.equal(true);
    expect((await c.subscribe('one-too-many')).error?.code).to.equal('too_many_subscriptions');
    await c.unsubscribe('many-0');
    expect((await c.subscribe('one-too-many')).ok).to.equal(true);
  });

  it('renews leases while the node lives and prunes expired ones on acquire', async () => {
    const tid = 'lease-renew';
    const c = await connect();
    await c.subscribe(tid);
    await new Promise((r) => setTimeout(r, 2500)); // longer than the 2 s lease
    expect(await env.redis.zcount(slots(tid), `(${await redisNow()}`, '+inf')).to.equal(1);
    // a dead node's leftover (expired) holds the second slot: the next acquire prunes it
    await env.redis.zadd(slots(tid), (await redisNow()) - 1, 'dead-node-socket');
    const d = await connect();
    expect((await d.subscribe(tid)).ok).to.equal(true);
    expect(await env.redis.zscore(slots(tid), 'dead-node-socket')).to.equal(null);
  });

  it('ends a subscription whose lease was lost while others filled the cap', async () => {
    const tid = 'lease-lost';
    const c = await connect();
    await c.subscribe(tid);
    const far = (await redisNow()) + 60_000;
    await env.redis.del(slots(tid));
    await env.redis.zadd(slots(tid), far, 'other-1', far, 'other-2');
    await waitFor(async () => c.errors.some((e) => e.code === 'too_many_connections' && e.trackingId === tid), 5000, 'eviction');
  });
});
