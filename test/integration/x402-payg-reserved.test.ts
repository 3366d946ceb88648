/**
 * A pay-as-you-go chunk is written to the ledger before the request is admitted and
 * served. A process that died after writing it, before admitting or serving the request,
 * left a row the settler charged: the payer billed for a request never served. The row is
 * now a reservation until the request is answered: a request that ended unanswered takes
 * its row and its counts back at once, and a reservation a dead process left behind is
 * never charged and is dropped once its bound has passed.
 *
 * A merchant route in-process (the middleware, on the demo's terms) whose handler never
 * answers, and one whose usage ledger stops for good after writing the row (the process
 * dies between the ledger and Redis); the localnet chain and the first gateway's settler.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { servedSql } from '../../commands/settlement/served-marks.js';
import { expect } from 'chai';
import { sql } from 'kysely';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRpcClient, paymentRequired, payAndFetch, type AcceptedRequirement } from '../../src/app/index.js';
import { createUsageLedger } from '../../commands/settlement/usage-ledger.js';
import { ADMISSION_SECONDS } from '../../commands/settlement/charges.js';
import { usageCounterKey, type UsageLedger } from '../../commands/x402/metering.js';
import { accountOutstandingKey } from '../../commands/x402/account-outstanding.js';
import { waitFor } from '../support/process.js';
import { DEMO_PATH } from './x402-harness.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';

const PRICE = 10_000n;
/**
 * longer than the settler's admission window: a reservation it sees is still within its bound, and
 * its number (a process that died, in-process here) is not given up yet (2 s before the bound, served-marks.ts)
 */
const RESERVATION_SECONDS = ADMISSION_SECONDS + 6;

describe('x402 pay-as-you-go: only requests served are charged', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;
  let server: Server;
  let base = '';

  before(async () => {
    s = await startSchedulerHarness('payg-reserved', {
      X402_DEMO_PAYG_PRICE: String(PRICE), X402_DEMO_PAYG_MAX_CHUNK: String(PRICE), X402_DEMO_PAYG_MAX_PER_PERIOD: String(3n * PRICE),
      X402_DEMO_PAYG_PERIOD_SECONDS: '3600', PAYG_SETTLE_THRESHOLD: '1', PAYG_SETTLE_INTERVAL_MS: '500',
    });
    const payg = (await s.h.accepts()).find((a: AcceptedRequirement) => a.scheme === 'x402://payg')!;
    const { id: _i, currency: _c, resource: _r, extra: _e, description: _d, ...terms } = payg;
    const ctx = s.h.api.ctx;
    const deps = (usage: UsageLedger) => ({
      rpc: createRpcClient({ url: s.h.overrides['SOLANA_RPC_URL']!, timeoutMs: 5000 }), programId: payg.extra.programId,
      redis: ctx.redis, redisPrefix: ctx.config.redis.prefix, signer: s.h.api.node.keyRing, cacheMs: 0, usage,
    });
    const ledger = createUsageLedger(s.h.env.db, { reservationSeconds: RESERVATION_SECONDS });
    // the process dies right after the chunk is in the ledger: nothing after it ever runs
    const dying: UsageLedger = { ...ledger, record: async (u) => { await ledger.record(u); return new Promise<void>(() => undefined); } };
    const app = express();
    app.get('/report', paymentRequired([terms], deps(ledger)), (_req, res) => { res.json({ report: 'ok' }); });
    app.get('/hangs', paymentRequired([terms], deps(ledger)), () => undefined); // the upstream never answers
    app.get('/dies', paymentRequired([terms], deps(dying)), (_req, res) => { res.json({ report: 'never' }); });
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await s?.close();
  });

  const pay = async () => {
    const r = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'x402://payg' });
    expect(r.response.status).to.equal(200);
    return { jwt: r.paid!.jwt, policy: r.paid!.policy! };
  };
  const get = async (path: string, jwt: string, signal?: AbortSignal) => {
    const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${jwt}` }, ...(signal ? { signal } : {}) });
    return { status: res.status, body: (await res.json()) as any };
  };
  const rows = (policy: string) => s.h.env.db.selectFrom('payg_usage').selectAll().select(servedSql('payg_usage').as('served')).where('policy', '=', policy).orderBy('metered_at').execute();
  /** sends a request the test then abandons once its chunk is in the ledger */
  const abandoned = async (path: string, jwt: string, policy: string) => {
    const before = (await rows(policy)).length;
    const abort = new AbortController();
    const pending = get(path, jwt, abort.signal).catch(() => undefined);
    await waitFor(async () => (await rows(policy)).length > before, 10_000, 'the chunk written to the ledger');
    abort.abort();
    await pending;
  };
  const charged = (policy: string) => s.records(policy).reduce((a, r) => a + r.amount, 0n);
  const settleRound = async () => {
    await new Promise((r) => setTimeout(r, ADMISSION_SECONDS * 1000 + 500));
    const settler = s.settler({ autoStart: false });
    try { await settler.tick(); } finally { await settler.stop(); }
  };

  it('a request whose upstream never answered takes back its row and its counts: not charged, its room in the cap given back', async () => {
    const { jwt, policy } = await pay(); // 10,000 of 30,000, served
    await abandoned('/hangs', jwt, policy);
    await waitFor(async () => (await rows(policy)).length === 1, 10_000, 'the unanswered request\'s row taken back');
    const [served] = await rows(policy);
    expect(served!.served, 'the paid request was served').to.equal(true);
    const redis = s.h.env.redis;
    expect(await redis.get(usageCounterKey(s.h.env.prefix, policy, served!.period_start)), 'the period counter').to.equal(String(PRICE));
    expect(await redis.get(accountOutstandingKey(s.h.env.prefix, served!.user_payment!)), 'the account outstanding').to.equal(String(PRICE));

    expect((await get('/report', jwt)).status).to.equal(200);
    expect((await get('/report', jwt)).status, 'the cap\'s room of the unanswered request given back').to.equal(200);
    const capped = await get('/report', jwt);
    expect(capped.status).to.equal(402);
    expect(capped.body.error).to.match(/cap of 30000 is reached/);
    await settleRound();
    expect(charged(policy), 'the three requests served').to.equal(3n * PRICE);
  });

  it('a client that leaves while its chunk is being written: taken back at once, and the requests after it are charged without waiting for its bound', async () => {
    const { jwt, policy } = await pay(); // 10,000 of 30,000, served
    const [paid] = await rows(policy);
    // the payer's ledger lock held (the slices' check takes it, migration 1011): the request's row waits in its INSERT
    await s.h.env.db.connection().execute(async (conn) => {
      await sql`BEGIN`.execute(conn);
      try {
        await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`tributary:payg_usage_slices_apart:${paid!.user_payment!}`}, 0))`.execute(conn);
        const abort = new AbortController();
        const pending = get('/report', jwt, abort.signal).catch(() => undefined);
        await waitFor(async () => (await sql<{ n: string }>`SELECT count(*)::text AS n FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO payg_usage%'`.execute(s.h.env.db)).rows[0]!.n === '1', 10_000, 'the row\'s INSERT waiting');
        abort.abort(); // the client leaves before its chunk is admitted
        await pending;
        await new Promise((r) => setTimeout(r, 200)); // the server has seen its connection close
      } finally {
        await sql`COMMIT`.execute(conn);
      }
    });
    // well within the reservation's bound (RESERVATION_SECONDS): the row and its counts are taken back at once
    const redis = s.h.env.redis;
    const counter = () => redis.get(usageCounterKey(s.h.env.prefix, policy, paid!.period_start));
    await waitFor(async () => (await rows(policy)).length === 1 && await counter() === String(PRICE), 3000,
      'the row of the request whose client left taken back, and its room in the cap (its slice was the last)');
    // its number no longer holds the process's mark: a request served after it is chargeable at once
    expect((await get('/report', jwt)).status).to.equal(200);
    await waitFor(async () => (await rows(policy)).every((u) => u.served), 3000, 'the next request\'s row served');
    await settleRound();
    expect(charged(policy), 'the two requests served, not the one whose client left').to.equal(2n * PRICE);
  });

  it('a chunk whose process died between the ledger and Redis is never charged, and dropped after its bound', async () => {
    const { jwt, policy } = await pay(); // served: 10,000
    await abandoned('/dies', jwt, policy);
    const left = await rows(policy);
    expect(left, 'the dead request\'s row stays, as a reservation').to.have.length(2);
    expect(left[1]!.served, 'a reservation').to.equal(false);
    expect(left[1]!.reserved_until).to.be.instanceOf(Date);

    await settleRound(); // older than the settler's admission window: charged before, as if served
    expect(charged(policy), 'only the request served').to.equal(PRICE);
    expect(await rows(policy), 'the reservation within its bound stays').to.have.length(2);
    const bound = left[1]!.reserved_until!.getTime();
    await new Promise((r) => setTimeout(r, Math.max(0, bound - Date.now()) + 500));
    await settleRound();
    expect((await rows(policy)).map((u) => u.reserved_until), 'past its bound: dropped').to.deep.equal([null]);
    expect(charged(policy)).to.equal(PRICE);
  });
});
