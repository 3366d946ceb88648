/**
 * `tributary replay all` while the projector runs and events keep arriving: afterwards
 * every read model equals a clean build from the archive (equal digests) and no live
 * event was lost.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { appendEvents } from '../../infra/redis/event-stream.js';
import { runCli, startCli, waitFor, type Proc } from '../support/process.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { projectionDigest, replayProjection } from '../../projections/replay.js';
import { groupInfo } from '../../infra/redis/group-lag.js';
import { testEventStream } from '../support/event-mix.js';

describe('replay during live appends', function () {
  this.timeout(180_000);
  let env: TestEnv;
  let proc: Proc | undefined;
  before(async () => { env = await createTestEnv('replay'); });
  after(async () => { proc?.child.kill('SIGKILL'); await env.close(); });

  const settled = async () => {
    const groups = await groupInfo(env.redis, env.keys.events);
    return groups.length === PROJECTIONS.length && groups.every((g) => g.lag === 0 && g.pending === 0);
  };

  it('rebuilds every read model without a half-built state or a lost event', async () => {
    const all = testEventStream(6000, 7);
    proc = startCli(['serve', '--role', 'projector'], { ...env.env, PROJECTOR_BLOCK_MS: '100' });
    await appendEvents(env.redis, env.keys, all.slice(0, 3000));
    await waitFor(settled, 60_000, 'first half projected');

    let i = 3000;
    const feeder = (async () => {
      while (i < all.length) {
        await appendEvents(env.redis, env.keys, all.slice(i, i + 100));
        i += 100;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const replayed = await runCli(['replay', 'all'], env.env);
    expect(replayed.code, replayed.output).to.equal(0);
    await feeder;
    await waitFor(settled, 60_000, 'second half projected');

    const archived = Number((await sql<{ n: string }>`SELECT count(*) AS n FROM events`.execute(env.db)).rows[0]!.n);
    expect(archived).to.equal(all.length);
    for (const p of PROJECTIONS.filter((x) => x.replayable)) {
      const live = await projectionDigest(env.db, p);
      const applied = await env.db.selectFrom('projection_dedup').select(sql<string>`count(*)`.as('n')).where('projection', '=', p.name).executeTakeFirstOrThrow();
      // events whose rows absorb their duplicates are in the model's table instead of its dedup set
      const own = p.absorbs === undefined ? 0 : Number((await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(p.absorbs.table)}`.execute(env.db)).rows[0]!.n);
      expect(Number(applied.n) + own, `${p.name} applied every event`).to.equal(all.length);
      const clean = await replayProjection(env.db, p);
      expect(clean.digest, `${p.name} digest`).to.equal(live);
    }
  });
});
