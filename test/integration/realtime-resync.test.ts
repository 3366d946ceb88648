/**
 * A broadcast lost to a node's subscriber connection: pub/sub keeps nothing, and the
 * node's sockets, still connected, never ask again. When the adapter's subscriber comes
 * back, the node catches every subscription up from a little before the loss, without
 * sending again what the socket already got. Here no notifier runs, so a payment the
 * projection commits is never broadcast: exactly a broadcast lost.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { connectClient, payment, type TestClient } from '../support/realtime-client.js';
import { waitFor } from '../support/process.js';
import { appendTestEvents } from '../support/anchor-events.js';
import { realtimeAttachment } from '../../queries/realtime/attachment.js';
import { paymentsProjection } from '../../projections/payments/projection.js';
import { startProjection, type RunningProjection } from '../../projections/runner/runner.js';
import { createRedis, type Redis } from '../../infra/redis/client.js';
import { createLogger } from '../../infra/log/logger.js';

describe('real-time resync after a lost subscriber connection', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let api: TestApi;
  let projector: RunningProjection;
  let blocking: Redis;
  let client: TestClient;
  const tid = 'resync-order';
  const stored = (n: number) => waitFor(async () => Number((await env.db.selectFrom('payments').select((x) => x.fn.countAll().as('n'))
    .where('tracking_id', '=', tid).executeTakeFirstOrThrow()).n) === n, 20_000, `${n} payments in the read model`);

  before(async () => {
    env = await createTestEnv('realtime-resync');
    api = await startTestApi(env, {}, { attachments: [realtimeAttachment()] });
    blocking = createRedis({ url: env.redisUrl, sentinels: [], sentinelName: '' });
    projector = startProjection({ db: env.db, redis: env.redis, blockingRedis: blocking, keys: env.keys, logger: createLogger('silent', 'test') },
      paymentsProjection, { batchSize: 100, blockMs: 50, maxAttempts: 3, claimIdleMs: 5000 });
  });
  after(async () => {
    client?.close();
    await projector?.stop();
    blocking?.disconnect();
    await api?.close();
    await env?.close();
  });

  it('sends, once the subscriber is back, what was committed but never broadcast, and nothing twice', async () => {
    const earlier = payment(tid);
    await appendTestEvents(env, [earlier]);
    await stored(1);
    client = await connectClient(api.url);
    expect((await client.subscribe(tid, 0)).ok).to.equal(true);
    await client.waitPayments(1); // through catch-up

    const lost = payment(tid);
    await appendTestEvents(env, [lost]);
    await stored(2);
    await new Promise((r) => setTimeout(r, 300));
    expect(client.payments, 'no notifier: nothing live').to.have.length(1);

    // cut every pub/sub connection of the shared Redis: the node's adapter subscriber reconnects
    await env.redis.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    const got = await client.waitPayments(2);
    expect(got.map((p) => p.data.signature)).to.deep.equal([earlier.signature, lost.signature]);
    await waitFor(async () => client.caughtUp.length === 2, 10_000, 'the resync\'s caught_up');
    expect(client.caughtUp[1]).to.include({ trackingId: tid, sent: 1, more: false });
  });
});
