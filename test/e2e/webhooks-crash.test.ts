/**
 * The delivery worker as a real process (`serve --role webhooks`), killed with SIGKILL
 * while a delivery is in flight: after a restart the delivery is made, with the same
 * webhook-id and a valid signature, once its lease has run out.
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

const ADMIN = 'admin-key-for-crash-test';

describe('webhook worker under kill -9', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let api: TestApi;
  let receiver: Receiver;
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
});
