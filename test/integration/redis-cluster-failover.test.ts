/**
 * A master of a private Redis Cluster fails mid-stream: the replica of the master that
 * holds the spine's slot takes over (CLUSTER FAILOVER), then the new master is killed
 * with -9 and the cluster promotes its replica. Appends go on as the indexer's do (each
 * guarded by the cursor it expects, a failed one retried, a refused one resumed from the
 * stored cursor) and the payments projection follows: every event appended is in
 * Postgres once, none is missing.
 */
import { expect } from 'chai';
import { startClusterRun, type ClusterRun, type ClusterTestEnv, type TestRedisCluster } from '../support/redis-cluster.js';
import { payment } from '../support/realtime-client.js';
import { waitFor } from '../support/process.js';
import { appendSerialized, type CursorExpectation } from '../../infra/redis/event-stream.js';
import { createLogger } from '../../infra/log/logger.js';
import { cursorKey } from '../../src/kernel/names/index.js';
import { serializeEvent, type SerializedEvent } from '../../src/kernel/events/envelope.js';

const logger = createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent', 'test');
const BATCHES = 60;
const PER_BATCH = 10;

describe('the spine through a Redis Cluster failover and a master killed', function () {
  this.timeout(240_000);
  let run: ClusterRun;
  let cluster: TestRedisCluster;
  let env: ClusterTestEnv;

  before(async () => {
    run = await startClusterRun('rc-failover', { nodeTimeoutMs: 1500, projector: { maxAttempts: 50 } });
    ({ cluster, env } = run);
  });
  after(async () => {
    await run?.close();
  });

  it('appends on through both faults and projects every event once', async () => {
    const batches: SerializedEvent[][] = Array.from({ length: BATCHES }, (_, b) =>
      Array.from({ length: PER_BATCH }, () => payment(`rc-fo-${b}`)).map((e) => ({ id: e.id, payload: serializeEvent(e) })));
    const key = cursorKey(env.prefix);
    const faults: Promise<number>[] = [];
    let errors = 0;
    let refusals = 0;
    let longest = 0;
    let b = 0;
    while (b < BATCHES) {
      // the failover while batches 20.. go in; the kill while 40.. do; the last ten after both
      if (b === 20 && faults.length === 0) faults.push(cluster.failoverOf(env.keys.events));
      if (b === 40 && faults.length === 1) {
        await faults[0];
        faults.push(cluster.killMasterOf(env.keys.events));
      }
      if (b === 50) await Promise.all(faults);
      const expect_: CursorExpectation = b === 0 ? { stored: null, lastEntryId: '' } : { stored: `batch-${b - 1}` };
      const t0 = Date.now();
      try {
        const r = await appendSerialized(env.redis, env.keys, batches[b]!, { key, value: `batch-${b}`, expect: expect_ });
        if (r.refused) {
          // the stored cursor is not the one this writer left: start again after what is stored
          refusals += 1;
          const stored = await env.redis.get(key);
          b = stored === null ? 0 : Number(stored.slice('batch-'.length)) + 1;
          continue;
        }
        longest = Math.max(longest, Date.now() - t0);
        b += 1;
      } catch {
        errors += 1;
        await new Promise((r) => setTimeout(r, 100));
      }
      await new Promise((r) => setTimeout(r, 30));
    }
    const [promoted, killed] = await Promise.all(faults);
    expect(killed).to.equal(promoted);
    expect(await cluster.masterOf(env.keys.events)).to.not.equal(killed);
    const all = batches.flat().map((e) => e.id).sort();
    const count = async () => Number((await env.db.selectFrom('payments').select((q) => q.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    await waitFor(async () => (await count()) >= all.length, 60_000, 'every payment projected');
    const rows = await env.db.selectFrom('payments').select('event_id').execute();
    expect(rows.map((r) => r.event_id).sort()).to.deep.equal(all);
    expect(await env.redis.get(key)).to.equal(`batch-${BATCHES - 1}`);
    const entries = await env.redis.xlen(env.keys.events);
    expect(entries).to.be.at.least(all.length);
    logger.info({ errors, refusals, entries }, 'failover run');
    process.stdout.write(`      appended ${all.length} events in ${BATCHES} guarded batches: ${errors} failed attempts retried, ${refusals} refused, ${entries} stream entries, ${rows.length} rows; longest append ${longest} ms\n`);
  });
});
