/**
 * Consumer-group lag as status, /metrics, the tests and the soak read it (lag.ts). Redis
 * 7.0 was seen, after a restart from its append-only file mid-stream, to report a lag of
 * thousands for groups that had read the stream's last entry, for good; XGROUP SETID with
 * a wrong ENTRIESREAD puts a group in that very state.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { groupInfo } from '../../infra/redis/group-lag.js';

describe('consumer group lag', function () {
  this.timeout(20_000);
  let env: TestEnv;
  const stream = () => env.keys.events;

  before(async () => {
    env = await createTestEnv('group-lag');
    await env.redis.xgroup('CREATE', stream(), 'caught-up', '0', 'MKSTREAM');
    await env.redis.xgroup('CREATE', stream(), 'behind', '0');
    for (let i = 0; i < 40; i += 1) await env.redis.xadd(stream(), '*', 'p', String(i));
    await env.redis.xreadgroup('GROUP', 'caught-up', 'c', 'COUNT', 100, 'STREAMS', stream(), '>');
    await env.redis.xreadgroup('GROUP', 'behind', 'c', 'COUNT', 15, 'STREAMS', stream(), '>');
  });
  after(async () => { await env?.close(); });

  it('reports 0 for a group at the stream\'s last entry even when Redis counts otherwise', async () => {
    const last = (await env.redis.xrevrange(stream(), '+', '-', 'COUNT', 1))[0]![0];
    await env.redis.xgroup('SETID', stream(), 'caught-up', last, 'ENTRIESREAD', 7);
    const raw = (await env.redis.xinfo('GROUPS', stream())) as unknown[][];
    const rawLag = raw.map((g) => g[g.indexOf('lag') + 1]);
    expect(rawLag, 'Redis itself reports the wrong lag').to.include(33);
    const groups = await groupInfo(env.redis, stream());
    expect(groups.find((g) => g.name === 'caught-up')!.lag).to.equal(0);
  });

  it('counts the entries after the last delivery when Redis cannot tell', async () => {
    const fifteenth = (await env.redis.xrange(stream(), '-', '+', 'COUNT', 15)).at(-1)![0];
    await env.redis.xdel(stream(), (await env.redis.xrange(stream(), '-', '+', 'COUNT', 1))[0]![0]); // makes entries-read unknowable
    await env.redis.xgroup('SETID', stream(), 'behind', fifteenth);
    const raw = ((await env.redis.xinfo('GROUPS', stream())) as unknown[][]).find((g) => g[1] === 'behind')!;
    expect(raw[raw.indexOf('lag') + 1], 'Redis cannot tell').to.equal(null);
    const behind = (await groupInfo(env.redis, stream())).find((g) => g.name === 'behind')!;
    expect(behind.lag).to.equal(25);
  });
});
