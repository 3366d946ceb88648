/**
 * Pay-as-you-go billing that loses nothing: every admitted request's chunk is in the
 * Postgres ledger, the settler charges it on chain with execute_payment(amount) as the
 * gateway's signer in chunks of at most max_chunk_amount, each charge matched to its
 * PaymentRecord, and what is charged equals what was metered. A Redis that restarts and
 * loses its counters mid-traffic loses no chunk and lets no request past the cap.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { createRedis } from '../../infra/redis/client.js';
import { payAndFetch } from '../../src/app/index.js';
import { registerSigningRoutes } from '../../src/app/signing-routes.js';
import { registerX402Routes } from '../../commands/x402/routes.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { waitFor } from '../support/process.js';
import { latestBlockhash, readExecutionContext, signExecution } from '../../commands/scheduler/chain.js';
import { send as sendTx } from '../../infra/solana/sender.js';
import { chargeBasis, openCharge } from '../../commands/settlement/charges.js';
import { DEMO_PATH } from './x402-harness.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';

const PRICE = 10_000n;
const MAX_CHUNK = 30_000n;
const CAP = 200_000n;

describe('pay-as-you-go: usage ledger and settler', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;

  before(async () => {
    s = await startSchedulerHarness('payg-settle', {
      X402_DEMO_PAYG_PRICE: String(PRICE), X402_DEMO_PAYG_MAX_CHUNK: String(MAX_CHUNK), X402_DEMO_PAYG_MAX_PER_PERIOD: String(CAP),
      X402_DEMO_PAYG_PERIOD_SECONDS: '3600', PAYG_SETTLE_THRESHOLD: '1', PAYG_SETTLE_INTERVAL_MS: '500',
    });
  });
  after(async () => { await s?.close(); });

  const bearer = async (base: string, jwt: string) => {
    const res = await fetch(`${base}${DEMO_PATH}`, { headers: { authorization: `Bearer ${jwt}` } });
    return { status: res.status, body: (await res.json()) as any };
  };
  const pay = async (base: string) => {
    const r = await payAndFetch(`${base}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'x402://payg' });
    expect(r.response.status).to.equal(200);
    return { jwt: r.paid!.jwt, policy: r.paid!.policy! };
  };
  const usage = (policy: string) => s.h.env.db.selectFrom('payg_usage').selectAll().where('policy', '=', policy).execute();
  const charges = (policy: string) => s.h.env.db.selectFrom('payg_charges').selectAll().where('policy', '=', policy).orderBy('id').execute();
  const charged = (policy: string) => s.records(policy).reduce((a, r) => a + r.amount, 0n);

  it('charges N metered requests exactly N × price, in chunks of at most max_chunk_amount, each matched to its PaymentRecord', async () => {
    const settler = s.settler();
    const { jwt, policy } = await pay(s.h.api.url); // payAndFetch's own request is the first metered one
    const N = 12;
    for (let i = 1; i < N; i += 1) expect((await bearer(s.h.api.url, jwt)).status).to.equal(200);
    const rows = await usage(policy);
    expect(rows).to.have.length(N);
    await waitFor(async () => charged(policy) === BigInt(N) * PRICE, 30_000, 'every metered chunk charged');
    await settler.stop();
    const records = s.records(policy);
    for (const r of records) expect(r.amount <= MAX_CHUNK, `charge ${r.amount} ≤ max_chunk_amount`).to.equal(true);
    expect(new Set(records.map((r) => r.signature)).size, 'one transaction per charge').to.equal(records.length);
    const done = (await charges(policy)).filter((c) => c.status === 'executed');
    expect(done.map((c) => [c.signature, c.record_id, BigInt(c.amount)]).sort())
      .to.deep.equal(records.map((r) => [r.signature, r.recordId, r.amount]).sort());
    const after = await usage(policy);
    expect(after.every((u) => u.charge_id !== null && done.some((c) => c.id === u.charge_id)), 'every chunk in an executed charge').to.equal(true);
  });

  it('resolves charges left in doubt by a crash (stored but unsent, sent but unrecorded) with the same bytes, each charged once', async () => {
    const { jwt, policy } = await pay(s.h.api.url);
    for (let i = 0; i < 2; i += 1) expect((await bearer(s.h.api.url, jwt)).status).to.equal(200);
    const crash = async (send: boolean) => {
      const rows = await usage(policy);
      const open = rows.filter((u) => u.charge_id === null);
      const ctx = await readExecutionContext(s.io, policy);
      if ('class' in ctx) throw new Error(ctx.reason);
      const amount = open.reduce((a, u) => a + BigInt(u.chunk), 0n);
      const signed = signExecution(s.io, ctx, s.signer, await latestBlockhash(s.io), amount);
      const charge = await openCharge(s.h.env.db, { policy, gateway: s.gateway, amount, ...chargeBasis(ctx), ...signed }, open.map((u) => u.request_id));
      expect(charge, 'the charge and its usage stored').to.have.property('status', 'sending');
      if (send) expect((await sendTx(s.io, signed.wire)).kind).to.equal('sent');
      return signed.signature;
    };
    const settler = s.settler({ autoStart: false });
    const unsent = await crash(false);
    expect(s.records(policy)).to.have.length(0);
    await new Promise((r) => setTimeout(r, 5500)); // a charge is in doubt once older than the settler's confirmation window
    await settler.tick();
    expect(s.records(policy).map((r) => r.signature), 'the stored bytes sent, once').to.deep.equal([unsent]);

    for (let i = 0; i < 3; i += 1) expect((await bearer(s.h.api.url, jwt)).status).to.equal(200);
    const sent = await crash(true);
    expect(s.records(policy)).to.have.length(2);
    await new Promise((r) => setTimeout(r, 5500));
    await settler.tick();
    await settler.tick();
    expect(s.records(policy).map((r) => r.signature), 'recorded from the chain, not sent again').to.deep.equal([unsent, sent]);
    expect(charged(policy)).to.equal(6n * PRICE);
    const done = (await charges(policy)).filter((c) => c.status === 'executed');
    expect(done.map((c) => c.signature)).to.deep.equal([unsent, sent]);
    expect((await usage(policy)).every((u) => done.some((c) => c.id === u.charge_id))).to.equal(true);
  });

  describe('a Redis restart that loses the counters during metering', () => {
    let redis: RedisServer;
    let node: TestApi;
    before(async () => {
      redis = await startRedisServer();
      const client = createRedis({ url: redis.url, sentinels: [], sentinelName: '' }, { enableAutoPipelining: true });
      client.on('error', () => undefined);
      node = await startTestApi({ ...s.h.env, redis: client }, { ...s.h.overrides, REDIS_URL: redis.url }, { modules: [registerSigningRoutes, registerX402Routes] });
    });
    after(async () => { await node?.close(); await redis?.close(); });

    it('no chunk lost, no request past the cap, charged equals metered', async () => {
      const settler = s.settler();
      const { jwt, policy } = await pay(node.url);
      const statuses: number[] = [200];
      for (let i = 0; i < 8; i += 1) statuses.push((await bearer(node.url, jwt)).status);
      await redis.stop();
      await redis.start();
      const admin = createRedis({ url: redis.url, sentinels: [], sentinelName: '' });
      await admin.flushall(); // the counters are gone (this Redis is the test's own)
      admin.disconnect();
      await waitFor(async () => (await bearer(node.url, jwt).then((r) => { statuses.push(r.status); return r.status !== 503 && r.status !== 500; })), 20_000, 'Redis back');
      for (let i = 0; i < 20; i += 1) statuses.push((await bearer(node.url, jwt)).status);
      const admitted = statuses.filter((x) => x === 200).length;
      expect(statuses.filter((x) => x !== 200 && x !== 402 && x !== 503), 'only 200, 402 or 503').to.deep.equal([]);
      expect(BigInt(admitted) * PRICE, 'admitted up to the cap, never past it').to.equal(CAP);
      const rows = await usage(policy);
      expect(rows.length, 'one ledger row per admitted request').to.equal(admitted);
      await waitFor(async () => charged(policy) === CAP, 30_000, 'the ledger charged in full');
      await settler.stop();
      expect(charged(policy)).to.equal(rows.reduce((a, u) => a + BigInt(u.chunk), 0n));
    });
  });
});
