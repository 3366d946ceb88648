/**
 * Issue 17, what receivers tell us and how delivery answers: 410 Gone disables, 429/503
 * Retry-After pauses the endpoint, a per-endpoint rate holds across two workers, the
 * 5-day rule (a movable clock), ordered delivery under a failing event, and retention.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { waitFor } from '../support/process.js';
import { startHarness, type Harness } from '../support/webhook-harness.js';
import type { ReceivedRequest } from '../support/receiver.js';
import { pruneAll } from '../../commands/webhooks/delivery/retention.js';

const settle = (ms = 400) => new Promise((r) => setTimeout(r, ms));
const DAY = 86_400_000;
const typeOf = (q: ReceivedRequest) => (JSON.parse(q.body) as { type: string }).type;

describe('webhooks: receiver signals, ordering, retention (issue 17)', function () {
  this.timeout(90_000);
  let h: Harness;

  before(async () => { h = await startHarness('webhooks_signals'); });
  afterEach(async () => {
    h.clock.offsetMs = 0;
    await h.stopWorkers();
  });
  after(async () => { await h.close(); });

  it('disables an endpoint that answers 410 at once, and tells the gateway\'s other endpoints', async () => {
    const g = h.gateway();
    const gone = await h.receiver(() => 410);
    const sibling = await h.receiver();
    const hook = await h.register(g.authority, gone.url);
    await h.register(g.account, sibling.url);
    h.startWorker();
    await h.append(h.event('PaymentRecord', { gateway: g.account }));
    await gone.waitFor(1);
    const got = await sibling.waitFor(2);
    const notice = got.find((q) => typeOf(q) === 'webhook.disabled')!;
    expect(JSON.parse(notice.body).data).to.include({ webhookId: hook.id, endpointUrl: gone.url, disabledReason: 'the endpoint answered 410 Gone' });
    const w = (await h.call('GET', `/v1/webhooks/${hook.id}`)).body;
    expect(w).to.include({ active: false, disabled_reason: 'the endpoint answered 410 Gone' });
    await h.append(h.event('PaymentRecord', { gateway: g.account }));
    await sibling.waitFor(3);
    await settle();
    expect(gone.requests).to.have.length(1); // no retry, nothing more
    // reactivating clears the reason
    expect((await h.call('PUT', `/v1/webhooks/${hook.id}`, { active: true })).body.disabled_reason).to.equal(null);
  });

  for (const status of [429, 503]) {
    it(`waits as a ${status} with Retry-After asks, for that endpoint's other deliveries too`, async () => {
      const g = h.gateway();
      const r = await h.receiver((n) => (n === 0 ? { status, headers: { 'Retry-After': '2' } } : 200));
      await h.register(g.authority, r.url);
      h.startWorker();
      const first = h.event('PaymentRecord', { gateway: g.account });
      await h.append(first);
      const [asked] = await r.waitFor(1);
      const second = h.event('GatewaySignerChanged', { gateway: g.account });
      await h.append(second);
      const got = await r.waitFor(3, 10_000);
      expect(got[1]!.at - asked!.at).to.be.at.least(1900); // not the 1 s quick retry
      expect(got.slice(1).map((q) => q.headers['webhook-id']).sort()).to.deep.equal([first.id, second.id].sort());
      expect(Math.min(...got.slice(1).map((q) => q.at)) - asked!.at).to.be.at.least(1900);
    });
  }

  it('holds rate_limit_per_second across two workers', async () => {
    const g = h.gateway();
    const r = await h.receiver();
    await h.register(g.authority, r.url, { rate_limit_per_second: 5 });
    h.startWorker({ WEBHOOK_CONCURRENCY: '8' });
    h.startWorker({ WEBHOOK_CONCURRENCY: '8' });
    const events = Array.from({ length: 15 }, () => h.event('PaymentRecord', { gateway: g.account }));
    await h.append(...events);
    const got = await r.waitFor(15, 30_000);
    const at = got.map((q) => q.at).sort((a, b) => a - b);
    expect(at[14]! - at[0]!).to.be.at.least(14 * 200 * 0.85);
    // in any one-second window, at most the rate (plus one at the window's edge)
    for (const t of at) expect(at.filter((u) => u >= t && u < t + 1000).length).to.be.at.most(6);
    expect(new Set(got.map((q) => q.headers['webhook-id'])).size).to.equal(15);
  });

  it('disables an endpoint failing for 5 days (a success ends the streak), and tells its siblings', async () => {
    const g = h.gateway();
    let recovering = false;
    const failing = await h.receiver(() => 500);
    const flaky = await h.receiver(() => (recovering ? 200 : 500));
    const sibling = await h.receiver();
    const dying = await h.register(g.authority, failing.url);
    const survivor = await h.register(g.authority, flaky.url);
    await h.register(g.account, sibling.url);
    h.startWorker({ WEBHOOK_RETRY_DELAYS_MS: '20', WEBHOOK_SLOW_SCHEDULE_MS: '' });
    const round = async (n: number) => {
      await h.append(h.event('PaymentRecord', { gateway: g.account }));
      await failing.waitFor(n * 2);
      await flaky.waitFor(n * 2);
      await settle(300);
    };
    await round(1);
    h.clock.offsetMs = 1 * DAY;
    recovering = true;
    await h.append(h.event('PaymentRecord', { gateway: g.account }));
    await flaky.waitFor(3);
    await failing.waitFor(4);
    recovering = false;
    await settle(300);
    h.clock.offsetMs = 4 * DAY;
    await h.append(h.event('PaymentRecord', { gateway: g.account }));
    await failing.waitFor(6);
    await settle(300);
    expect((await h.call('GET', `/v1/webhooks/${dying.id}`)).body.active).to.equal(true); // 4 days: not yet
    h.clock.offsetMs = 5 * DAY + 60_000;
    await h.append(h.event('PaymentRecord', { gateway: g.account }));
    await failing.waitFor(7);
    const w = await waitFor(async () => {
      const b = (await h.call('GET', `/v1/webhooks/${dying.id}`)).body;
      return b.active === false ? b : undefined;
    }, 5000, 'the failing endpoint disabled');
    expect(w.disabled_reason).to.match(/^failing since .*: \d+ failed attempts and no success$/);
    const notices = (await sibling.waitFor(5)).filter((q) => typeOf(q) === 'webhook.disabled');
    expect(notices.map((q) => JSON.parse(q.body).data.webhookId)).to.deep.equal([dying.id]);
    // its streak began after its success on day 1: still active
    expect((await h.call('GET', `/v1/webhooks/${survivor.id}`)).body).to.include({ active: true, disabled_reason: null });
  });

  it('delivers an ordered endpoint\'s events one at a time, in stream order, a failing event holding the rest', async () => {
    const g = h.gateway();
    const r = await h.receiver((n) => (n < 3 ? 500 : 200));
    const concurrent = await h.receiver();
    await h.register(g.authority, r.url, { ordered: true });
    await h.register(g.account, concurrent.url);
    h.startWorker({ WEBHOOK_RETRY_DELAYS_MS: '100,100,100,100', WEBHOOK_CONCURRENCY: '16' });
    const events = Array.from({ length: 8 }, (_, i) => h.event(i % 2 ? 'GatewaySignerChanged' : 'PaymentRecord', { gateway: g.account }));
    await h.append(...events);
    await concurrent.waitFor(8); // the other endpoint is not held
    const got = await r.waitFor(11, 20_000);
    const ids = got.map((q) => q.headers['webhook-id']);
    // concurrent delivery would have sent the later events while the first one failed
    expect(ids).to.deep.equal([events[0]!.id, events[0]!.id, events[0]!.id, ...events.map((e) => e.id)]);
    await settle();
    expect(r.requests).to.have.length(11);
  });

  it('prunes delivered and dead deliveries past retention with their attempts, in batches, while delivery goes on', async () => {
    const g = h.gateway();
    const r = await h.receiver();
    const hook = await h.register(g.authority, r.url);
    const old = 2500;
    await sql`
      INSERT INTO webhook_deliveries (webhook_id, event_id, event_name, payload, status, created_at, finished_at)
      SELECT ${hook.id}, 'old-' || i, 'PaymentRecord', '{}'::json, CASE WHEN i % 2 = 0 THEN 'delivered' ELSE 'dead' END, now() - interval '32 days', now() - interval '31 days'
      FROM generate_series(1, ${old}) i`.execute(h.env.db);
    await sql`
      INSERT INTO webhook_attempts (delivery_id, webhook_id, event_id, event_name, attempt, attempted_at, latency_ms, success)
      SELECT id, webhook_id, event_id, event_name, 1, now(), 1, true FROM webhook_deliveries WHERE webhook_id = ${hook.id}`.execute(h.env.db);
    await sql`
      INSERT INTO webhook_deliveries (webhook_id, event_id, event_name, payload, status, created_at, finished_at)
      VALUES (${hook.id}, 'recent', 'PaymentRecord', '{}'::json, 'delivered', now() - interval '31 days', now() - interval '29 days')`.execute(h.env.db);
    h.startWorker({ WEBHOOK_PRUNE_INTERVAL_MS: '100' }, { prune: true });
    const live = Array.from({ length: 20 }, () => h.event('PaymentRecord', { gateway: g.account }));
    await h.append(...live);
    await r.waitFor(20);
    const left = await waitFor(async () => {
      const { rows } = await sql<{ event_id: string }>`SELECT event_id FROM webhook_deliveries WHERE webhook_id = ${hook.id} AND event_id LIKE 'old-%' LIMIT 1`.execute(h.env.db);
      return rows.length === 0 ? true : undefined;
    }, 20_000, 'old deliveries pruned');
    expect(left).to.equal(true);
    const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM webhook_attempts WHERE webhook_id = ${hook.id} AND event_id LIKE 'old-%'`.execute(h.env.db);
    expect(Number(rows[0]!.n)).to.equal(0);
    // the recent one and the 20 just delivered (a pushed first attempt's row is written with its outcome, just after its POST)
    const kept = await waitFor(async () => {
      const k = await h.env.db.selectFrom('webhook_deliveries').select('event_id').where('webhook_id', '=', hook.id).execute();
      return k.length >= 21 ? k : undefined;
    }, 5000, 'the 20 deliveries recorded');
    expect(kept.map((k) => k.event_id)).to.include('recent');
    expect(kept).to.have.length(21);
    // a movable clock moves the cutoff: 30 days on, everything finished is old
    expect(await pruneAll(h.env.db, 30, Date.now() + 30 * DAY)).to.be.at.least(21);
  });
});
