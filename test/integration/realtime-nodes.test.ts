/**
 * Real-time payments across API nodes: two nodes in this process on the test's Redis and
 * database, the notifier and the payments projection beside them, real socket.io-client
 * sockets. Payments enter as the indexer appends them (Anchor-encoded events).
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { connectClient, type TestClient } from '../support/realtime-client.js';
import { appendTestEvents, makeEvent } from '../support/anchor-events.js';
import { payment } from '../support/realtime-client.js';
import { waitFor } from '../support/process.js';
import { realtimeAttachment } from '../../queries/realtime/attachment.js';
import { startNotifier, type RunningNotifier } from '../../queries/realtime/notifier.js';
import { startProjection, type RunningProjection } from '../../projections/runner/runner.js';
import { paymentsProjection } from '../../projections/payments/projection.js';
import { createRedis } from '../../infra/redis/client.js';
import { createLogger } from '../../infra/log/logger.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import type { AppContext } from '../../src/app/context.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { dataOf } from '../support/anchor-events.js';

const logger = createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent', 'test');
const nowSec = () => Math.floor(Date.now() / 1000);

for (const sharded of [false, true]) {
  describe(`real-time payments across nodes (${sharded ? 'sharded' : 'plain'} adapter)`, function () {
    this.timeout(90_000);
    let env: TestEnv;
    let a: TestApi;
    let b: TestApi;
    let notifier: RunningNotifier;
    let projector: RunningProjection;
    const blocking = [] as ReturnType<typeof createRedis>[];
    const clients: TestClient[] = [];
    const connect = async (api: TestApi) => { const c = await connectClient(api.url); clients.push(c); return c; };
    const overrides = { WS_SHARDED_ADAPTER: String(sharded), WS_MAX_CONNECTIONS_PER_TRACKING_ID: '2', WS_LEASE_SECONDS: '2' };

    before(async () => {
      env = await createTestEnv(`realtime-${sharded ? 'sh' : 'pl'}`);
      a = await startTestApi(env, overrides, { attachments: [realtimeAttachment()] });
      b = await startTestApi(env, overrides, { attachments: [realtimeAttachment()] });
      const config = loadConfig({ ...env.env, ...overrides });
      const ctx: AppContext = { config, db: env.db, dbRead: env.db, redis: env.redis, keys: env.keys, logger, clock: systemClock };
      notifier = await startNotifier(ctx, { batchSize: 100, blockMs: 100, claimIdleMs: 2000 });
      const r = createRedis({ url: env.redisUrl, sentinels: [], sentinelName: '' });
      blocking.push(r);
      projector = startProjection({ db: env.db, redis: env.redis, blockingRedis: r, keys: env.keys, logger }, paymentsProjection,
        { batchSize: 100, blockMs: 100, maxAttempts: 3, claimIdleMs: 2000 });
    });
    afterEach(() => { for (const c of clients.splice(0)) c.close(); });
    after(async () => {
      await notifier?.stop();
      await projector?.stop();
      await a?.close();
      await b?.close();
      for (const r of blocking) r.disconnect();
      await env?.close();
    });

    it('answers subscribe with ack, and refuses invalid trackingIds with error codes', async () => {
      const c = await connect(a);
      const ok = await c.subscribe('order-1');
      expect(ok).to.include({ ok: true, action: 'subscribe', trackingId: 'order-1' });
      const exact = await c.subscribe('é'.repeat(32)); // 64 bytes of UTF-8
      expect(exact.ok).to.equal(true);
      for (const bad of ['', 42, null, 'x'.repeat(65), 'é'.repeat(33)]) {
        const r = await c.subscribe(bad);
        expect(r.ok, String(bad)).to.equal(false);
        expect(r.error?.code).to.equal('invalid_tracking_id');
      }
      expect(c.errors.map((e) => e.code)).to.deep.equal(Array(5).fill('invalid_tracking_id'));
      const badSince = await c.subscribe('order-1', 'yesterday');
      expect(badSince.error?.code).to.equal('invalid_since');
      const unsub = await c.unsubscribe('order-1');
      expect(unsub).to.include({ ok: true, action: 'unsubscribe', trackingId: 'order-1' });
    });

    it('delivers a payment exactly once to sockets on both nodes, duplicates in the stream included', async () => {
      const tid = `both-${sharded}`;
      const [ca, cb, other] = [await connect(a), await connect(b), await connect(b)];
      await ca.subscribe(tid);
      await cb.subscribe(tid);
      await other.subscribe(`${tid}-other`);
      const e = payment(tid);
      await appendTestEvents(env, [e, e]); // the same event twice, as a re-read transaction would give
      for (const c of [ca, cb]) {
        const got = await c.waitPayments(1);
        expect(got).to.have.length(1);
        expect(got[0]!.type).to.equal('payment_notification');
        expect(got[0]!.data).to.deep.include({
          trackingId: tid, signature: e.signature, slot: e.slot, amount: dataOf(e)['amount'], recordId: dataOf(e)['record_id'],
          policyAddress: dataOf(e)['payment_policy'], gateway: dataOf(e)['gateway'], payer: dataOf(e)['payer'], recipient: dataOf(e)['recipient'],
          tokenMint: dataOf(e)['token_mint'], timestamp: Number(dataOf(e)['timestamp']), status: 'confirmed',
        });
        expect(got[0]!.timestamp).to.be.a('number');
      }
      expect(other.payments).to.have.length(0);
    });

    it('notifies a ComposableExecuted to the room of its composable policy memo', async () => {
      const tid = `cmp-${sharded}`;
      const c = await connect(a);
      await c.subscribe(tid);
      const created = makeEvent('ComposablePolicyCreated', { memo: tid }, { seed: `cc-${sharded}`, slot: 2_000_000 });
      const policy = created.data['composable_policy'];
      const exec = makeEvent('ComposableExecuted', { composable_policy: policy, input_amount: '777', record_id: 3 }, { seed: `ce-${sharded}`, slot: 2_000_001 });
      await appendTestEvents(env, [created, exec]);
      const [p] = await c.waitPayments(1);
      expect(p!.data).to.include({ trackingId: tid, policyAddress: policy, amount: '777', recordId: 3, signature: exec.signature });
    });

    it('catches a reconnecting client up through since (a time or a signature), once, then goes live', async () => {
      const tid = `since-${sharded}`;
      const first = await connect(b);
      await first.subscribe(tid);
      const p1 = payment(tid, {}, nowSec() - 5);
      await appendTestEvents(env, [p1]);
      await first.waitPayments(1);
      const leftAt = Date.now();
      first.close();
      const missed = [payment(tid), payment(tid)];
      await appendTestEvents(env, missed);
      await waitFor(async () => Number((await env.db.selectFrom('payments').select((x) => x.fn.countAll().as('n')).where('tracking_id', '=', tid).executeTakeFirstOrThrow()).n) === 3, 30_000, 'payments read model');

      const byTime = await connect(a);
      const ack = await byTime.subscribe(tid, leftAt);
      expect(ack).to.include({ ok: true, since: new Date(Math.floor(leftAt / 1000) * 1000).toISOString() });
      await waitFor(async () => byTime.caughtUp.length === 1, 30_000, 'caught_up');
      expect(byTime.caughtUp[0]).to.include({ trackingId: tid, sent: 2, more: false, complete: true });
      const bySig = await connect(b);
      await bySig.subscribe(tid, p1.signature);
      await waitFor(async () => bySig.caughtUp.length === 1, 30_000, 'caught_up');
      const live = payment(tid);
      await appendTestEvents(env, [live]);
      for (const c of [byTime, bySig]) {
        const got = await c.waitPayments(3);
        expect(got.map((p) => p.data.signature)).to.deep.equal([...missed, live].map((e) => e.signature));
      }
      const unknown = await connect(a);
      await unknown.subscribe(`${tid}-u`, '1'.repeat(88));
      await waitFor(async () => unknown.errors.length === 1, 5000, 'unknown_since');
      expect(unknown.errors[0]).to.include({ code: 'unknown_since', trackingId: `${tid}-u` });
    });

    it('never sends a payment twice across the catch-up/live boundary, and misses none', async () => {
      const tid = `race-${sharded}`;
      const start = nowSec() - 1;
      const all: TributaryEvent[] = [];
      let appending = true;
      const appender = (async () => {
        while (appending) {
          const e = payment(tid);
          all.push(e);
          await appendTestEvents(env, [e]);
          await new Promise((r) => setTimeout(r, 3));
        }
      })();
      await new Promise((r) => setTimeout(r, 150));
      const late = [] as TestClient[];
      for (let i = 0; i < 2; i += 1) {
        const c = await connect(i % 2 === 0 ? a : b);
        await c.subscribe(tid, start);
        late.push(c);
        await new Promise((r) => setTimeout(r, 100));
      }
      await new Promise((r) => setTimeout(r, 200));
      appending = false;
      await appender;
      for (const c of late) {
        await c.waitPayments(all.length, 40_000, 500);
        const sigs = c.payments.map((p) => p.data.signature);
        expect(new Set(sigs).size, 'no duplicates').to.equal(sigs.length);
        expect([...sigs].sort()).to.deep.equal(all.map((e) => e.signature).sort());
      }
    });

    it('holds the cap per trackingId across both nodes and frees a slot on disconnect and unsubscribe', async () => {
      const tid = `cap-${sharded}`;
      const [c1, c2, c3] = [await connect(a), await connect(b), await connect(a)];
      expect((await c1.subscribe(tid)).ok).to.equal(true);
      expect((await c2.subscribe(tid)).ok).to.equal(true);
      const over = await c3.subscribe(tid);
      expect(over.error?.code).to.equal('too_many_connections');
      expect(c3.errors[0]).to.include({ code: 'too_many_connections', trackingId: tid });
      expect((await c1.subscribe(tid)).ok, 'a repeated subscribe keeps its slot').to.equal(true);
      c2.close();
      await waitFor(async () => (await c3.subscribe(tid)).ok, 5000, 'slot freed by disconnect');
      await c1.unsubscribe(tid);
      const c4 = await connect(b);
      expect((await c4.subscribe(tid)).ok).to.equal(true);
      const e = payment(tid);
      await appendTestEvents(env, [e]);
      await c4.waitPayments(1);
      await c3.waitPayments(1);
      expect(c1.payments.filter((p) => p.data.trackingId === tid)).to.have.length(0);
    });
  });
}
