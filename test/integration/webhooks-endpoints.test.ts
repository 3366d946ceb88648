/**
 * Issue 17, what a merchant sets and asks for: event types per endpoint (chain events
 * through the projection, lifecycle events written straight into the outbox as the
 * scheduler does), secret rotation with its grace, resend, recover and the test event.
 * Real receivers, a real worker, the real API.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { waitFor } from '../support/process.js';
import { startHarness, type Harness } from '../support/webhook-harness.js';
import type { ReceivedRequest } from '../support/receiver.js';
import { LIFECYCLE_EVENT_TYPES } from '../../commands/webhooks/delivery/event-types.js';
import { enqueueOutboxEvent } from '../../commands/webhooks/delivery/outbox-enqueue.js';

const settle = (ms = 400) => new Promise((r) => setTimeout(r, ms));
const headersOf = (q: ReceivedRequest) => ({
  'webhook-id': String(q.headers['webhook-id']),
  'webhook-timestamp': String(q.headers['webhook-timestamp']),
  'webhook-signature': String(q.headers['webhook-signature']),
});
const verifies = (secret: string, q: ReceivedRequest): boolean => {
  try {
    new Webhook(secret).verify(q.body, headersOf(q));
    return true;
  } catch {
    return false;
  }
};

describe('webhooks: endpoint settings and tools (issue 17)', function () {
  this.timeout(60_000);
  let h: Harness;

  before(async () => { h = await startHarness('webhooks_endpoints', { WEBHOOK_SECRET_GRACE_SECONDS: '60' }); });
  afterEach(async () => {
    h.clock.offsetMs = 0;
    await h.stopWorkers();
  });
  after(async () => { await h.close(); });

  it('lists the event types with a description and an example body each, lifecycle types included', async () => {
    const r = await h.call('GET', '/v1/webhooks/event-types');
    expect(r.status).to.equal(200);
    const names = (r.body as { name: string }[]).map((t) => t.name);
    for (const n of ['PaymentRecord', 'PaymentPolicyCreated', ...LIFECYCLE_EVENT_TYPES, 'webhook.disabled', 'webhook.test']) expect(names).to.include(n);
    for (const t of r.body as { name: string; description: string; example: { id: string; type: string; createdAt: string; data: unknown } }[]) {
      expect(t.description).to.be.a('string').and.not.equal('');
      expect(t.example.type).to.equal(t.name);
      expect(Object.keys(t.example)).to.deep.equal(['id', 'type', 'createdAt', 'data']);
    }
    const payment = (r.body as { name: string; example: { data: { data: Record<string, unknown> } } }[]).find((t) => t.name === 'PaymentRecord')!;
    expect(payment.example.data.data['amount']).to.equal('1000000');
  });

  it('validates event_types, ordered and rate_limit_per_second with the error envelope', async () => {
    const g = h.gateway();
    for (const extra of [{ event_types: ['NoSuchEvent'] }, { event_types: [] }, { event_types: ['PaymentRecord', 'PaymentRecord'] }, { event_types: 'PaymentRecord' },
      { event_types: ['webhook.test'] }, { rate_limit_per_second: 0 }, { rate_limit_per_second: 1.5 }, { ordered: 'sometimes' }]) {
      const r = await h.call('POST', '/v1/webhooks', { gateway_pubkey: g.authority, endpoint_url: 'http://127.0.0.1:9/x', ...extra });
      expect(r.status, JSON.stringify(extra)).to.equal(400);
      expect(r.body.success).to.equal(false);
      expect(r.body.error).to.be.a('string');
    }
    const ok = await h.register(g.authority, 'http://127.0.0.1:9/y', { event_types: ['payment.failed', 'PaymentRecord'], ordered: true, rate_limit_per_second: 7 });
    const got = (await h.call('GET', `/v1/webhooks/${ok.id}`)).body;
    expect(got).to.include({ ordered: true, rate_limit_per_second: 7, disabled_reason: null, previous_secret_expires_at: null });
    expect(got.event_types).to.deep.equal(['PaymentRecord', 'payment.failed']);
    const upd = await h.call('PUT', `/v1/webhooks/${ok.id}`, { active: true, event_types: null, ordered: false, rate_limit_per_second: null });
    expect(upd.body).to.include({ ordered: false, rate_limit_per_second: null, event_types: null });
    expect((await h.call('PUT', `/v1/webhooks/${ok.id}`, { active: true, event_types: ['Nope'] })).status).to.equal(400);
  });

  it('delivers only the subscribed types, chain and lifecycle alike; an update changes what follows', async () => {
    const g = h.gateway();
    const some = await h.receiver();
    const all = await h.receiver();
    const filtered = await h.register(g.authority, some.url, { event_types: ['PaymentRecord', 'payment.failed'] });
    const unfiltered = await h.register(g.authority, all.url);
    h.startWorker();
    const payment = h.event('PaymentRecord', { gateway: g.account });
    const fee = h.event('GatewayFeeBpsChanged', { gateway: g.account });
    await h.append(payment, fee);
    // lifecycle events enter the outbox through enqueueOutboxEvent, or a plain INSERT: the filter holds for both
    expect(await enqueueOutboxEvent(h.env.db, { gateway: [g.account], eventId: 'payment.failed:x', type: 'payment.failed', data: { policy: 'p' } })).to.equal(2);
    for (const id of [filtered.id, unfiltered.id]) {
      await sql`INSERT INTO webhook_deliveries (webhook_id, event_id, event_name, payload) VALUES (${id}, 'subscription.canceled:x', 'subscription.canceled', ${JSON.stringify({ policy: 'p' })}::json)`.execute(h.env.db);
    }
    await all.waitFor(4);
    await settle();
    const types = (qs: ReceivedRequest[]) => qs.map((q) => (JSON.parse(q.body) as { type: string }).type).sort();
    expect(types(all.requests)).to.deep.equal(['GatewayFeeBpsChanged', 'PaymentRecord', 'payment.failed', 'subscription.canceled']);
    expect(types(some.requests)).to.deep.equal(['PaymentRecord', 'payment.failed']);

    await h.call('PUT', `/v1/webhooks/${filtered.id}`, { active: true, event_types: ['GatewayFeeBpsChanged'] });
    await h.append(h.event('PaymentRecord', { gateway: g.account }), h.event('GatewayFeeBpsChanged', { gateway: g.account }));
    await all.waitFor(6);
    await settle();
    expect(types(some.requests)).to.deep.equal(['GatewayFeeBpsChanged', 'PaymentRecord', 'payment.failed']);
  });

  it('rotates the secret: both signatures during the grace, the new one alone after it', async () => {
    const g = h.gateway();
    const r = await h.receiver();
    const hook = await h.register(g.authority, r.url);
    h.startWorker();
    const rot = await h.call('POST', `/v1/webhooks/${hook.id}/secret/rotate`);
    expect(rot.status).to.equal(200);
    const fresh = rot.body.secret as string;
    expect(fresh).to.match(/^whsec_/).and.not.equal(hook.secret);
    expect(Date.parse(rot.body.previous_secret_expires_at) - Date.now()).to.be.within(50_000, 61_000);
    expect((await h.call('GET', `/v1/webhooks/${hook.id}`)).body.previous_secret_expires_at).to.equal(rot.body.previous_secret_expires_at);

    await h.append(h.event('PaymentRecord', { gateway: g.account }));
    const [during] = await r.waitFor(1);
    expect(String(during!.headers['webhook-signature']).split(' ')).to.have.length(2);
    expect(verifies(fresh, during!)).to.equal(true);
    expect(verifies(hook.secret, during!)).to.equal(true);

    h.clock.offsetMs = 61_000; // past the grace (still within the verifier's 5-minute tolerance)
    await h.append(h.event('PaymentRecord', { gateway: g.account }));
    const after = (await r.waitFor(2))[1]!;
    expect(String(after.headers['webhook-signature']).split(' ')).to.have.length(1);
    expect(verifies(fresh, after)).to.equal(true);
    expect(verifies(hook.secret, after)).to.equal(false);
  });

  it('resends one delivery, and recovers every failed or dead delivery since a time', async () => {
    const g = h.gateway();
    let healthy = true;
    const r = await h.receiver(() => (healthy ? 200 : 500));
    const hook = await h.register(g.authority, r.url);
    h.startWorker({ WEBHOOK_RETRY_DELAYS_MS: '50', WEBHOOK_SLOW_SCHEDULE_MS: '100' });
    const first = h.event('PaymentRecord', { gateway: g.account });
    await h.append(first);
    await r.waitFor(1);
    const delivered = await waitFor(async () => {
      const l = (await h.call('GET', `/v1/webhooks/${hook.id}/deliveries`)).body as { deliveryId: string; deliveryStatus: string }[];
      return l[0]?.deliveryStatus === 'delivered' ? l[0] : undefined;
    }, 5000, 'the first delivery delivered');
    const resent = await h.call('POST', `/v1/webhooks/${hook.id}/deliveries/${delivered.deliveryId}/resend`);
    expect(resent.status).to.equal(202);
    expect(resent.body).to.deep.equal({ deliveryId: delivered.deliveryId, status: 'pending' });
    const again = (await r.waitFor(2))[1]!;
    expect(again.headers['webhook-id']).to.equal(first.id);
    expect((await h.call('POST', `/v1/webhooks/${hook.id}/deliveries/999999999/resend`)).status).to.equal(404);
    expect((await h.call('POST', `/v1/webhooks/${hook.id}/deliveries/abc/resend`)).status).to.equal(400);

    healthy = false;
    const since = new Date().toISOString();
    const lost = [h.event('PaymentRecord', { gateway: g.account }), h.event('GatewaySignerChanged', { gateway: g.account })];
    await h.append(...lost);
    await waitFor(async () => {
      const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ${hook.id} AND status = 'dead'`.execute(h.env.db);
      return Number(rows[0]!.n) === 2;
    }, 10_000, 'two dead deliveries');
    healthy = true;
    const before = r.requests.length;
    expect((await h.call('POST', `/v1/webhooks/${hook.id}/recover`, { since: 'yesterday' })).status).to.equal(400);
    const rec = await h.call('POST', `/v1/webhooks/${hook.id}/recover`, { since });
    expect(rec.status).to.equal(202);
    expect(rec.body).to.deep.equal({ recovered: 2 });
    await r.waitFor(before + 2);
    await settle();
    expect(r.requests.slice(before).map((q) => q.headers['webhook-id']).sort()).to.deep.equal(lost.map((e) => e.id).sort());
  });

  it('sends a signed webhook.test and answers the outcome, whatever the event_types', async () => {
    const g = h.gateway();
    let status = 200;
    const r = await h.receiver(() => status);
    const hook = await h.register(g.authority, r.url, { event_types: ['PaymentRecord'] });
    const ok = await h.call('POST', `/v1/webhooks/${hook.id}/test`);
    expect(ok.status).to.equal(200);
    expect(ok.body).to.include({ success: true, statusCode: 200, error: null });
    const q = r.requests[0]!;
    expect(verifies(hook.secret, q)).to.equal(true);
    expect(JSON.parse(q.body)).to.include({ type: 'webhook.test', id: ok.body.eventId });
    status = 500;
    const bad = await h.call('POST', `/v1/webhooks/${hook.id}/test`);
    expect(bad.body).to.include({ success: false, statusCode: 500, error: 'HTTP 500' });
    const attempts = (await h.call('GET', `/v1/webhooks/${hook.id}/deliveries`)).body as { eventType: string; deliveryStatus: string }[];
    expect(attempts.map((a) => [a.eventType, a.deliveryStatus])).to.deep.equal([['webhook.test', 'dead'], ['webhook.test', 'delivered']]);
    expect((await h.call('POST', '/v1/webhooks/424242/test')).status).to.equal(404);
  });
});
