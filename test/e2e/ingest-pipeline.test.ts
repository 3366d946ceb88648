/**
 * The ingest pipeline as a user runs it: `tributary localnet` with a seeded workload of
 * 5,000 events, `serve --role indexer`, `serve --role projector` and `serve --role api`,
 * each its own process. Once the workload has stopped and the pipeline settled, the events
 * API counts every event name as the localnet does, and every archived event carries the
 * fields the localnet emitted.
 */
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'chai';
import { EVENT_NAMES } from '../../src/kernel/events/catalog.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startLocalnetProcess, type LocalnetProcess } from '../support/localnet-process.js';
import { freePort, freePortPair } from '../support/ports.js';
import { startCli, waitFor, type Proc } from '../support/process.js';

const MAX_EVENTS = 5_000;

/** An archive row in the envelope's shape, to compare with the ledger's event. */
async function archivedEvents(env: TestEnv): Promise<Map<string, TributaryEvent>> {
  const rows = await env.db.selectFrom('events')
    .select(['id', 'name', 'signature', 'slot', 'block_time', 'ix_path', 'event_index', 'data']).execute();
  return new Map(rows.map((r) => [r.id, {
    id: r.id, name: r.name as TributaryEvent['name'], signature: r.signature, slot: Number(r.slot),
    blockTime: r.block_time === null ? null : Number(r.block_time), ixPath: r.ix_path, index: r.event_index, data: r.data,
  } as TributaryEvent]));
}

const countByName = (events: readonly TributaryEvent[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const e of events) out[e.name] = (out[e.name] ?? 0) + 1;
  return out;
};

describe('ingest pipeline: localnet → indexer → projector → events API', function () {
  this.timeout(180_000);
  let env: TestEnv;
  let ln: LocalnetProcess | undefined;
  const procs: Proc[] = [];
  let api = '';

  before(async () => {
    env = await createTestEnv('ingest-e2e');
    const rpcPort = await freePortPair();
    const apiPort = await freePort();
    api = `http://127.0.0.1:${apiPort}`;
    const common = {
      ...env.env, HOST: '127.0.0.1', SOLANA_CLUSTER: 'localnet',
      SOLANA_RPC_URL: `http://127.0.0.1:${rpcPort}`, SOLANA_WS_URL: `ws://127.0.0.1:${rpcPort + 1}`,
      // the archive is what the events API reads; the read models have their own localnet tests
      PROJECTIONS: 'archive', PROJECTOR_BLOCK_MS: '100', PROJECTOR_BATCH_SIZE: '1000', POOL_SYNC_INTERVAL_MS: '0', INDEXER_BACKFILL_INTERVAL_MS: '5000', SOLANA_RPC_TIMEOUT_MS: '30000',
    };
    // the services boot while the localnet does; the indexer retries until the chain answers
    procs.push(startCli(['serve', '--role', 'indexer'], common));
    procs.push(startCli(['serve', '--role', 'projector'], common));
    procs.push(startCli(['serve', '--role', 'api'], { ...common, PORT: String(apiPort) }));
    ln = await startLocalnetProcess({ seed: 'ingest-e2e', rate: 200, maxEvents: MAX_EVENTS, port: rpcPort });
    procs.push(ln.proc);
    const apiProc = procs[2]!;
    await waitFor(async () => (await fetch(`${api}/v1/health`)).ok, 90_000, 'the api process')
      .catch((err: Error) => { throw new Error(`${err.message}; it said:\n${apiProc.output().slice(-3000)}`); });
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') for (const p of procs) process.stdout.write(`--- ${p.child.spawnargs.slice(3).join(' ')}\n${p.output().slice(-3000)}\n`);
  });

  after(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGTERM');
    await Promise.all(procs.map((p) => p.exited));
    await ln?.stop();
    await env?.close();
  });

  const count = async (eventName?: string): Promise<number> => {
    const res = await fetch(`${api}/v1/events/count${eventName ? `?eventName=${eventName}` : ''}`);
    expect(res.status).to.equal(200);
    return ((await res.json()) as { count: number }).count;
  };

  it('counts every event name as the localnet does, once the pipeline settles', async () => {
    const t0 = Date.now();
    const state = await ln!.workloadDone(120_000);
    const done = Date.now();
    expect(state.events).to.be.at.least(MAX_EVENTS);
    await waitFor(async () => (await count()) === state.events, 60_000, `${state.events} archived events`);
    const settled = Date.now();
    const ledger = await ln!.ledger();
    expect(ledger.length).to.equal(state.events);
    const byName = countByName(ledger);
    expect(byName).to.deep.equal(state.eventsByName);
    expect(EVENT_NAMES.filter((n) => !byName[n]), 'every kind of event in the workload').to.deep.equal([]);
    const api: Record<string, number> = {};
    for (const name of EVENT_NAMES) api[name] = await count(name);
    expect(api).to.deep.equal(byName);
    process.stdout.write(`      ${ledger.length} events, ${EVENT_NAMES.length} kinds, in ${state.transactions} transactions; workload done after ${((done - t0) / 1000).toFixed(0)} s, archived ${((settled - done) / 1000).toFixed(0)} s later\n`);
  });

  it('archives every event with the fields the localnet emitted', async () => {
    const ledger = await ln!.ledger();
    const archived = await archivedEvents(env);
    expect(archived.size).to.equal(ledger.length);
    const differing = ledger.filter((e) => !isDeepStrictEqual(archived.get(e.id), e));
    if (differing[0]) expect(archived.get(differing[0].id), `${differing.length} events differ`).to.deep.equal(differing[0]);
    expect(differing.length).to.equal(0);
  });

  it('serves each kind of event through /v1/events?signature= as emitted', async () => {
    const ledger = await ln!.ledger();
    for (const name of EVENT_NAMES) {
      // signature mode answers the first event of the transaction
      const e = ledger.find((x) => x.name === name && x.index === 0);
      if (!e) continue;
      const res = await fetch(`${api}/v1/events?signature=${e.signature}`);
      expect(res.status, name).to.equal(200);
      const got = (await res.json()) as TributaryEvent & { timestamp: string | null };
      const { timestamp, ...event } = got;
      expect(event, name).to.deep.equal(e);
      expect(timestamp).to.equal(e.blockTime === null ? null : new Date(e.blockTime * 1000).toISOString());
    }
  });
});
