/**
 * The delivery worker as a real process (`serve --role webhooks`), killed with SIGKILL
 * while a delivery is in flight: after a restart the delivery is made, with the same
 * webhook-id and a valid signature, once its lease has run out. Both ways a first attempt
 * reaches a worker: the claim, and the projection's push (the fast path: the delivery is
 * then its event's fan-out row's, expanded into an outbox row when the lease ends).
 */
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { Webhook } from 'standardwebhooks';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startCli, waitFor, type Proc } from '../support/process.js';
import { appendTestEvents, makeEvent } from '../support/anchor-events.js';
import { registerWebhookRoutes } from '../../commands/webhooks/routes.js';
import { webhooksProjection } from '../../projections/webhooks/projection.js';
import { startProjection, type RunningProjection } from '../../projections/runner/runner.js';
import { createRedis } from '../../infra/redis/client.js';
import { createLogger } from '../../infra/log/logger.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { webhookPoppersKey } from '../../src/kernel/names/index.js';

const ADMIN = 'admin-key-for-crash-test';

describe('webhook worker under kill -9', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let api: TestApi;
  let receiver: Receiver;
  let pushed: Receiver;
  let blocking: ReturnType<typeof createRedis>;
  let projection: RunningProjection;
  let proc: Proc | undefined;

  const workerEnv = () => ({
    ...env.env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_RETRY_DELAYS_MS: '200,200,200', WEBHOOK_POLL_MS: '100',
  });

  before(async () => {
    env = await createTestEnv('webhooks_crash');
    api = await startTestApi(env, { ADMIN_API_KEY: ADMIN, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, { modules: [registerWebhookRoutes] });
    // the first request is never answered: the worker is killed while it waits
    receiver = await startReceiver((n) => (n === 0 ? 'hang' : 200));
    pushed = await startReceiver((n) => (n === 0 ? 'hang' : 200));
    blocking = createRedis({ url: env.redisUrl, sentinels: [], sentinelName: '' });
    const logger = createLogger('silent', 'crash-test');
    projection = startProjection({ db: env.db, redis: env.redis, blockingRedis: blocking, keys: env.keys, logger }, webhooksProjection,
      { batchSize: 100, blockMs: 50, maxAttempts: 3, claimIdleMs: 5000 });
  });
  after(async () => {
    proc?.child.kill('SIGKILL');
    await projection.stop();
    blocking.disconnect();
    await receiver.close();
    await pushed.close();
    await api.close();
    await env.close();
  });

  it('delivers after a restart with the same webhook-id', async () => {
    const authority = Keypair.generate().publicKey.toBase58();
    const gateway = createPdaDeriver(PROGRAM_ID).gateway(authority);
    const created = await fetch(`${api.url}/v1/webhooks`, {
      method: 'POST',
      headers: { 'x-admin-key': ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ gateway_pubkey: authority, endpoint_url: receiver.url }),
    });
    const hook = await created.json() as { id: number; secret: string };
    expect(created.status).to.equal(201);

    proc = startCli(['serve', '--role', 'webhooks'], workerEnv());
    const event = makeEvent('PaymentRecord', { gateway }, 'crash-1');
    await appendTestEvents(env, [event]);

    await receiver.waitFor(1, 30_000);
    proc.child.kill('SIGKILL');
    expect(await proc.exited).to.equal(null);
    const killedAt = Date.now();

    proc = startCli(['serve', '--role', 'webhooks'], workerEnv());
    const got = await receiver.waitFor(2, 30_000);
    expect(got[1]!.at - killedAt).to.be.below(10_000);
    expect(got.map((r) => r.headers['webhook-id'])).to.deep.equal([event.id, event.id]);
    const second = got[1]!;
    const body = new Webhook(hook.secret).verify(second.body, {
      'webhook-id': String(second.headers['webhook-id']),
      'webhook-timestamp': String(second.headers['webhook-timestamp']),
      'webhook-signature': String(second.headers['webhook-signature']),
    }) as { id: string; type: string };
    expect(body).to.include({ id: event.id, type: 'PaymentRecord' });

    const delivery = await waitFor(async () => {
      const d = await env.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', hook.id).executeTakeFirst();
      return d?.status === 'delivered' ? d : undefined;
    }, 10_000, 'the delivery marked delivered');
    expect(delivery.event_id).to.equal(event.id);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.requests).to.have.length(2);

    proc.child.kill('SIGTERM');
    expect(await proc.exited).to.equal(0);
    proc = undefined;
  });
  it('delivers a pushed first attempt whose worker was killed mid-POST, with the same webhook-id, once its lease ends', async () => {
    const authority = Keypair.generate().publicKey.toBase58();
    const gateway = createPdaDeriver(PROGRAM_ID).gateway(authority);
    const created = await fetch(`${api.url}/v1/webhooks`, {
      method: 'POST',
      headers: { 'x-admin-key': ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ gateway_pubkey: authority, endpoint_url: pushed.url }),
    });
    const hook = await created.json() as { id: number; secret: string };
    expect(created.status).to.equal(201);

    proc = startCli(['serve', '--role', 'webhooks'], workerEnv());
    // the worker announces that it pops; the projection asks at most once a second
    await waitFor(async () => (await env.redis.get(webhookPoppersKey(env.env['REDIS_PREFIX']!))) !== null, 30_000, 'the worker pops');
    await new Promise((r) => setTimeout(r, 1100));
    // a first delivery warms the process up (its modules and connections): an entry popped
    // later than its lease allows is taken over by id, and would not show the fast path
    const warm = Keypair.generate().publicKey.toBase58();
    await fetch(`${api.url}/v1/webhooks`, {
      method: 'POST',
      headers: { 'x-admin-key': ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ gateway_pubkey: warm, endpoint_url: receiver.url }),
    });
    const before = receiver.requests.length;
    await appendTestEvents(env, [makeEvent('PaymentRecord', { gateway: createPdaDeriver(PROGRAM_ID).gateway(warm) }, 'crash-push-warm')]);
    await receiver.waitFor(before + 1, 30_000);
    const event = makeEvent('PaymentRecord', { gateway }, 'crash-push-1');
    await appendTestEvents(env, [event]);

    await pushed.waitFor(1, 30_000);
    // taken from the push, not claimed: the delivery is its event's fan-out's until its outcome
    const fanout = await env.db.selectFrom('webhook_fanouts').selectAll().where('event_id', '=', event.id).executeTakeFirstOrThrow();
    expect(fanout.webhook_ids).to.deep.equal([hook.id]);
    expect(await env.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', hook.id).execute()).to.deep.equal([]);
    proc.child.kill('SIGKILL');
    expect(await proc.exited).to.equal(null);

    proc = startCli(['serve', '--role', 'webhooks'], workerEnv());
    const got = await pushed.waitFor(2, 30_000);
    expect(got[1]!.at).to.be.at.least(fanout.lease_until.getTime() - 100); // not before the lease ended
    expect(got.map((r) => r.headers['webhook-id'])).to.deep.equal([event.id, event.id]);
    new Webhook(hook.secret).verify(got[1]!.body, {
      'webhook-id': String(got[1]!.headers['webhook-id']),
      'webhook-timestamp': String(got[1]!.headers['webhook-timestamp']),
      'webhook-signature': String(got[1]!.headers['webhook-signature']),
    });
    await waitFor(async () => {
      const d = await env.db.selectFrom('webhook_deliveries').select('status').where('webhook_id', '=', hook.id).executeTakeFirst();
      return d?.status === 'delivered';
    }, 10_000, 'the delivery marked delivered');
    await new Promise((r) => setTimeout(r, 500));
    expect(pushed.requests).to.have.length(2);

    proc.child.kill('SIGTERM');
    expect(await proc.exited).to.equal(0);
    proc = undefined;
  });
});
