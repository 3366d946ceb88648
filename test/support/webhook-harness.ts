/**
 * The webhook delivery stack in one process for integration tests: a private database
 * and key prefix, an API node with the webhook routes, the archive and webhooks
 * projections on the real runner, delivery workers on demand (each with its own clock if
 * asked), real receivers, and helpers to register webhooks and append events.
 */
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { createTestEnv, type TestEnv } from './env.js';
import { startTestApi, type TestApi } from './app.js';
import { startReceiver, type Receiver } from './receiver.js';
import { appendTestEvents, makeEvent } from './anchor-events.js';
import { registerWebhookRoutes } from '../../commands/webhooks/routes.js';
import { registerEventRoutes } from '../../queries/events/routes.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { webhooksProjection } from '../../projections/webhooks/projection.js';
import { startProjection } from '../../projections/runner/runner.js';
import type { Logger } from '../../infra/log/logger.js';
import { createRedis } from '../../infra/redis/client.js';
import { createLogger } from '../../infra/log/logger.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { startWebhookWorker, type WebhookWorker, type WorkerOptions } from '../../commands/webhooks/delivery/worker.js';
import type { EventName } from '../../src/kernel/events/catalog.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';

export const ADMIN = 'admin-key-for-webhook-harness';
const ENCRYPTION_KEY = 'ef'.repeat(32);
const logger = createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent', 'webhooks-test');
export const pda = createPdaDeriver(PROGRAM_ID);

/** Date.now() moved by `offsetMs`, which a test changes to move time. */
export interface MovableClock extends Clock { offsetMs: number }
export const movableClock = (): MovableClock => {
  const c = { offsetMs: 0, now: () => Date.now() + c.offsetMs };
  return c;
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface Called { status: number; body: any }

export interface Harness {
  env: TestEnv;
  api: TestApi;
  clock: MovableClock;
  gateway(): { authority: string; account: string };
  receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver>;
  call(method: string, path: string, body?: unknown): Promise<Called>;
  register(gatewayPubkey: string, url: string, extra?: Record<string, unknown>): Promise<{ id: number; secret: string }>;
  event(name: EventName, fields: Record<string, unknown>): TributaryEvent;
  append(...events: TributaryEvent[]): Promise<void>;
  startWorker(over?: Record<string, string>, opts?: WorkerOptions & { clock?: Clock }): WebhookWorker;
  stopWorkers(): Promise<void>;
  close(): Promise<void>;
}

/** The archive and webhooks projections on the real runner, each with its blocking reader: what webhooks need of the projector. */
export function startWebhookProjections(env: TestEnv, log: Logger = logger): { stop(): Promise<void> } {
  const blocking = createRedis({ url: env.redisUrl, sentinels: [], sentinelName: '' });
  const deps = { db: env.db, redis: env.redis, blockingRedis: blocking, keys: env.keys, logger: log };
  const opts = { batchSize: 200, blockMs: 50, maxAttempts: 3, claimIdleMs: 5000 };
  const projections = [startProjection(deps, archiveProjection, opts), startProjection(deps, webhooksProjection, opts)];
  return {
    async stop() {
      for (const p of projections) await p.stop();
      blocking.disconnect();
    },
  };
}

export async function startHarness(name: string, apiEnv: Record<string, string> = {}): Promise<Harness> {
  const env = await createTestEnv(name);
  const clock = movableClock();
  const base = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SIGNING_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY };
  const api = await startTestApi(env, { ADMIN_API_KEY: ADMIN, ...base, ...apiEnv }, { clock, modules: [registerWebhookRoutes, registerEventRoutes] });
  const projections = startWebhookProjections(env);
  const receivers: Receiver[] = [];
  let workers: WebhookWorker[] = [];
  let seed = 0;

  const call = async (method: string, path: string, body?: unknown): Promise<Called> => {
    const res = await fetch(`${api.url}${path}`, {
      method,
      headers: { 'x-admin-key': ADMIN, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const stopWorkers = async () => {
    const ws = workers;
    workers = [];
    for (const w of ws) await w.stop();
  };

  return {
    env,
    api,
    clock,
    gateway() {
      const authority = Keypair.generate().publicKey.toBase58();
      return { authority, account: pda.gateway(authority) };
    },
    async receiver(...args) {
      const r = await startReceiver(...args);
      receivers.push(r);
      return r;
    },
    call,
    async register(gatewayPubkey, url, extra = {}) {
      const r = await call('POST', '/v1/webhooks', { gateway_pubkey: gatewayPubkey, endpoint_url: url, ...extra });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      return r.body as { id: number; secret: string };
    },
    event: (name, fields) => makeEvent(name, fields, `${name_(name)}-${(seed += 1)}-${Math.random()}`),
    async append(...events) { await appendTestEvents(env, events); },
    startWorker(over = {}, wopts = {}) {
      const config = loadConfig({ ...env.env, ...base, WEBHOOK_POLL_MS: '50', ...over });
      const w = startWebhookWorker({ config, db: env.db, redis: env.redis, logger, clock: wopts.clock ?? clock }, { prune: false, ...wopts });
      workers.push(w);
      return w;
    },
    stopWorkers,
    async close() {
      await stopWorkers();
      await projections.stop();
      for (const r of receivers) await r.close();
      await api.close();
      await env.close();
    },
  };
}

const name_ = (n: string) => n.toLowerCase();
