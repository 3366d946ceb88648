/**
 * Webhook delivery end to end in one process: events appended to the stream, the archive
 * and webhooks projections run by the real runner, a real delivery worker, and real
 * receiver servers on 127.0.0.1 (WEBHOOK_ALLOW_PRIVATE_TARGETS on, except where the SSRF
 * guard itself is under test).
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { Keypair } from '@solana/web3.js';
import { Webhook } from 'standardwebhooks';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startWebhookProjections } from '../support/webhook-harness.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { waitFor } from '../support/process.js';
import { appendTestEvents, makeEvent } from '../support/anchor-events.js';
import { registerWebhookRoutes } from '../../commands/webhooks/routes.js';
import { registerEventRoutes } from '../../queries/events/routes.js';
import { createLogger } from '../../infra/log/logger.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { startWebhookWorker, type WebhookWorker } from '../../commands/webhooks/delivery/worker.js';
import { sealSecret } from '../../infra/crypto/secret-box.js';
import { secretAad } from '../../commands/webhooks/secret-aad.js';
import type { EventName } from '../../src/kernel/events/catalog.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';

const ADMIN = 'admin-key-for-delivery-tests';
const ENCRYPTION_KEY = 'cd'.repeat(32);
const logger = createLogger('silent', 'webhooks-test');
const pda = createPdaDeriver(PROGRAM_ID);

interface Attempt { attempt: number; success: boolean; statusCode: number | null; error: string | null; eventId: string; deliveryStatus: string; attemptedAt: string }

describe('webhook delivery', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let api: TestApi;
  let projections: { stop(): Promise<void> } | undefined;
  let worker: WebhookWorker | undefined;
  const receivers: Receiver[] = [];
  let seed = 0;

  const gateway = () => {
    const authority = Keypair.generate().publicKey.toBase58();
    return { authority, account: pda.gateway(authority) };
  };
  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  };
  async function call(method: string, path: string, body?: unknown) {
    const res = await fetch(`${api.url}${path}`, {
      method,
      headers: { 'x-admin-key': ADMIN, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: await res.json() as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
  }
  async function register(gatewayPubkey: string, url: string): Promise<{ id: number; secret: string }> {
    const r = await call('POST', '/v1/webhooks', { gateway_pubkey: gatewayPubkey, endpoint_url: url });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    return r.body;
  }
  const attempts = async (id: number): Promise<Attempt[]> => (await call('GET', `/v1/webhooks/${id}/deliveries`)).body;
  const event = (name: EventName, fields: Record<string, unknown>): TributaryEvent => makeEvent(name, fields, `delivery-${(seed += 1)}`);
  const append = (...events: TributaryEvent[]) => appendTestEvents(env, events);
  const startWorker = (over: Record<string, string> = {}) => {
    const config = loadConfig({ ...env.env, SIGNING_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_MS: '50', ...over });
    worker = startWebhookWorker({ config, db: env.db, logger, clock: systemClock });
    return worker;
  };

  before(async () => {
    env = await createTestEnv('webhooks_delivery');
    api = await startTestApi(env, { ADMIN_API_KEY: ADMIN, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SIGNING_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY }, { modules: [registerWebhookRoutes, registerEventRoutes] });
    projections = startWebhookProjections(env, logger);
  });
  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
  });
  after(async () => {
    await projections?.stop();
    for (const r of receivers) await r.close();
    await api.close();
    await env.close();
  });

  it('waits 10 s per attempt and retries after 1 s, 2 s and 3 s by default', () => {
    const cfg = loadConfig({ SOLANA_RPC_URL: 'https://rpc.example' }).webhooks;
    expect(cfg.timeoutMs).to.equal(10_000);
    expect(cfg.retryDelaysMs).to.deep.equal([1000, 2000, 3000]);
    // private targets are refused against a real cluster, allowed on the localnet
    expect(cfg.allowPrivateTargets).to.equal(false);
    expect(loadConfig({}).webhooks.allowPrivateTargets).to.equal(true);
  });

  it('delivers every event that concerns the gateway, signed, with the event as the events API returns it', async () => {
    const g = gateway();
    const stranger = gateway();
    const byAuthority = await receiver();
    const byAccount = await receiver();
    const hookA = await register(g.authority, byAuthority.url);
    await register(g.account, byAccount.url);
    startWorker();

    const userPayment = Keypair.generate().publicKey.toBase58();
    const created = event('PaymentGatewayCreated', { authority: g.authority });
    const payment = event('PaymentRecord', { gateway: g.account });
    const policyCreated = event('PaymentPolicyCreated', { gateway: g.account, user_payment: userPayment, policy_id: 3 });
    const statusChanged = event('PaymentPolicyStatusChanged', { payment_policy: pda.paymentPolicy(userPayment, 3) });
    const feeChanged = event('GatewayFeeBpsChanged', { gateway: g.account });
    const notOurs = [event('PaymentRecord', { gateway: stranger.account }), event('UserPaymentCreated', {}), event('ProgramConfigCreated', {})];
    const ours = [created, payment, policyCreated, statusChanged, feeChanged];
    await append(created, notOurs[0]!, payment, policyCreated, notOurs[1]!, statusChanged, notOurs[2]!, feeChanged);

    for (const r of [byAuthority, byAccount]) {
      const got = await r.waitFor(ours.length);
      await new Promise((res) => setTimeout(res, 300));
      expect(r.requests).to.have.length(ours.length);
      expect(new Set(got.map((q) => q.headers['webhook-id']))).to.deep.equal(new Set(ours.map((e) => e.id)));
    }

    const req = byAuthority.requests.find((q) => q.headers['webhook-id'] === payment.id)!;
    expect(req.method).to.equal('POST');
    expect(req.path).to.equal('/hook');
    expect(req.headers['content-type']).to.equal('application/json');
    const verified = new Webhook(hookA.secret).verify(req.body, {
      'webhook-id': String(req.headers['webhook-id']),
      'webhook-timestamp': String(req.headers['webhook-timestamp']),
      'webhook-signature': String(req.headers['webhook-signature']),
    }) as { id: string; type: string; createdAt: string; data: unknown };
    expect(Object.keys(verified)).to.deep.equal(['id', 'type', 'createdAt', 'data']);
    expect(verified.id).to.equal(payment.id);
    expect(verified.type).to.equal('PaymentRecord');
    expect(verified.createdAt).to.equal(new Date(payment.blockTime! * 1000).toISOString());
    const fromApi = await waitFor(async () => {
      const r = await call('GET', `/v1/events?signature=${payment.signature}`);
      return r.status === 200 ? r.body : undefined;
    }, 10_000, 'the payment in the events API');
    expect(verified.data).to.deep.equal(fromApi);

    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(req.body, req.headers as Record<string, string>)).to.throw();
    const list = await attempts(hookA.id);
    expect(list).to.have.length(ours.length);
    expect(list.every((a) => a.success && a.statusCode === 200 && a.deliveryStatus === 'delivered' && a.attempt === 1)).to.equal(true);
  });

  it('reaches the gateway of a policy created before the projection existed, through the policies read model', async () => {
    const g = gateway();
    const r = await receiver();
    await register(g.authority, r.url);
    startWorker();
    const policy = Keypair.generate().publicKey.toBase58();
    await sql`
      INSERT INTO composable_policies (address, policy_id, user_payment, gateway, recipient, variant, policy_type, memo, tracking_id, status, total_paid, payment_count, created_slot, created_signature)
      VALUES (${policy}, 1, ${Keypair.generate().publicKey.toBase58()}, ${g.account}, ${g.authority}, 'OneTime', '{}'::jsonb, '\\x00'::bytea, '', 'Active', 0, 0, 1, 'sig')`.execute(env.db);
    const e = event('ComposablePolicyStatusChanged', { composable_policy: policy });
    await append(e, event('ComposablePolicyDeleted', { composable_policy: Keypair.generate().publicKey.toBase58() }));
    const got = await r.waitFor(1);
    await new Promise((res) => setTimeout(res, 300));
    expect(got.map((q) => q.headers['webhook-id'])).to.deep.equal([e.id]);
    expect(r.requests).to.have.length(1);
  });

  it('retries a 500, 500 answer after ~1 s and ~2 s and records the three attempts', async () => {
    const g = gateway();
    const r = await receiver((n) => (n < 2 ? 500 : 200));
    const hook = await register(g.authority, r.url);
    startWorker();
    const e = event('PaymentRecord', { gateway: g.account });
    await append(e);
    const got = await r.waitFor(3, 15_000);
    const gap1 = got[1]!.at - got[0]!.at;
    const gap2 = got[2]!.at - got[1]!.at;
    expect(gap1).to.be.within(950, 1600);
    expect(gap2).to.be.within(1950, 2700);
    expect(got.map((q) => q.headers['webhook-id'])).to.deep.equal([e.id, e.id, e.id]);
    const list = await waitFor(async () => {
      const l = await attempts(hook.id);
      return l.length === 3 && l[0]!.deliveryStatus === 'delivered' ? l : undefined;
    }, 5000, 'three recorded attempts');
    expect(list.map((a) => [a.attempt, a.statusCode, a.success])).to.deep.equal([[3, 200, true], [2, 500, false], [1, 500, false]]);
    expect(list[1]!.error).to.equal('HTTP 500');
    await new Promise((res) => setTimeout(res, 300));
    expect(r.requests).to.have.length(3);
  });

  it('times out a receiver that never answers, retries, reschedules, marks it dead, and goes on delivering', async () => {
    const g = gateway();
    const silent = await receiver(() => 'hang');
    const healthy = await receiver();
    const hook = await register(g.authority, silent.url);
    await register(g.account, healthy.url);
    const w = startWorker({ WEBHOOK_TIMEOUT_MS: '300', WEBHOOK_RETRY_DELAYS_MS: '100,100,100', WEBHOOK_SLOW_SCHEDULE_MS: '400' });
    const first = event('PaymentRecord', { gateway: g.account });
    await append(first);
    const list = await waitFor(async () => {
      const l = await attempts(hook.id);
      return l[0]?.deliveryStatus === 'dead' ? l : undefined;
    }, 20_000, 'the delivery marked dead');
    expect(list).to.have.length(5); // 1 + 3 quick retries, then the one slow retry
    expect(list.every((a) => !a.success && a.statusCode === null && /timed out after 300 ms/.test(a.error ?? ''))).to.equal(true);
    expect(silent.requests).to.have.length(5);
    const slowGap = Date.parse(list[0]!.attemptedAt) - Date.parse(list[1]!.attemptedAt);
    expect(slowGap).to.be.at.least(400);

    const later = event('GatewaySignerChanged', { gateway: g.account });
    await append(later);
    await healthy.waitFor(2);
    expect(healthy.requests.map((q) => q.headers['webhook-id'])).to.deep.equal([first.id, later.id]);
    expect(w.stats().errors).to.equal(0);
    expect(w.stats().outcomes.dead).to.equal(1);
    // the later event is still being retried against the silent receiver: stop that here
    expect((await call('DELETE', `/v1/webhooks/${hook.id}`)).body).to.deep.equal({ deleted: 1 });
  });

  it('shares the outbox between workers: each delivery made once', async () => {
    const g = gateway();
    const r = await receiver();
    await register(g.authority, r.url);
    const config = loadConfig({ ...env.env, SIGNING_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_MS: '20', WEBHOOK_CONCURRENCY: '4' });
    const pool = [0, 1, 2].map(() => startWebhookWorker({ config, db: env.db, logger, clock: systemClock }));
    try {
      const events = Array.from({ length: 300 }, () => event('PaymentRecord', { gateway: g.account }));
      await append(...events);
      await r.waitFor(300, 20_000);
      await new Promise((res) => setTimeout(res, 300));
      const ids = r.requests.map((q) => q.headers['webhook-id']);
      expect(ids).to.have.length(300);
      expect(new Set(ids)).to.deep.equal(new Set(events.map((e) => e.id)));
      expect(pool.filter((w) => w.stats().claimed > 0).length).to.be.greaterThan(1);
      expect(pool.reduce((n, w) => n + w.stats().outcomes.delivered, 0)).to.equal(300);
    } finally {
      for (const w of pool) await w.stop();
    }
  });

  it('delivers nothing to an inactive webhook, and resumes when it is active again', async () => {
    const g = gateway();
    const off = await receiver();
    const sentinel = await receiver();
    const hook = await register(g.authority, off.url);
    await register(g.account, sentinel.url);
    expect((await call('PUT', `/v1/webhooks/${hook.id}`, { active: false })).body.active).to.equal(false);
    startWorker();
    const e1 = event('PaymentRecord', { gateway: g.account });
    await append(e1);
    await sentinel.waitFor(1);
    await new Promise((res) => setTimeout(res, 300));
    expect(off.requests).to.have.length(0);
    expect(await attempts(hook.id)).to.deep.equal([]);

    await call('PUT', `/v1/webhooks/${hook.id}`, { active: true });
    const e2 = event('PaymentRecord', { gateway: g.account });
    await append(e2);
    const got = await off.waitFor(1);
    expect(got.map((q) => q.headers['webhook-id'])).to.deep.equal([e2.id]);
  });

  it('deleting a gateway\'s webhooks removes them with their pending deliveries: nothing more is sent', async () => {
    const g = gateway();
    const r1 = await receiver((n) => (n === 0 ? 503 : 200));
    const r2 = await receiver();
    const sentinelGw = gateway();
    const sentinel = await receiver();
    const h1 = await register(g.authority, r1.url);
    const h2 = await register(g.authority, r2.url);
    await register(sentinelGw.authority, sentinel.url);
    startWorker({ WEBHOOK_RETRY_DELAYS_MS: '5000' });
    await append(event('PaymentRecord', { gateway: g.account }));
    await r1.waitFor(1); // answered 503: its quick retry waits 5 s
    const del = await call('DELETE', `/v1/webhooks/gateway/${g.authority}`);
    expect(del.body).to.deep.equal({ deleted: 2 });
    expect((await call('GET', `/v1/webhooks/gateway/${g.authority}`)).body).to.deep.equal([]);
    expect((await call('GET', `/v1/webhooks/${h1.id}`)).status).to.equal(404);
    expect((await call('GET', `/v1/webhooks/${h2.id}`)).status).to.equal(404);
    const rows = await env.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', 'in', [h1.id, h2.id]).execute();
    expect(rows).to.deep.equal([]);
    await append(event('PaymentRecord', { gateway: g.account }), event('PaymentRecord', { gateway: sentinelGw.account }));
    await sentinel.waitFor(1);
    await new Promise((res) => setTimeout(res, 300));
    expect(r1.requests).to.have.length(1);
    expect(r2.requests.length).to.be.at.most(1);
    expect(worker!.stats().errors).to.equal(0);
  });

  it('refuses private targets at connection time when they are not allowed (a name that resolves to loopback)', async () => {
    const g = gateway();
    const inside = await receiver();
    const port = new URL(inside.url).port;
    // Registered while the name pointed elsewhere (DNS rebinding): written straight to the table.
    const ids: number[] = [];
    for (const url of [`http://localhost:${port}/hook`, `http://127.0.0.1:${port}/hook`]) {
      const now = new Date();
      const row = await env.db.insertInto('webhooks').values({
        gateway_pubkey: g.authority, gateway_account: g.account, endpoint_url: url, secret: 'pending', created_at: now, updated_at: now,
      }).returning('id').executeTakeFirstOrThrow();
      await env.db.updateTable('webhooks').set({ secret: sealSecret('whsec_' + Buffer.alloc(32, 9).toString('base64'), secretAad(row.id), undefined) }).where('id', '=', row.id).execute();
      ids.push(row.id);
    }
    startWorker({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_RETRY_DELAYS_MS: '50', WEBHOOK_SLOW_SCHEDULE_MS: '100' });
    await append(event('PaymentRecord', { gateway: g.account }));
    for (const id of ids) {
      const list = await waitFor(async () => {
        const l = await attempts(id);
        return l[0]?.deliveryStatus === 'dead' ? l : undefined;
      }, 10_000, 'refused attempts');
      expect(list).to.have.length(3);
      expect(list.every((a) => /target refused: .*127\.0\.0\.1.*loopback/.test(a.error ?? ''))).to.equal(true);
    }
    expect(inside.requests).to.have.length(0);
  });
});
