/**
 * SPEC.md "Webhook delivery", to the letter: "Retries | up to 3, with exponential backoff
 * (1 s, 2 s, 3 s)". With WEBHOOK_SLOW_SCHEDULE_MS set empty the delivery is dead once the
 * third retry fails and no further attempt is planned; the default slow schedule after
 * them is our documented extension. Real parts: the archive and webhooks projections run
 * by the runner, a real delivery worker, a real receiver that always answers 500.
 */
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startWebhookProjections } from '../support/webhook-harness.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { waitFor } from '../support/process.js';
import { appendTestEvents, makeEvent } from '../support/anchor-events.js';
import { registerWebhookRoutes } from '../../commands/webhooks/routes.js';
import { createLogger } from '../../infra/log/logger.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { startWebhookWorker, type WebhookWorker } from '../../commands/webhooks/delivery/worker.js';

const ADMIN = 'admin-key-for-spec-retries';
const ENCRYPTION_KEY = 'ef'.repeat(32);
const logger = createLogger('silent', 'spec-retries');
const pda = createPdaDeriver(PROGRAM_ID);

interface Attempt { attempt: number; success: boolean; statusCode: number | null; deliveryStatus: string; nextAttemptAt: string | null }

describe('SPEC Webhook delivery: Retries up to 3, with backoff (1 s, 2 s, 3 s)', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let api: TestApi;
  let projections: { stop(): Promise<void> } | undefined;
  let worker: WebhookWorker | undefined;
  const receivers: Receiver[] = [];
  let seed = 0;

  async function call(method: string, path: string, body?: unknown) {
    const res = await fetch(`${api.url}${path}`, {
      method,
      headers: { 'x-admin-key': ADMIN, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: await res.json() };
  }
  /** a webhook of a fresh gateway on a receiver that always answers 500, and one event for it */
  async function failingDelivery(): Promise<{ hook: number; receiver: Receiver }> {
    const authority = Keypair.generate().publicKey.toBase58();
    const receiver = await startReceiver(() => 500);
    receivers.push(receiver);
    const r = await call('POST', '/v1/webhooks', { gateway_pubkey: authority, endpoint_url: receiver.url });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    await appendTestEvents(env, [makeEvent('PaymentRecord', { gateway: pda.gateway(authority) }, `spec-retries-${(seed += 1)}`)]);
    return { hook: (r.body as { id: number }).id, receiver };
  }
  const attempts = async (id: number) => (await call('GET', `/v1/webhooks/${id}/deliveries`)).body as Attempt[];
  const startWorker = (over: Record<string, string>) => {
    const config = loadConfig({ ...env.env, SIGNING_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_MS: '50', ...over });
    worker = startWebhookWorker({ config, db: env.db, logger, clock: systemClock });
  };

  before(async () => {
    env = await createTestEnv('spec_webhook_retries');
    api = await startTestApi(env, { ADMIN_API_KEY: ADMIN, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SIGNING_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY }, { modules: [registerWebhookRoutes] });
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

  it('WEBHOOK_SLOW_SCHEDULE_MS set empty is no slow retry at all; unset keeps the documented extension', () => {
    const base = { SOLANA_RPC_URL: 'https://rpc.example' };
    expect(loadConfig({ ...base, WEBHOOK_SLOW_SCHEDULE_MS: '' }).webhooks.slowScheduleMs).to.deep.equal([]);
    const defaults = loadConfig(base).webhooks;
    expect(defaults.retryDelaysMs).to.deep.equal([1000, 2000, 3000]);
    expect(defaults.slowScheduleMs).to.deep.equal([60_000, 300_000, 1_800_000, 7_200_000, 21_600_000]);
  });

  it('"up to 3 (1 s, 2 s, 3 s)": with WEBHOOK_SLOW_SCHEDULE_MS empty, four attempts 1 s, 2 s and 3 s apart, then dead and nothing planned', async () => {
    startWorker({ WEBHOOK_SLOW_SCHEDULE_MS: '' });
    const { hook, receiver } = await failingDelivery();
    const got = await receiver.waitFor(4, 20_000);
    const gaps = [1, 2, 3].map((i) => got[i]!.at - got[i - 1]!.at);
    expect(gaps[0]).to.be.within(950, 1900);
    expect(gaps[1]).to.be.within(1950, 2900);
    expect(gaps[2]).to.be.within(2950, 3900);
    const list = await waitFor(async () => {
      const l = await attempts(hook);
      return l.length === 4 && l[0]!.deliveryStatus === 'dead' ? l : undefined;
    }, 10_000, 'the delivery dead after the third retry');
    expect(list.map((a) => [a.attempt, a.statusCode, a.success])).to.deep.equal([[4, 500, false], [3, 500, false], [2, 500, false], [1, 500, false]]);
    expect(list.every((a) => a.nextAttemptAt === null)).to.equal(true);
    const row = await env.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', hook).executeTakeFirstOrThrow();
    expect(row.status).to.equal('dead');
    await new Promise((r) => setTimeout(r, 2000));
    expect(receiver.requests).to.have.length(4); // no fourth retry
    expect(worker!.stats().outcomes.dead).to.equal(1);
  });

  it('the extension: by default a delivery whose three retries failed stays pending for the slow schedule (first slow retry after 60 s)', async () => {
    startWorker({ WEBHOOK_RETRY_DELAYS_MS: '100,100,100' });
    const { hook, receiver } = await failingDelivery();
    await receiver.waitFor(4, 10_000);
    const list = await waitFor(async () => {
      const l = await attempts(hook);
      return l.length === 4 && l[0]!.deliveryStatus === 'pending' ? l : undefined;
    }, 10_000, 'the delivery rescheduled');
    const planned = Date.parse(list[0]!.nextAttemptAt ?? '') - Date.now();
    expect(planned).to.be.within(50_000, 61_000);
    expect(receiver.requests).to.have.length(4);
  });
});
