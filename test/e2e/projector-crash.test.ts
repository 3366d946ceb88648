/**
 * The projector as a real process, killed with SIGKILL five times while 50,000 events
 * flow: the archive ends up with every event exactly once.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { appendRaw } from '../../infra/redis/event-stream.js';
import { serializeEvent } from '../../src/kernel/events/envelope.js';
import { startCli, waitFor, type Proc } from '../support/process.js';
import { syntheticEvents } from '../support/synthetic-events.js';

const TOTAL = 50_000;

describe('projector under kill -9', function () {
  this.timeout(240_000);
  let env: TestEnv;
  let proc: Proc | undefined;
  before(async () => { env = await createTestEnv('crash'); });
  after(async () => { proc?.child.kill('SIGKILL'); await env.close(); });

  const archived = async () => Number((await sql<{ n: string }>`SELECT count(DISTINCT id) AS n, count(*) AS m FROM events`.execute(env.db)).rows[0]!.n);
  const projectorEnv = () => ({ ...env.env, PROJECTOR_CLAIM_IDLE_MS: '1000', PROJECTOR_BLOCK_MS: '200', PROJECTOR_BATCH_SIZE: '500' });
  const start = () => { proc = startCli(['serve', '--role', 'projector'], projectorEnv()); };

  it('archives every event exactly once across five crashes', async () => {
    const events = syntheticEvents(TOTAL, 42);
    start();
    let sent = 0;
    let kills = 0;
    const feeder = (async () => {
      while (sent < TOTAL) {
        const chunk = events.slice(sent, sent + 1000);
        // every tenth chunk is sent twice: duplicates must be absorbed
        const payloads = chunk.map(serializeEvent);
        await appendRaw(env.redis, env.keys, (sent / 1000) % 10 === 3 ? [...payloads, ...payloads] : payloads);
        sent += chunk.length;
        await new Promise((r) => setTimeout(r, 40));
      }
    })();
    while (kills < 5) {
      await waitFor(async () => (await archived()) > (kills + 1) * 6000, 60_000, `progress before kill ${kills + 1}`);
      proc!.child.kill('SIGKILL');
      await proc!.exited;
      kills += 1;
      start();
    }
    await feeder;
    await waitFor(async () => (await archived()) === TOTAL, 120_000, 'all events archived');
    const rows = await sql<{ n: string; d: string }>`SELECT count(*) AS n, count(DISTINCT id) AS d FROM events`.execute(env.db);
    expect(Number(rows.rows[0]!.n)).to.equal(TOTAL);
    expect(Number(rows.rows[0]!.d)).to.equal(TOTAL);
    const expected = new Set(events.map((e) => e.id));
    const ids = await env.db.selectFrom('events').select('id').execute();
    expect(ids.every((r) => expected.has(r.id))).to.equal(true);
    proc!.child.kill('SIGTERM');
    expect(await proc!.exited).to.equal(0);
  });
});
