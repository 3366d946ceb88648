/**
 * Issue 17's throughput work, what it must not break: a first attempt taken from the
 * projection's push without a claim, its outbox row written only with its outcome (one
 * fan-out row per event until then); a push that is lost still delivered by the claim
 * once its fan-out's lease ends, with the same webhook-id; the expansion of an expired
 * fan-out writes only the deliveries not written yet, and an outcome that comes after it
 * is not delivered again; a chain event's payload stored once however many webhooks it
 * goes to, and pruned with the last of its deliveries.
 */
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { sql } from 'kysely';
import { waitFor } from '../support/process.js';
import { startHarness, type Harness } from '../support/webhook-harness.js';
import { pruneAll } from '../../commands/webhooks/delivery/retention.js';
import { claimDue, recordAttempts, type AttemptRecord } from '../../commands/webhooks/delivery/outbox-store.js';
import { expandExpired } from '../../commands/webhooks/delivery/fanouts.js';
import { webhookPoppersKey, webhookReadyKey } from '../../src/kernel/names/index.js';
import { startFastPath } from '../../commands/webhooks/delivery/ready-pop.js';
import { createLogger } from '../../infra/log/logger.js';

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
    const attempts = await h.env.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', row.id).execute();
    expect(attempts.map((a) => [a.attempt, a.success, a.status_code])).to.deep.equal([[1, true, 200]]);
    await waitFor(async () => (await h.env.db.selectFrom('webhook_fanouts').select('id').where('event_id', '=', e.id).execute()).length === 0, 5000, 'the fan-out deleted');
  });

  it('lists a pushed first attempt only once its outcome is known; its fan-out holds it meanwhile', async () => {
    const g = h.gateway();
    const r = await h.receiver((n) => (n === 0 ? 'hang' : 200));
    const quick = await h.receiver();
    const hook = await h.register(g.authority, r.url);
    const other = await h.register(g.authority, quick.url);
    h.startWorker({ WEBHOOK_POLL_MS: '600000', WEBHOOK_TIMEOUT_MS: '1500', WEBHOOK_RETRY_DELAYS_MS: '100' }, { listen: false });
    await waitFor(async () => (await h.env.redis.get(webhookPoppersKey(prefix()))) !== null, 5000, 'the worker says it pops');
    await settle(1100);
    const e = h.event('PaymentRecord', { gateway: g.account });
    await h.append(e);
    await r.waitFor(1, 5000);
    await quick.waitFor(1, 5000);
    // the answered one is written; the one in flight is not, and its fan-out is still there
    await waitFor(async () => (await h.env.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', other.id).execute()).length === 1, 5000, 'the answered delivery written');
    expect(await h.env.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', hook.id).execute()).to.deep.equal([]);
    const listed = await h.call('GET', `/v1/webhooks/${hook.id}/deliveries`);
    expect(listed.status).to.equal(200);
    expect(JSON.stringify(listed.body)).to.not.include(e.id);
    const [fanout] = await h.env.db.selectFrom('webhook_fanouts').selectAll().where('event_id', '=', e.id).execute();
    expect([...fanout!.webhook_ids].sort()).to.deep.equal([hook.id, other.id].sort());
    // the attempt times out: the row is written waiting for its quick retry, which succeeds
    const got = await r.waitFor(2, 10_000);
    expect(got.map((q) => q.headers['webhook-id'])).to.deep.equal([e.id, e.id]);
    const row = await waitFor(async () => {
      const d = await h.env.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', hook.id).executeTakeFirst();
      return d?.status === 'delivered' ? d : undefined;
    }, 5000, 'the delivery delivered');
    expect(row.attempts).to.equal(2);
    const attempts = await h.env.db.selectFrom('webhook_attempts').select(['attempt', 'success']).where('delivery_id', '=', row.id).orderBy('attempt').execute();
    expect(attempts).to.deep.equal([{ attempt: 1, success: false }, { attempt: 2, success: true }]);
    await waitFor(async () => (await h.env.db.selectFrom('webhook_fanouts').select('id').where('event_id', '=', e.id).execute()).length === 0, 5000, 'the fan-out deleted');
  });

  it('delivers a push that was lost through the claim once its fan-out\'s lease ends, with the same webhook-id', async () => {
    const g = h.gateway();
    const r = await h.receiver();
    const hook = await h.register(g.authority, r.url);
    // a worker said it pops, with a 1.5 s lease, and is gone before it took anything
    await h.env.redis.set(webhookPoppersKey(prefix()), '1500', 'PX', 10_000);
    await settle(1100);
    const e = h.event('PaymentRecord', { gateway: g.account });
    await h.append(e);
    const fanout = await waitFor(async () => h.env.db.selectFrom('webhook_fanouts').selectAll().where('event_id', '=', e.id).executeTakeFirst(), 5000, 'the fan-out');
    expect(fanout.webhook_ids).to.deep.equal([hook.id]);
    // no outbox row until an outcome or the expansion
    expect(await h.env.db.selectFrom('webhook_deliveries').select('id').where('event_id', '=', e.id).execute()).to.deep.equal([]);
    expect(await h.env.redis.del(webhookReadyKey(prefix()))).to.equal(1); // the push is lost
    await h.env.redis.del(webhookPoppersKey(prefix()));
    h.startWorker();
    const [got] = await r.waitFor(1, 10_000);
    expect(got!.headers['webhook-id']).to.equal(e.id);
    // not before the lease ended (the database's clock; 100 ms for the two clocks)
    expect(got!.at - fanout.lease_until.getTime()).to.be.above(-100);
    await settle(500);
    expect(r.requests).to.have.length(1);
    expect(await h.env.db.selectFrom('webhook_fanouts').select('id').where('event_id', '=', e.id).execute()).to.deep.equal([]);
    const rows = await h.env.db.selectFrom('webhook_deliveries').select(['status', 'created_at']).where('event_id', '=', e.id).execute();
    expect(rows).to.deep.equal([{ status: 'delivered', created_at: fanout.created_at }]);
  });

  it('hands a popped delivery to an endpoint paused since queueing to the claim, and finishes the fan-out', async () => {
    const g = h.gateway();
    const ra = await h.receiver();
    const rb = await h.receiver();
    const a = await h.register(g.authority, ra.url);
    const b = await h.register(g.authority, rb.url);
    // a worker said it pops, with a lease long enough for the one started below
    await h.env.redis.set(webhookPoppersKey(prefix()), '60000', 'PX', 10_000);
    await settle(1100);
    const e = h.event('PaymentRecord', { gateway: g.account });
    await h.append(e);
    await waitFor(async () => h.env.db.selectFrom('webhook_fanouts').select('id').where('event_id', '=', e.id).executeTakeFirst(), 5000, 'the fan-out');
    // the receiver of b asked for a pause after the event was queued
    await sql`UPDATE webhooks SET paused_until = now() + interval '1 hour' WHERE id = ${b.id}`.execute(h.env.db);
    h.startWorker();
    await ra.waitFor(1, 5000);
    await waitFor(async () => (await h.env.db.selectFrom('webhook_fanouts').select('id').where('event_id', '=', e.id).execute()).length === 0, 5000, 'the fan-out finished');
    const rows = await h.env.db.selectFrom('webhook_deliveries').select(['webhook_id', 'status', 'attempts', 'locked_by']).where('event_id', '=', e.id).orderBy('webhook_id').execute();
    expect(rows).to.deep.equal([
      { webhook_id: a.id, status: 'delivered', attempts: 1, locked_by: null },
      { webhook_id: b.id, status: 'pending', attempts: 0, locked_by: null },
    ].sort((x, y) => x.webhook_id - y.webhook_id));
    await settle(300);
    expect(rb.requests).to.have.length(0); // the claim skips it while the endpoint is paused
  });

  it('expands an expired fan-out into the deliveries not written yet; an outcome after it is not delivered again', async () => {
    const now = new Date();
    const hooks = await h.env.db.insertInto('webhooks')
      .values([0, 1, 2].map((i) => ({ gateway_pubkey: `fx${i}-${now.getTime()}`, gateway_account: `fa${i}`, endpoint_url: `http://127.0.0.1:9/${i}`, secret: 's', created_at: now, updated_at: now })))
      .returning('id').execute();
    const ids = hooks.map((x) => x.id);
    const eventId = `fanout-expand-${now.getTime()}`;
    await h.env.db.insertInto('webhook_events').values({ event_id: eventId, payload: JSON.stringify({ n: 1 }), webhook_ids: ids }).execute();
    const created = new Date(now.getTime() - 5000);
    await h.env.db.insertInto('webhook_fanouts').values({ event_id: eventId, event_name: 'PaymentRecord', webhook_ids: ids, created_at: created, lease_until: new Date(now.getTime() + 60_000) }).execute();
    const first = (webhookId: number): AttemptRecord => ({
      deliveryId: '', webhookId, eventId, eventName: 'PaymentRecord', attempt: 1, attemptedAt: new Date(), statusCode: 200, latencyMs: 1, error: null, success: true,
      first: { createdAt: created },
    });
    // the first webhook's outcome is written while the lease holds
    const a0 = first(ids[0]!);
    expect(await recordAttempts(h.env.db, [{ a: a0, next: { kind: 'delivered' }, holder: 'w1' }])).to.deep.equal(['held']);
    expect(a0.first!.id).to.be.a('string');
    expect(await expandExpired(h.env.db)).to.equal(0); // the lease holds
    await h.env.db.updateTable('webhook_fanouts').set({ lease_until: new Date(now.getTime() - 1000) }).where('event_id', '=', eventId).execute();
    expect(await expandExpired(h.env.db)).to.equal(1);
    const rows = await h.env.db.selectFrom('webhook_deliveries').select(['webhook_id', 'status', 'attempts', 'created_at']).where('event_id', '=', eventId).orderBy('webhook_id').execute();
    expect(rows).to.deep.equal([
      { webhook_id: ids[0], status: 'delivered', attempts: 1, created_at: created },
      { webhook_id: ids[1], status: 'pending', attempts: 0, created_at: created },
      { webhook_id: ids[2], status: 'pending', attempts: 0, created_at: created },
    ]);
    expect(await h.env.db.selectFrom('webhook_fanouts').select('id').where('event_id', '=', eventId).execute()).to.deep.equal([]);
    // the second webhook's row is claimed by another worker; the third is not claimed yet
    await sql`UPDATE webhook_deliveries SET locked_by = 'w2', locked_until = now() + interval '1 minute' WHERE event_id = ${eventId} AND webhook_id = ${ids[1]}`.execute(h.env.db);
    // the late outcomes of the first worker: the unclaimed row is taken over (delivered, not attempted again), the claimed one is lost
    const outcomes = await recordAttempts(h.env.db, [ids[1]!, ids[2]!].map((id) => ({ a: first(id), next: { kind: 'delivered' } as const, holder: 'w1' })));
    expect(outcomes).to.deep.equal(['lost', 'held']);
    const after = await h.env.db.selectFrom('webhook_deliveries').select(['webhook_id', 'status', 'locked_by']).where('event_id', '=', eventId).orderBy('webhook_id').execute();
    expect(after.map((x) => [x.status, x.locked_by])).to.deep.equal([['delivered', null], ['pending', 'w2'], ['delivered', null]]);
    const attempts = await h.env.db.selectFrom('webhook_attempts').select('webhook_id').where('event_id', '=', eventId).execute();
    expect(attempts.map((x) => x.webhook_id).sort()).to.deep.equal([ids[0], ids[2]].sort());
  });

  it('deletes finished fan-outs with the next outcome write, in the same commit as its rows and attempts', async () => {
    const now = new Date();
    const [hook] = await h.env.db.insertInto('webhooks')
      .values({ gateway_pubkey: `ff-${now.getTime()}`, gateway_account: `ffa-${now.getTime()}`, endpoint_url: 'http://127.0.0.1:9/ff', secret: 's', created_at: now, updated_at: now })
      .returning('id').execute();
    const fan = (eventId: string) => h.env.db.insertInto('webhook_fanouts')
      .values({ event_id: eventId, event_name: 'PaymentRecord', webhook_ids: [hook!.id], created_at: now, lease_until: new Date(now.getTime() + 60_000) })
      .returning('id').executeTakeFirstOrThrow();
    const done = await fan(`ff-done-${now.getTime()}`);
    const open = await fan(`ff-open-${now.getTime()}`);
    const a: AttemptRecord = {
      deliveryId: '', webhookId: hook!.id, eventId: `ff-open-${now.getTime()}`, eventName: 'PaymentRecord', attempt: 1, attemptedAt: now,
      statusCode: 500, latencyMs: 3, error: 'HTTP 500', success: false, first: { createdAt: now },
    };
    expect(await recordAttempts(h.env.db, [{ a, next: { kind: 'pending', round: 1, delayMs: 60_000 }, holder: 'w1' }], [done.id])).to.deep.equal(['held']);
    const left = await h.env.db.selectFrom('webhook_fanouts').select('id').where('id', 'in', [done.id, open.id]).execute();
    expect(left.map((r) => r.id)).to.deep.equal([open.id]);
    const row = await h.env.db.selectFrom('webhook_deliveries').select(['status', 'round', 'attempts', 'last_error']).where('event_id', '=', a.eventId).execute();
    expect(row).to.deep.equal([{ status: 'pending', round: 1, attempts: 1, last_error: 'HTTP 500' }]);
    const attempts = await h.env.db.selectFrom('webhook_attempts').select(['status_code', 'success']).where('event_id', '=', a.eventId).execute();
    expect(attempts).to.deep.equal([{ status_code: 500, success: false }]);
  });

  it('writes a fan-out\'s outcome whatever the endpoint\'s event types say now (the projection filtered it at queueing)', async () => {
    const now = new Date();
    const [hook] = await h.env.db.insertInto('webhooks')
      .values({ gateway_pubkey: `ft-${now.getTime()}`, gateway_account: `fta-${now.getTime()}`, endpoint_url: 'http://127.0.0.1:9/ft', secret: 's', created_at: now, updated_at: now, event_types: ['SomethingElse'] })
      .returning('id').execute();
    const a: AttemptRecord = {
      deliveryId: '', webhookId: hook!.id, eventId: `ft-${now.getTime()}`, eventName: 'PaymentRecord', attempt: 1, attemptedAt: now,
      statusCode: 200, latencyMs: 3, error: null, success: true, first: { createdAt: now },
    };
    // one record alone: a statement of its own, no transaction around it
    expect(await recordAttempts(h.env.db, [{ a, next: { kind: 'delivered' }, holder: 'w1' }])).to.deep.equal(['held']);
    const row = await h.env.db.selectFrom('webhook_deliveries').select('status').where('event_id', '=', a.eventId).execute();
    expect(row).to.deep.equal([{ status: 'delivered' }]);
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

  it('pops at any room while the worker runs low on deliveries, and otherwise waits for room for several events', async () => {
    const key = webhookReadyKey(prefix());
    // entries of an older format: popped and left to the claim, so the list's length says what was popped
    await h.env.redis.rpush(key, '{}', '{}', '{}');
    let starving = false;
    const fast = startFastPath({
      db: h.env.db, redis: h.env.redis, prefix: prefix(), logger: createLogger('silent', 'test'),
      needMs: 1000, claimLeaseMs: 1000, pushLeaseMs: 1000, fanoutDone: () => undefined, handedToClaim: () => undefined,
      room: () => 10, popRoom: 32, starving: () => starving,
      roomFreed: () => new Promise<void>((r) => setTimeout(r, 20)),
      take: () => undefined,
    });
    try {
      await settle(500);
      expect(await h.env.redis.llen(key)).to.equal(3); // room for 10 deliveries, 32 wanted, 16 still waiting: no pop
      starving = true;
      await waitFor(async () => (await h.env.redis.llen(key)) === 0, 5000, 'popped once the worker runs low');
    } finally {
      await fast.stop();
    }
  });
});
