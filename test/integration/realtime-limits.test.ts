/**
 * Issue 15 on Socket.IO: trackingIds are public memos, so one address must not be able to
 * take every connection slot of one and lock its subscriber out (per-address cap, across
 * two nodes), nor flood a connection with messages or catch-up queries.
 */
import { expect } from 'chai';
import { io, type Socket } from 'socket.io-client';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { realtimeAttachment } from '../../queries/realtime/attachment.js';

interface Reply { ok: boolean; error?: { code: string; message: string } }

describe('real-time limits per address and per connection', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let a: TestApi;
  let b: TestApi;
  const sockets: Socket[] = [];

  const connect = async (api: TestApi, ip: string): Promise<Socket> => {
    const socket = io(api.url, { path: '/ws/v1', transports: ['websocket'], reconnection: false, forceNew: true, extraHeaders: { 'x-forwarded-for': ip } });
    sockets.push(socket);
    await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('connect_error', reject); });
    return socket;
  };
  const subscribe = (s: Socket, trackingId: string, since?: unknown) =>
    s.timeout(5000).emitWithAck('subscribe', since === undefined ? { trackingId } : { trackingId, since }) as Promise<Reply>;

  before(async () => {
    env = await createTestEnv('realtime-limits');
    const settings = { TRUST_PROXY: 'true', WS_MAX_MESSAGES_PER_MINUTE: '20', WS_MAX_CATCH_UPS_PER_MINUTE: '3' };
    [a, b] = await Promise.all([
      startTestApi(env, settings, { attachments: [realtimeAttachment()] }),
      startTestApi(env, settings, { attachments: [realtimeAttachment()] }),
    ]);
  });
  afterEach(() => { for (const s of sockets.splice(0)) s.disconnect(); });
  after(async () => { await a?.close(); await b?.close(); await env?.close(); });

  it('lets one address hold 3 sockets of a trackingId across both nodes, and another address still in', async () => {
    const results: Reply[] = [];
    for (const api of [a, b, a, b, a]) results.push(await subscribe(await connect(api, '203.0.113.7'), 'trk-public'));
    expect(results.map((r) => r.ok)).to.deep.equal([true, true, true, false, false]);
    expect(results[3]!.error).to.deep.include({ code: 'too_many_connections' });
    expect(results[3]!.error!.message).to.match(/from this address/);
    // the real subscriber, elsewhere
    expect((await subscribe(await connect(b, '198.51.100.20'), 'trk-public')).ok).to.equal(true);
    // an IPv6 host does not multiply its share by walking its /64
    const v6: boolean[] = [];
    for (let i = 1; i <= 4; i += 1) v6.push((await subscribe(await connect(a, `2001:db8:1:2::${i}`), 'trk-v6')).ok);
    expect(v6).to.deep.equal([true, true, true, false]);
  });

  it('frees the address\'s share when its sockets go', async () => {
    const first = await connect(a, '203.0.113.8');
    for (let i = 0; i < 2; i += 1) await subscribe(await connect(b, '203.0.113.8'), 'trk-free');
    expect((await subscribe(first, 'trk-free')).ok).to.equal(true);
    expect((await subscribe(await connect(a, '203.0.113.8'), 'trk-free')).ok).to.equal(false);
    first.disconnect();
    await new Promise((r) => setTimeout(r, 300));
    expect((await subscribe(await connect(a, '203.0.113.8'), 'trk-free')).ok).to.equal(true);
  });

  it('refuses messages past the connection\'s budget with rate_limited', async () => {
    const s = await connect(a, '203.0.113.9');
    const replies: Reply[] = [];
    for (let i = 0; i < 25; i += 1) replies.push(await subscribe(s, `trk-m-${i}`));
    expect(replies.slice(0, 20).every((r) => r.ok)).to.equal(true);
    expect(replies.slice(20).map((r) => r.error?.code)).to.deep.equal(new Array(5).fill('rate_limited'));
  });

  it('bounds catch-ups (subscribe with since) per connection', async () => {
    const s = await connect(b, '203.0.113.10');
    const replies: Reply[] = [];
    for (let i = 0; i < 5; i += 1) replies.push(await subscribe(s, `trk-c-${i}`, '2020-01-01T00:00:00Z'));
    expect(replies.map((r) => r.ok)).to.deep.equal([true, true, true, false, false]);
    expect(replies[3]!.error).to.deep.include({ code: 'rate_limited' });
    expect((await subscribe(s, 'trk-c-live')).ok).to.equal(true); // live subscriptions go on
  });
});
