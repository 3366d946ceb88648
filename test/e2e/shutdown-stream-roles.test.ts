/**
 * SIGTERM in the middle of work for the roles at both ends of the stream, each a real
 * process: the notifier leaves no entry half-done (none pending) and a restart drains
 * the rest; the indexer stops mid-workload and a restart leaves the stream holding every
 * event the localnet emitted exactly once; and every role in one process stops cleanly.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { freePort } from '../support/ports.js';
import { startCli, terminate, waitFor, type Proc } from '../support/process.js';
import { syntheticEvents } from '../support/synthetic-events.js';
import { appendRaw } from '../../infra/redis/event-stream.js';
import { parseEvent, serializeEvent } from '../../src/kernel/events/envelope.js';
import { groupInfo } from '../../infra/redis/group-lag.js';
import { NOTIFIER_GROUP } from '../../queries/realtime/keys.js';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';

describe('graceful shutdown of the stream roles on SIGTERM', function () {
  this.timeout(120_000);
  let env: TestEnv;
  let ln: Localnet | undefined;
  const procs: Proc[] = [];
  const start = (roles: string, extra: Record<string, string>) => {
    const p = startCli(['serve', '--role', roles], { ...env.env, LOG_LEVEL: 'info', ...extra });
    procs.push(p);
    return p;
  };
  before(async () => { env = await createTestEnv('shutdown-stream'); });
  after(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await ln?.close();
    await env.close();
  });

  it('notifier: leaves nothing pending and a restart drains the rest', async () => {
    const TOTAL = 20_000;
    const events = syntheticEvents(TOTAL, 11);
    for (let i = 0; i < TOTAL; i += 2000) await appendRaw(env.redis, env.keys, events.slice(i, i + 2000).map(serializeEvent));
    const notifierGroup = async () => (await groupInfo(env.redis, env.keys.events)).find((g) => g.name === NOTIFIER_GROUP);
    const settings = { SOLANA_RPC_URL: 'http://127.0.0.1:1', PROJECTOR_BATCH_SIZE: '50', PROJECTOR_BLOCK_MS: '200' };
    const first = start('notifier', settings);
    await waitFor(async () => ((await notifierGroup())?.lag ?? TOTAL) < TOTAL - 200, 60_000, 'the notifier at work');
    expect((await terminate(first)).code).to.equal(0);
    const after = (await notifierGroup())!;
    expect(after.pending, 'entries read but not finished').to.equal(0);
    expect(after.lag, 'stopped mid-work').to.be.above(0);

    const second = start('notifier', settings);
    await waitFor(async () => (await notifierGroup())?.lag === 0, 90_000, 'the rest drained after a restart');
    expect((await terminate(second)).code).to.equal(0);
  });

  it('indexer: stops mid-workload, and a restart leaves every emitted event in the stream exactly once', async () => {
    const MAX = 300;
    await env.redis.del(env.keys.events);
    ln = await startLocalnet({ port: 0, seed: 'shutdown-indexer', rate: 60, maxEvents: MAX });
    const settings = { SOLANA_RPC_URL: ln.rpcUrl, SOLANA_WS_URL: ln.wsUrl, SOLANA_CLUSTER: 'localnet', INDEXER_BACKFILL_INTERVAL_MS: '1000', INDEXER_PAGE_SIZE: '50' };
    const first = start('indexer', settings);
    await waitFor(async () => (await env.redis.xlen(env.keys.events)) >= 40, 60_000, 'the indexer at work');
    expect((await terminate(first)).code).to.equal(0);
    expect(await env.redis.xlen(env.keys.events), 'stopped before the workload ended').to.be.below(MAX);

    const second = start('indexer', settings);
    await waitFor(async () => ln!.ledger().length >= MAX, 60_000, 'the workload to end');
    // the last transaction may still land: take the ledger once it has stopped growing
    let seen = -1;
    await waitFor(async () => {
      const n = ln!.ledger().length;
      if (n === seen) return true;
      seen = n;
      await new Promise((r) => setTimeout(r, 1000));
      return false;
    }, 30_000, 'the ledger to stop growing');
    const ledger = ln.ledger();
    await waitFor(async () => (await env.redis.xlen(env.keys.events)) >= ledger.length, 60_000, 'the stream to hold the ledger');
    await new Promise((r) => setTimeout(r, 1500)); // a late duplicate would show by now
    const ids = (await env.redis.xrange(env.keys.events, '-', '+')).map(([, f]) => parseEvent(f[1] ?? '').id);
    expect(new Set(ids).size, 'no event twice').to.equal(ids.length);
    expect([...ids].sort()).to.deep.equal(ledger.map((e) => e.id).sort());
    expect((await terminate(second)).code).to.equal(0);
  });

  it('every role in one process: stops cleanly', async () => {
    const port = await freePort();
    const all = start('api,projector,webhooks,notifier,indexer', {
      PORT: String(port), HOST: '127.0.0.1', SOLANA_RPC_URL: ln!.rpcUrl, SOLANA_WS_URL: ln!.wsUrl, SOLANA_CLUSTER: 'localnet', POOL_SYNC_INTERVAL_MS: '0',
    });
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/v1/health`)).ok, 60_000, 'the API of the all-roles process');
    await waitFor(async () => /projector started/.test(all.output()) && /notifier started/.test(all.output()), 30_000, 'every role started');
    expect((await terminate(all)).code).to.equal(0);
    expect(all.output()).to.match(/"msg":"stopped"/);
    expect(all.output()).not.to.match(/graceful stop timed out|role failed to stop/);
  });
});
