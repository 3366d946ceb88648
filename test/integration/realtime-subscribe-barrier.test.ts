/**
 * A subscribe's ack promises every payment published after it. With the sharded adapter a
 * room new to a node gets its SSUBSCRIBE sent without being waited for: here the API node
 * reaches Redis through a proxy that holds its commands back, so that SSUBSCRIBE lands
 * well after the ack would have gone without the barrier. The notifier and the test's
 * appends use Redis directly: a payment appended right after the ack is published at once.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { connectClient, payment, type TestClient } from '../support/realtime-client.js';
import { appendTestEvents } from '../support/anchor-events.js';
import { startSlowProxy, type SlowProxy } from '../support/slow-proxy.js';
import { realtimeAttachment } from '../../queries/realtime/attachment.js';
import { startNotifier, type RunningNotifier } from '../../queries/realtime/notifier.js';
import { createLogger } from '../../infra/log/logger.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import type { AppContext } from '../../src/app/context.js';
import { systemClock } from '../../src/kernel/domain/clock.js';

/** how late the API node's commands reach Redis: far longer than the notifier takes to publish */
const DELAY_MS = 400;

describe('real-time subscribe ack with the sharded adapter and a slow subscriber', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let proxy: SlowProxy;
  let api: TestApi;
  let notifier: RunningNotifier;
  const clients: TestClient[] = [];
  const connect = async () => { const c = await connectClient(api.url); clients.push(c); return c; };

  before(async () => {
    env = await createTestEnv('realtime-sub-barrier');
    const redis = new URL(env.redisUrl);
    proxy = await startSlowProxy({ host: redis.hostname, port: Number(redis.port || 6379) }, DELAY_MS);
    const slow = new URL(env.redisUrl);
    slow.port = String(proxy.port);
    api = await startTestApi(env, { WS_SHARDED_ADAPTER: 'true', REDIS_URL: slow.toString() }, { attachments: [realtimeAttachment()] });
    const config = loadConfig({ ...env.env, WS_SHARDED_ADAPTER: 'true' });
    const logger = createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent', 'test');
    const ctx: AppContext = { config, db: env.db, dbRead: env.db, redis: env.redis, keys: env.keys, logger, clock: systemClock };
    notifier = await startNotifier(ctx, { batchSize: 100, blockMs: 100, claimIdleMs: 2000 });
  });
  afterEach(() => { for (const c of clients.splice(0)) c.close(); });
  after(async () => {
    await notifier?.stop();
    await api?.close();
    await proxy?.close();
    await env?.close();
  });

  it('delivers a payment published right after the ack of a room new to the node', async () => {
    const tid = 'barrier-new-room';
    const c = await connect();
    expect((await c.subscribe(tid)).ok).to.equal(true);
    const e = payment(tid);
    await appendTestEvents(env, [e]);
    const got = await c.waitPayments(1, 3 * DELAY_MS + 2000);
    expect(got.map((p) => p.data.signature)).to.deep.equal([e.signature]);
  });

  it('delivers it to a second socket acked while the first socket\'s subscription is still on its way', async () => {
    const tid = 'barrier-joined-room';
    const [first, second] = [await connect(), await connect()];
    const firstAck = first.subscribe(tid);
    await new Promise((r) => setTimeout(r, DELAY_MS / 4)); // the first socket is in the room, its SSUBSCRIBE not yet in force
    expect((await second.subscribe(tid)).ok).to.equal(true);
    const e = payment(tid);
    await appendTestEvents(env, [e]);
    const got = await second.waitPayments(1, 3 * DELAY_MS + 2000);
    expect(got.map((p) => p.data.signature)).to.deep.equal([e.signature]);
    expect((await firstAck).ok).to.equal(true);
    expect((await first.waitPayments(1)).map((p) => p.data.signature)).to.deep.equal([e.signature]);
  });
});
