/**
 * SIGTERM in the middle of work, for the roles that hold work a user would miss: each
 * role runs as a real process (`tributary serve --role <r>`), exits 0 within a bound, and
 * loses nothing: the API answers the request in flight (and takes no new one), the
 * projector commits and acknowledges the batch in flight, the webhook worker finishes
 * the delivery in flight and records it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { freePort } from '../support/ports.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startCli, terminate, waitFor, type Proc } from '../support/process.js';
import { startJupiterStandIn, type JupiterStandIn } from '../support/upstreams/jupiter.js';
import { NO_VENUES } from '../support/upstreams/fixtures.js';
import { syntheticEvents } from '../support/synthetic-events.js';
import { appendTestEvents, makeEvent } from '../support/anchor-events.js';
import { appendRaw } from '../../infra/redis/event-stream.js';
import { serializeEvent } from '../../src/kernel/events/envelope.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { registerWebhookRoutes } from '../../commands/webhooks/routes.js';
import { webhooksProjection } from '../../projections/webhooks/projection.js';
import { startProjection, type RunningProjection } from '../../projections/runner/runner.js';
import { createRedis } from '../../infra/redis/client.js';
import { createLogger } from '../../infra/log/logger.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';

const STOP_BOUND_MS = 15_000;

describe('graceful shutdown on SIGTERM', function () {
  this.timeout(120_000);
  let env: TestEnv;
  const procs: Proc[] = [];
  const start = (role: string, extra: Record<string, string> = {}) => {
    const p = startCli(['serve', '--role', role], { ...env.env, LOG_LEVEL: 'info', SOLANA_RPC_URL: 'http://127.0.0.1:1', ...extra });
    procs.push(p);
    return p;
  };
  before(async () => { env = await createTestEnv('shutdown-roles'); });
  after(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await env.close();
  });

  describe('api', () => {
    let jup: JupiterStandIn;
    before(async () => { jup = await startJupiterStandIn(); });
    after(async () => { await jup.close(); });

    it('answers the request in flight, refuses new connections, and exits 0', async () => {
      const port = await freePort();
      const api = start('api', { PORT: String(port), HOST: '127.0.0.1', TOKENS_API_URL: jup.url, UPSTREAM_TIMEOUT_MS: '10000', POOL_SYNC_INTERVAL_MS: '0', ...NO_VENUES });
      const url = `http://127.0.0.1:${port}`;
      await waitFor(async () => (await fetch(`${url}/v1/health`)).ok, 30_000, 'the API node');
      jup.setMode({ kind: 'slow', ms: 4000 });
      // a fresh connection of its own, so that nothing else holds the server open
      const inFlight = new Promise<{ status: number; body: string }>((resolve, reject) => {
        http.get(`${url}/v1/assets/search?q=USDC`, { agent: false }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => { body += c.toString(); });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        }).on('error', reject);
      });
      await waitFor(async () => jup.calls.length > 0, 10_000, 'the request to reach the catalog');
      const stopped = terminate(api, STOP_BOUND_MS);
      // fresh connections, not a pooled one the node would still serve
      const probe = () => new Promise<string>((resolve) => {
        http.get(`${url}/v1/health`, { agent: false }, (res) => { res.resume(); resolve(String(res.statusCode)); })
          .on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      });
      await waitFor(async () => (await probe()) === 'ECONNREFUSED', 3000, 'new connections refused while the request is in flight');
      expect(jup.calls.length, 'still one catalog call: the request is in flight').to.equal(1);
      const answer = await inFlight;
      expect(answer.status).to.equal(200);
      expect(JSON.parse(answer.body)).to.include({ success: true });
      const { code, ms } = await stopped;
      expect(code).to.equal(0);
      expect(ms).to.be.below(STOP_BOUND_MS);
      expect(api.output()).to.match(/"msg":"stopped"/);
    });
  });

  describe('projector', () => {
    const TOTAL = 6000;
    const archived = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM events`.execute(env.db)).rows[0]!.n);

    it('commits and acknowledges the batch in flight, and a restart finishes the rest exactly once', async () => {
      const events = syntheticEvents(TOTAL, 7);
      for (let i = 0; i < TOTAL; i += 1000) await appendRaw(env.redis, env.keys, events.slice(i, i + 1000).map(serializeEvent));
      const settings = { PROJECTOR_BATCH_SIZE: '100', PROJECTOR_BLOCK_MS: '200', PROJECTOR_CLAIM_IDLE_MS: '60000' };
      const first = start('projector', settings);
      await waitFor(async () => (await archived()) >= 500, 60_000, 'the projector at work');
      const { code } = await terminate(first);
      expect(code).to.equal(0);
      const midway = await archived();
      expect(midway, 'stopped before the end: the test stops it mid-work').to.be.below(TOTAL);
      // every entry the stopped consumer read was committed and acknowledged: none is left pending
      for (const p of PROJECTIONS) {
        const [pending] = (await env.redis.xpending(env.keys.events, p.name)) as [number];
        expect(pending, `pending entries of ${p.name}`).to.equal(0);
      }
      const cp = await env.db.selectFrom('projection_checkpoints').selectAll().where('projection', '=', 'archive').executeTakeFirstOrThrow();
      expect(Number(cp.events_applied)).to.equal(midway);

      const second = start('projector', settings);
      await waitFor(async () => (await archived()) === TOTAL, 120_000, 'every event archived after the restart');
      const rows = await sql<{ n: string; d: string }>`SELECT count(*) AS n, count(DISTINCT id) AS d FROM events`.execute(env.db);
      expect(rows.rows[0]).to.deep.equal({ n: String(TOTAL), d: String(TOTAL) });
      expect((await terminate(second)).code).to.equal(0);
    });
  });

  describe('webhooks', () => {
    const ADMIN = 'admin-key-for-shutdown';
    let api: TestApi;
    let blocking: ReturnType<typeof createRedis>;
    let projection: RunningProjection;
    let receiver: http.Server;
    const received: number[] = [];
    let answeredAt = 0;

    before(async () => {
      api = await startTestApi(env, { ADMIN_API_KEY: ADMIN, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, { modules: [registerWebhookRoutes] });
      blocking = createRedis({ url: env.redisUrl, sentinels: [], sentinelName: '' });
      projection = startProjection({ db: env.db, redis: env.redis, blockingRedis: blocking, keys: env.keys, logger: createLogger('silent', 'shutdown-test') },
        webhooksProjection, { batchSize: 100, blockMs: 50, maxAttempts: 3, claimIdleMs: 5000 });
      // answers each delivery after 2 s: the worker is stopped while it waits
      receiver = http.createServer((req, res) => {
        received.push(Date.now());
        req.resume();
        setTimeout(() => { answeredAt = Date.now(); res.writeHead(200).end('ok'); }, 2000);
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    });
    after(async () => {
      await projection.stop();
      blocking.disconnect();
      await new Promise((resolve) => receiver.close(resolve));
      await api.close();
    });

    it('finishes the delivery in flight, records it, and exits 0', async () => {
      const authority = Keypair.generate().publicKey.toBase58();
      const created = await fetch(`${api.url}/v1/webhooks`, {
        method: 'POST', headers: { 'x-admin-key': ADMIN, 'content-type': 'application/json' },
        body: JSON.stringify({ gateway_pubkey: authority, endpoint_url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` }),
      });
      expect(created.status).to.equal(201);
      const hook = await created.json() as { id: number };
      const worker = start('webhooks', { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_TIMEOUT_MS: '8000', WEBHOOK_POLL_MS: '100' });
      await appendTestEvents(env, [makeEvent('PaymentRecord', { gateway: createPdaDeriver(PROGRAM_ID).gateway(authority) }, 'shutdown-1')]);
      await waitFor(async () => received.length > 0, 30_000, 'the delivery to reach the receiver');

      const { code } = await terminate(worker);
      expect(code).to.equal(0);
      expect(answeredAt, 'the worker waited for the answer').to.be.above(0);
      const d = await env.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', hook.id).executeTakeFirstOrThrow();
      expect(d.status).to.equal('delivered');
      expect(d.locked_by).to.equal(null);
      // nothing left to do: a new worker delivers nothing again
      const again = start('webhooks', { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_MS: '100' });
      await waitFor(async () => /webhook worker started/.test(again.output()), 30_000, 'a second worker');
      await new Promise((r) => setTimeout(r, 1000));
      expect(received).to.have.length(1);
      expect((await terminate(again)).code).to.equal(0);
    });
  });
});
