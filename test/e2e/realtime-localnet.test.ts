/**
 * Payments the localnet executes, end to end: the localnet's workload runs policies of
 * every type; the indexer appends their events; two API node processes, one notifier
 * process and one projector process run as a user starts them. Sockets on node A and on
 * node B follow the trackingIds the workload created; each gets every payment the chain
 * executes for them afterwards exactly once, and never a payment twice.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { freePort } from '../support/ports.js';
import { startCli, waitFor, type Proc } from '../support/process.js';
import { connectClient, type TestClient } from '../support/realtime-client.js';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';
import { startIndexer, type RunningIndexer } from '../../infra/indexer/index.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { createLogger } from '../../infra/log/logger.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { dataOf } from '../support/anchor-events.js';

/** trackingId of each payment in the ledger: the record's memo, or its composable policy's. */
function paymentsByTrackingId(ledger: readonly TributaryEvent[]): { event: TributaryEvent; trackingId: string }[] {
  const composableMemo = new Map<string, string>();
  const out: { event: TributaryEvent; trackingId: string }[] = [];
  for (const e of ledger) {
    if (e.name === 'ComposablePolicyCreated') composableMemo.set(e.data['composable_policy'], e.data['memo']);
    if (e.name === 'PaymentRecord') out.push({ event: e, trackingId: e.data['memo'] });
    if (e.name === 'ComposableExecuted') {
      const memo = composableMemo.get(e.data['composable_policy']);
      if (memo !== undefined) out.push({ event: e, trackingId: memo });
    }
  }
  return out;
}

describe('real-time payments executed by the localnet', function () {
  this.timeout(180_000);
  let env: TestEnv;
  let ln: Localnet;
  let indexer: RunningIndexer;
  const procs: Proc[] = [];
  const clients: TestClient[] = [];

  before(async () => {
    env = await createTestEnv('rt-localnet');
    ln = await startLocalnet({ port: 0, seed: 'realtime-e2e', rate: 60 });
    const common = {
      ...env.env, HOST: '127.0.0.1', SOLANA_RPC_URL: ln.rpcUrl, SOLANA_WS_URL: ln.wsUrl, SOLANA_CLUSTER: 'localnet',
      PROJECTOR_BLOCK_MS: '100', POOL_SYNC_INTERVAL_MS: '0', WS_MAX_CONNECTIONS_PER_TRACKING_ID: '4',
    };
    const ports = [await freePort(), await freePort()];
    for (const port of ports) procs.push(startCli(['serve', '--role', 'api'], { ...common, PORT: String(port) }));
    procs.push(startCli(['serve', '--role', 'notifier'], common));
    procs.push(startCli(['serve', '--role', 'projector'], { ...common, PROJECTIONS: 'payments,composable-policies' }));
    indexer = await startIndexer({ config: loadConfig(common), redis: env.redis, logger: createLogger('silent', 'indexer') });
    for (const port of ports) await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/v1/health`)).ok, 60_000, `api on ${port}`);
    for (const port of ports) clients.push(await connectClient(`http://127.0.0.1:${port}`));
  });
  after(async () => {
    for (const c of clients) c.close();
    await indexer?.stop();
    for (const p of procs) p.child.kill('SIGTERM');
    await Promise.all(procs.map((p) => p.exited));
    await ln?.close();
    await env?.close();
  });

  it('hands each payment to a socket on node A and one on node B exactly once', async () => {
    // the workload's trackingIds so far (policies created in the first seconds)
    await waitFor(async () => {
      const ids = new Set(ln.ledger().filter((e) => e.name === 'PaymentPolicyCreated' || e.name === 'ComposablePolicyCreated').map((e) => e.data['memo']));
      return ids.size >= 30;
    }, 60_000, 'policies on the localnet');
    const ids = [...new Set(ln.ledger()
      .filter((e) => e.name === 'PaymentPolicyCreated' || e.name === 'ComposablePolicyCreated')
      .map((e) => e.data['memo']).filter((m) => m.length > 0))].slice(0, 100);
    for (const c of clients) for (const id of ids) expect((await c.subscribe(id)).ok, id).to.equal(true);
    const cut = ln.ledger().length;
    const followed = new Set(ids);
    let expected: { event: TributaryEvent; trackingId: string }[] = [];
    await waitFor(async () => {
      expected = paymentsByTrackingId(ln.ledger()).filter((p) => followed.has(p.trackingId) && ln.ledger().indexOf(p.event) >= cut);
      return expected.length >= 5;
    }, 90_000, 'payments executed on followed trackingIds');
    const ledgerNow = ln.ledger();
    expected = paymentsByTrackingId(ledgerNow).filter((p) => followed.has(p.trackingId) && ledgerNow.indexOf(p.event) >= cut);
    for (const c of clients) {
      await waitFor(async () => expected.every((p) => c.payments.some((m) => m.data.signature === p.event.signature && m.data.recordId === dataOf(p.event)['record_id'])),
        30_000, `all ${expected.length} payments on the socket`);
      await new Promise((r) => setTimeout(r, 500));
      const keys = c.payments.map((m) => `${m.data.signature}:${m.data.recordId}:${m.data.trackingId}`);
      expect(new Set(keys).size, 'no payment twice').to.equal(keys.length);
      for (const m of c.payments) expect(followed.has(m.data.trackingId)).to.equal(true);
      const exec = c.payments.find((m) => m.data.signature === expected[0]!.event.signature)!;
      expect(exec.data.slot).to.equal(expected[0]!.event.slot);
    }
    const kinds = new Set(expected.map((p) => p.event.name));
    process.stdout.write(`      ${expected.length} payments (${[...kinds].join(', ')}) on ${ids.length} trackingIds\n`);
  });
});
