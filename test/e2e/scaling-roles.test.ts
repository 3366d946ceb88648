/**
 * Every role as several processes at once, against one localnet: two indexers, two
 * projectors, two webhook workers, two notifiers and two API nodes, all started through
 * the CLI as an operator starts them, sharing one database and one Redis prefix.
 *
 * - every event the chain emitted is archived exactly once (both indexers append it);
 * - every outbox row is delivered exactly once (the workers share it with SKIP LOCKED);
 * - every payment of a followed trackingId reaches a socket on each API node exactly once
 *   (the notifiers share one consumer group; catch-up from `since` covers what came first).
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { freePort, freePortPair } from '../support/ports.js';
import { startCli, waitFor, type Proc } from '../support/process.js';
import { startLocalnetProcess, type LocalnetProcess } from '../support/localnet-process.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { connectClient, type TestClient } from '../support/realtime-client.js';
import { deriveActors } from '../../infra/localnet/genesis.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { projectionDigest, replayProjection } from '../../projections/replay.js';
import { groupInfo } from '../../infra/redis/group-lag.js';
import { dataOf } from '../support/anchor-events.js';

const ADMIN = 'scaling-roles-admin-key';
const SEED = 'scaling-roles';
const EVENTS = 1500;
const FOLLOWED = Array.from({ length: 100 }, (_, i) => `trk-${i + 1}`);

/** Payments by trackingId: a PaymentRecord's memo, or the memo of the composable policy it executed. */
export function paymentsOf(ledger: readonly TributaryEvent[], followed: ReadonlySet<string>): Map<string, string[]> {
  const composableMemo = new Map<string, string>();
  const out = new Map<string, string[]>();
  const add = (tid: string | undefined, e: TributaryEvent) => {
    if (tid === undefined || !followed.has(tid)) return;
    out.set(tid, [...(out.get(tid) ?? []), `${e.signature}:${dataOf(e)['record_id'] as number}`]);
  };
  for (const e of ledger) {
    if (e.name === 'ComposablePolicyCreated') composableMemo.set(e.data['composable_policy'], e.data['memo']);
    if (e.name === 'PaymentRecord') add(e.data['memo'], e);
    if (e.name === 'ComposableExecuted') add(composableMemo.get(e.data['composable_policy']), e);
  }
  return out;
}

describe('scaling: every role as two processes at once', function () {
  this.timeout(300_000);
  let env: TestEnv;
  let ln: LocalnetProcess;
  let lnPort = 0;
  const procs: { name: string; proc: Proc }[] = [];
  const receivers: Receiver[] = [];
  const clients: TestClient[] = [];
  const apiUrls: string[] = [];

  const start = (name: string, args: string[], e: Record<string, string>) => {
    const proc = startCli(args, e);
    procs.push({ name, proc });
    void proc.exited.then((code) => { if (code !== 0 && code !== null) process.stderr.write(`${name} exited ${code}: ${proc.output().slice(-2000)}\n`); });
  };

  before(async () => {
    env = await createTestEnv('scaling-roles');
    lnPort = await freePortPair();
    const common = {
      ...env.env, ADMIN_API_KEY: ADMIN, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_MS: '100', PROJECTOR_BLOCK_MS: '100',
      POOL_SYNC_INTERVAL_MS: '0', SOLANA_RPC_URL: `http://127.0.0.1:${lnPort}`, SOLANA_WS_URL: `ws://127.0.0.1:${lnPort + 1}`,
      SOLANA_CLUSTER: 'localnet', INDEXER_BACKFILL_INTERVAL_MS: '2000', RATE_LIMIT_PER_MINUTE: '100000',
    };
    for (let i = 1; i <= 2; i += 1) {
      const port = await freePort();
      apiUrls.push(`http://127.0.0.1:${port}`);
      start(`api-${i}`, ['serve', '--role', 'api'], { ...common, PORT: String(port), HOST: '127.0.0.1' });
      start(`projector-${i}`, ['serve', '--role', 'projector'], common);
      start(`webhooks-${i}`, ['serve', '--role', 'webhooks'], common);
      start(`notifier-${i}`, ['serve', '--role', 'notifier'], common);
    }
    for (const url of apiUrls) await waitFor(async () => (await fetch(`${url}/v1/health`)).ok, 90_000, `${url} healthy`);
    // one webhook per fixture gateway, registered before the chain emits anything
    for (const g of deriveActors(SEED).gateways) {
      const receiver = await startReceiver(() => 200);
      receivers.push(receiver);
      const res = await fetch(`${apiUrls[0]}/v1/webhooks`, {
        method: 'POST', headers: { 'x-admin-key': ADMIN, 'content-type': 'application/json' },
        body: JSON.stringify({ gateway_pubkey: g.authority.publicKey.toBase58(), endpoint_url: receiver.url }),
      });
      expect(res.status, await res.clone().text()).to.equal(201);
    }
    for (const url of apiUrls) {
      const c = await connectClient(url);
      clients.push(c);
      for (const tid of FOLLOWED) expect((await c.subscribe(tid, 0)).ok, tid).to.equal(true);
    }
    ln = await startLocalnetProcess({ seed: SEED, rate: 150, maxEvents: EVENTS, port: lnPort });
    for (let i = 1; i <= 2; i += 1) start(`indexer-${i}`, ['serve', '--role', 'indexer'], common);
  });

  after(async () => {
    for (const c of clients) c.close();
    for (const { proc } of procs) if (proc.child.exitCode === null) proc.child.kill('SIGTERM');
    await Promise.all(procs.map(({ proc }) => proc.exited));
    for (const r of receivers) await r.close();
    await ln?.stop();
    await env?.close();
  });

  it('archives every event of the chain exactly once', async () => {
    await ln.workloadDone(120_000);
    const ledger = await ln.ledger();
    await waitFor(async () => {
      const r = await env.db.selectFrom('events').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
      return Number(r.n) >= ledger.length;
    }, 120_000, `${ledger.length} events archived`);
    const rows = await env.db.selectFrom('events').select(['id', 'name']).execute();
    expect(rows.length).to.equal(ledger.length);
    expect(new Set(rows.map((r) => r.id))).to.deep.equal(new Set(ledger.map((e) => e.id)));
    // two projector processes, and exactly one leader per projection at a time (the other stands by)
    const leaders = await sql<{ name: string; n: string }>`
      SELECT application_name AS name, count(*) AS n FROM pg_stat_activity
      WHERE datname = current_database() AND application_name LIKE 'tributary-leader-%' GROUP BY application_name`.execute(env.db);
    expect(leaders.rows.map((r) => r.name).sort()).to.deep.equal(PROJECTIONS.map((p) => `tributary-leader-${p.name}`.slice(0, 63)).sort());
    expect(leaders.rows.every((r) => r.n === '1')).to.equal(true);
  });

  it('delivers every outbox row exactly once across two webhook workers', async () => {
    const outbox = await waitFor(async () => {
      const rows = await env.db.selectFrom('webhook_deliveries').select(['webhook_id', 'event_id', 'status']).execute();
      return rows.length > 0 && rows.every((r) => r.status === 'delivered') ? rows : undefined;
    }, 120_000, 'every outbox row delivered');
    await new Promise((r) => setTimeout(r, 1000));
    const received = receivers.flatMap((r) => r.requests.map((q) => `${String(q.headers['webhook-id'])}@${r.url}`));
    expect(received.length, 'no delivery twice').to.equal(new Set(received).size);
    // the workload goes on: rows may be added (and delivered) after the snapshot, so every row of the snapshot
    // was received, and nothing was received that is not a delivered row now
    expect(received.length).to.be.at.least(outbox.length);
    // a pushed first attempt's row is written with its outcome, just after its POST: read the rows a moment later
    await new Promise((r) => setTimeout(r, 1000));
    const deliveredNow = await env.db.selectFrom('webhook_deliveries').select('event_id').where('status', '=', 'delivered').execute();
    expect(received.length).to.be.at.most(deliveredNow.length);
    process.stdout.write(`      ${outbox.length} deliveries to ${receivers.length} receivers, each once\n`);
  });

  it('hands every payment of a followed trackingId to a socket on each API node exactly once', async () => {
    const expected = paymentsOf(await ln.ledger(), new Set(FOLLOWED));
    const all = [...expected.values()].flat();
    expect(all.length).to.be.greaterThan(10);
    for (const c of clients) {
      await waitFor(async () => {
        const got = new Set(c.payments.map((p) => `${p.data.signature}:${p.data.recordId}`));
        return all.every((k) => got.has(k));
      }, 90_000, `all ${all.length} payments on a socket`);
    }
    await new Promise((r) => setTimeout(r, 1500));
    for (const c of clients) {
      const keys = c.payments.map((p) => `${p.data.trackingId}|${p.data.signature}:${p.data.recordId}`);
      expect(keys.length, 'no payment twice').to.equal(new Set(keys).size);
      const byTid = new Map<string, string[]>();
      for (const p of c.payments) byTid.set(p.data.trackingId, [...(byTid.get(p.data.trackingId) ?? []), `${p.data.signature}:${p.data.recordId}`]);
      for (const [tid, want] of expected) expect(new Set(byTid.get(tid)), tid).to.deep.equal(new Set(want));
    }
    process.stdout.write(`      ${all.length} payments on ${expected.size} trackingIds, each once on each of ${clients.length} sockets\n`);
  });

  // One projector at a time leads each projection (projections/runner/leadership.ts), so
  // two processes build exactly what a replay in archive order builds.
  for (const p of PROJECTIONS.filter((x) => x.replayable)) {
    it(`builds the ${p.name} read model with two projectors exactly as a clean replay of the archive`, async function () {
      await waitFor(async () => (await groupInfo(env.redis, env.keys.events)).every((g) => g.pending === 0 && (g.lag ?? 0) === 0), 60_000, 'every group drained');
      const live = await projectionDigest(env.db, p);
      const replay = await replayProjection(env.db, p);
      expect(replay.digest, `${p.name}: live model = replay`).to.equal(live);
    });
  }
});
