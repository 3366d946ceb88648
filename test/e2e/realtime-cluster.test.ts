/**
 * Real-time payments as a user deploys them: two API node processes on their own ports,
 * one notifier process and one projector process (the payments read model, for catch-up),
 * all started through the CLI, with real socket.io-client sockets.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { freePort } from '../support/ports.js';
import { startCli, waitFor, type Proc } from '../support/process.js';
import { connectClient, type TestClient } from '../support/realtime-client.js';
import { appendTestEvents, makeEvent } from '../support/anchor-events.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';

const LEASE_SECONDS = 2;

let seq = 0;
function payment(trackingId: string): TributaryEvent {
  seq += 1;
  const t = Math.floor(Date.now() / 1000);
  return makeEvent('PaymentRecord', { memo: trackingId, timestamp: String(t), record_id: seq }, { seed: `e2e-${seq}-${Math.random()}`, slot: 5_000_000 + seq, blockTime: t });
}

describe('real-time payments across API node processes', function () {
  this.timeout(120_000);
  let env: TestEnv;
  const procs: Proc[] = [];
  const clients: TestClient[] = [];
  let urlA = '';
  let urlB = '';
  let nodeB: Proc;

  const connect = async (url: string) => { const c = await connectClient(url); clients.push(c); return c; };
  const started = (p: Proc, what: string) => { procs.push(p); void p.exited.then((code) => { if (code !== 0 && code !== null) process.stderr.write(`${what} exited ${code}: ${p.output()}\n`); }); return p; };

  before(async () => {
    env = await createTestEnv('rt-e2e');
    const common = {
      ...env.env, HOST: '127.0.0.1', WS_LEASE_SECONDS: String(LEASE_SECONDS), WS_MAX_CONNECTIONS_PER_TRACKING_ID: '2',
      PROJECTOR_BLOCK_MS: '100', POOL_SYNC_INTERVAL_MS: '0',
    };
    const [pa, pb] = [await freePort(), await freePort()];
    urlA = `http://127.0.0.1:${pa}`;
    urlB = `http://127.0.0.1:${pb}`;
    started(startCli(['serve', '--role', 'api'], { ...common, PORT: String(pa) }), 'api A');
    nodeB = started(startCli(['serve', '--role', 'api'], { ...common, PORT: String(pb) }), 'api B');
    started(startCli(['serve', '--role', 'notifier'], common), 'notifier');
    started(startCli(['serve', '--role', 'projector'], { ...common, PROJECTIONS: 'payments' }), 'projector');
    for (const url of [urlA, urlB]) {
      await waitFor(async () => (await fetch(`${url}/v1/health`)).ok, 60_000, `${url} up`);
    }
    await waitFor(async () => {
      const groups = (await env.redis.xinfo('GROUPS', env.keys.events).catch(() => [])) as unknown[][];
      return groups.length >= 2;
    }, 60_000, 'notifier and projector groups');
  });
  afterEach(() => { for (const c of clients.splice(0)) c.close(); });
  after(async () => {
    for (const p of procs) p.child.kill('SIGTERM');
    await Promise.all(procs.map((p) => p.exited));
    await env?.close();
  });

  it('delivers a payment exactly once to a socket on node A and one on node B', async () => {
    const [ca, cb] = [await connect(urlA), await connect(urlB)];
    expect((await ca.subscribe('order-e2e')).ok).to.equal(true);
    expect((await cb.subscribe('order-e2e')).ok).to.equal(true);
    const e = payment('order-e2e');
    await appendTestEvents(env, [e, e]);
    for (const c of [ca, cb]) {
      const got = await c.waitPayments(1, 15_000, 500);
      expect(got).to.have.length(1);
      expect(got[0]!.data).to.include({ trackingId: 'order-e2e', signature: e.signature, recordId: seq });
    }
  });

  it('hands a client that was disconnected during a payment that payment through since', async () => {
    const tid = 'order-e2e-since';
    const c1 = await connect(urlA);
    await c1.subscribe(tid);
    const before = payment(tid);
    await appendTestEvents(env, [before]);
    await c1.waitPayments(1, 15_000, 0);
    c1.close();
    const during = payment(tid);
    await appendTestEvents(env, [during]);
    const back = await connect(urlB);
    expect((await back.subscribe(tid, before.signature)).ok).to.equal(true);
    const after = payment(tid);
    await waitFor(async () => back.caughtUp.length === 1, 15_000, 'catch-up');
    await appendTestEvents(env, [after]);
    const got = await back.waitPayments(2, 15_000, 500);
    expect(got.map((p) => p.data.signature)).to.deep.equal([during.signature, after.signature]);
  });

  it('holds the cap across both nodes, and a kill -9 of a node frees its slots within the lease', async () => {
    const tid = 'order-e2e-cap';
    const [ca, cb, extra] = [await connect(urlA), await connect(urlB), await connect(urlA)];
    expect((await ca.subscribe(tid)).ok).to.equal(true);
    expect((await cb.subscribe(tid)).ok).to.equal(true);
    expect((await extra.subscribe(tid)).error?.code).to.equal('too_many_connections');
    nodeB.child.kill('SIGKILL');
    const killedAt = Date.now();
    await waitFor(async () => (await extra.subscribe(tid)).ok, (LEASE_SECONDS + 2) * 1000, 'slot of the dead node freed');
    const freedAfter = Date.now() - killedAt;
    expect(freedAfter).to.be.at.most(LEASE_SECONDS * 1000 + 500);
    const e = payment(tid);
    await appendTestEvents(env, [e]);
    for (const c of [ca, extra]) expect(await c.waitPayments(1, 15_000, 300)).to.have.length(1);
  });
});
