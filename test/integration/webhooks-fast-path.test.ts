/**
 * Issue 17's throughput work, what it must not break: a first attempt taken from the
 * projection's push without a claim; a push that is lost still delivered by the claim
 * once its lease ends, with the same webhook-id; a chain event's payload stored once
 * however many webhooks it goes to, and pruned with the last of its deliveries.
 */
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { waitFor } from '../support/process.js';
import { startHarness, type Harness } from '../support/webhook-harness.js';
import { pruneAll } from '../../commands/webhooks/delivery/retention.js';
import { claimDue } from '../../commands/webhooks/delivery/outbox-store.js';
import { webhookPoppersKey, webhookReadyKey } from '../../src/kernel/keys/index.js';

const DAY = 86_400_000;
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('webhooks: the fast path and payloads stored once (issue 17)', function () {
  this.timeout(60_000);
  let h: Harness;
  const prefix = () => h.env.env['REDIS_PREFIX']!;

  before(async () => { h = await startHarness('webhooks_fast_path'); });
  afterEach(async () => {
    h.clock.offsetMs = 0;
    await h.stopWorkers();
    await h.env.redis.del(webhookPoppersKey(prefix()), webhookReadyKey(prefix()));
    await settle(1100); // the projection asks who pops at most once a second
  });
  after(async () => { await h.close(); });

  it('delivers a first attempt from the projection\'s push, with no claim', async () => {
    const g = h.gateway();
    const r = await h.receiver();
    const hook = await h.register(g.authority, r.url);
    // claims only at start and after a delivery ends: an arrival before that came from the push
    h.startWorker({ WEBHOOK_POLL_MS: '600000' }, { listen: false });
    await waitFor(async () => (await h.env.redis.get(webhookPoppersKey(prefix()))) !== null, 5000, 'the worker says it pops');
    await settle(1100);
    const e = h.event('PaymentRecord', { gateway: g.account });
    await h.append(e);
    const [got] = await r.waitFor(1, 5000);
    const body = new Webhook(hook.secret).verify(got!.body, {
      'webhook-id': String(got!.headers['webhook-id']),
      'webhook-timestamp': String(got!.headers['webhook-timestamp']),
      'webhook-signature': String(got!.headers['webhook-signature']),
    }) as { id: string; type: string };
    expect(body).to.include({ id: e.id, type: 'PaymentRecord' });
    const row = await waitFor(async () => {
      const d = await h.env.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', hook.id).executeTakeFirst();
      return d?.status === 'delivered' ? d : undefined;
    }, 5000, 'the delivery recorded');
    expect(row).to.include({ attempts: 1, locked_by: null });
  });

  it('delivers a push that was lost through the claim once its lease ends, with the same webhook-id', async () => {
    const g = h.gateway();
    const r = await h.receiver();
    const hook = await h.register(g.authority, r.url);
    // a worker said it pops, with a 1.5 s lease, and is gone before it took anything
    await h.env.redis.set(webhookPoppersKey(prefix()), '1500', 'PX', 10_000);
    await settle(1100);
    const e = h.event('PaymentRecord', { gateway: g.account });
    await h.append(e);
    const row = await waitFor(async () => h.env.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', hook.id).executeTakeFirst(), 5000, 'the row');
    expect(row.locked_by).to.equal('push');
    expect(await h.env.redis.del(webhookReadyKey(prefix()))).to.equal(1); // the push is lost
    await h.env.redis.del(webhookPoppersKey(prefix()));
    h.startWorker();
    const [got] = await r.waitFor(1, 10_000);
    expect(got!.headers['webhook-id']).to.equal(e.id);
    // not before the lease ended (the database's clock; 100 ms for the two clocks)
    expect(got!.at - row.locked_until!.getTime()).to.be.above(-100);
    await settle(500);
    expect(r.requests).to.have.length(1);
  });

  it('stores a chain event\'s payload once for all its webhooks, and prunes it with the last of its deliveries', async () => {
    const g = h.gateway();
    const receivers = await Promise.all([0, 1, 2].map(() => h.receiver()));
    const hooks = [];
    for (const r of receivers) hooks.push(await h.register(g.authority, r.url));
    h.startWorker();
    const done = h.event('PaymentRecord', { gateway: g.account });
    const held = h.event('GatewaySignerChanged', { gateway: g.account });
    await h.append(done, held);
    const got = await Promise.all(receivers.map((r) => r.waitFor(2)));
    for (const [i, reqs] of got.entries()) {
      expect(reqs.map((q) => JSON.parse(q.body).data), `receiver ${i}`).to.deep.equal(got[0]!.map((q) => JSON.parse(q.body).data));
    }
    const ids = [done.id, held.id];
    const stored = await h.env.db.selectFrom('webhook_events').selectAll().where('event_id', 'in', ids).orderBy('event_id').execute();
    expect(stored.map((s) => s.event_id).sort()).to.deep.equal([...ids].sort());
    for (const s of stored) expect([...s.webhook_ids].sort()).to.deep.equal(hooks.map((x) => x.id).sort());
    await waitFor(async () => {
      const rows = await h.env.db.selectFrom('webhook_deliveries').select(['status', 'payload']).where('event_id', 'in', ids).execute();
      return rows.length === 6 && rows.every((x) => x.status === 'delivered' && x.payload === null);
    }, 5000, 'six deliveries delivered, none with a payload of its own');
    await h.stopWorkers();

    // one delivery of `held` is pending again (a resend): its event's payload must stay
    const again = await h.env.db.selectFrom('webhook_deliveries').select('id').where('event_id', '=', held.id).where('webhook_id', '=', hooks[0]!.id).executeTakeFirstOrThrow();
    expect((await h.call('POST', `/v1/webhooks/${hooks[0]!.id}/deliveries/${again.id}/resend`)).status).to.equal(202);
    h.clock.offsetMs = 31 * DAY;
    await pruneAll(h.env.db, 30, h.clock.now(), 0);
    const left = await h.env.db.selectFrom('webhook_deliveries').select(['event_id', 'webhook_id']).where('event_id', 'in', ids).execute();
    expect(left).to.deep.equal([{ event_id: held.id, webhook_id: hooks[0]!.id }]);
    const events = await h.env.db.selectFrom('webhook_events').select('event_id').where('event_id', 'in', ids).execute();
    expect(events.map((x) => x.event_id)).to.deep.equal([held.id]);
    // and the claim still finds its payload
    const [claimed] = await claimDue(h.env.db, 'test-worker', 10, 10_000);
    expect(claimed).to.include({ event_id: held.id, webhook_id: hooks[0]!.id });
    expect(JSON.parse(claimed!.payload_text)).to.deep.equal(JSON.parse(got[0]![1]!.body).data);
  });
});
