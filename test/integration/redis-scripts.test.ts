/**
 * Lua scripts go by EVALSHA: the script body crosses the wire once per connection and
 * Redis restart, and a Redis that lost its scripts (NOSCRIPT) gets it again by EVAL,
 * for single calls and pipelines alike. A private redis-server, as the test flushes its
 * script cache.
 */
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { luaScript, pipelineFor, queueScript, runScript } from '../../infra/redis/scripts.js';
import { appendEvents, appendSerialized } from '../../infra/redis/event-stream.js';
import { streamKeys } from '../../src/kernel/names/index.js';
import { makeEvents } from '../support/anchor-events.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

const ECHO = luaScript<string>('tributaryTestEcho', `return KEYS[1] .. ':' .. ARGV[1]`);

/** Counts the EVAL and EVALSHA commands Redis itself has run. */
async function evalCounts(redis: Redis): Promise<{ eval: number; evalsha: number }> {
  const info = await redis.info('commandstats');
  const calls = (cmd: string) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
  return { eval: calls('eval'), evalsha: calls('evalsha') };
}

describe('Lua scripts by EVALSHA', () => {
  let server: RedisServer;
  let redis: Redis;
  before(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url, { maxRetriesPerRequest: 3 });
  });
  after(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  it('sends the body once, then only the hash, and again once after NOSCRIPT', async () => {
    await redis.config('RESETSTAT');
    for (let i = 0; i < 5; i += 1) expect(await runScript(redis, ECHO, ['k'], [i])).to.equal(`k:${i}`);
    const first = await evalCounts(redis);
    // the connection's first call sends the body (EVAL), which loads it; the rest go by hash
    expect(first).to.deep.equal({ eval: 1, evalsha: 4 });
    await redis.script('FLUSH');
    expect(await runScript(redis, ECHO, ['k'], ['again'])).to.equal('k:again');
    // EVALSHA answered NOSCRIPT, and the body went once more
    const after = await evalCounts(redis);
    expect(after.eval).to.equal(2);
    expect(after.evalsha).to.be.at.least(4);
    expect(await runScript(redis, ECHO, ['k'], ['then'])).to.equal('k:then');
    expect((await evalCounts(redis)).eval).to.equal(2);
  });

  it('runs scripts queued on a pipeline after a flush', async () => {
    await redis.script('FLUSH');
    const pipe = pipelineFor(redis, [ECHO]);
    queueScript(pipe, ECHO, ['a'], [1]);
    queueScript(pipe, ECHO, ['b'], [2]);
    const res = (await pipe.exec()) ?? [];
    expect(res.map(([err, v]) => (err ? String(err) : v))).to.deep.equal(['a:1', 'b:2']);
  });

  it('appends events unguarded, also after a flush, with no key per event', async () => {
    const keys = streamKeys('scripts-test:');
    const events = makeEvents(20, { seed: 'scripts' });
    expect(await appendEvents(redis, keys, events.slice(0, 10))).to.equal(10);
    await redis.script('FLUSH');
    expect(await appendEvents(redis, keys, events.slice(10))).to.equal(10);
    expect(await redis.xlen(keys.events)).to.equal(20);
    expect(await redis.keys('scripts-test:*')).to.deep.equal(['scripts-test:events']);
  });

  it('writes each payload as its entry, byte for byte, with the cursor in the same step', async () => {
    const keys = streamKeys('scripts-bytes:');
    const payloads = [
      '{"id":"a:0:0","data":{"memo":"caf\u00e9 \u2603 \ud83d\ude00","line":"one\\ntwo","empty":""}}',
      '{}',
      'x'.repeat(70_000),
      '{"id":"a:0:3","data":{"text":"tab\\t quote\\" back\\\\ nul\\u0000"}}',
    ];
    const events = payloads.map((payload, i) => ({ id: `a:0:${i}`, payload }));
    const cursor = { key: 'scripts-bytes:cursor', value: '{"signature":"a","slot":1}', expect: { stored: null, lastEntryId: '' } };
    expect(await appendSerialized(redis, keys, events, cursor)).to.deep.equal({ refused: false, appended: 4 });
    const entries = await redis.xrangeBuffer(keys.events, '-', '+');
    expect(entries.map(([, fields]) => fields.map((f) => f.toString('hex')))).to.deep.equal(payloads.map((p) => [Buffer.from('e').toString('hex'), Buffer.from(p).toString('hex')]));
    expect(await redis.get(cursor.key)).to.equal(cursor.value);
  });

  describe('an append guarded by the cursor', () => {
    const keys = streamKeys('scripts-cas:');
    const key = 'scripts-cas:cursor';
    const at = (signature: string) => JSON.stringify({ signature, slot: 1 });
    const one = (id: string) => [{ id, payload: `{"id":"${id}"}` }];
    const ids = async () => (await redis.xrange(keys.events, '-', '+')).map(([, f]) => f[1]);

    it('appends and moves the cursor when the stored one is the expected one, and refuses a stale writer', async () => {
      // the first writer finds no cursor and an empty stream
      expect(await appendSerialized(redis, keys, one('a'), { key, value: at('a'), expect: { stored: null, lastEntryId: '' } })).to.deep.equal({ refused: false, appended: 1 });
      expect(await appendSerialized(redis, keys, one('b'), { key, value: at('b'), expect: { stored: at('a') } })).to.deep.equal({ refused: false, appended: 1 });
      // a stale writer still expecting 'a' (it read the cursor before 'b' was appended)
      expect(await appendSerialized(redis, keys, one('b2'), { key, value: at('b2'), expect: { stored: at('a') } })).to.deep.equal({ refused: true });
      // a writer that found no cursor is refused once there is one
      expect(await appendSerialized(redis, keys, one('c'), { key, value: at('c'), expect: { stored: null, lastEntryId: '' } })).to.deep.equal({ refused: true });
      expect(await ids()).to.deep.equal(['{"id":"a"}', '{"id":"b"}']);
      expect(await redis.get(key)).to.equal(at('b'));
    });

    it('takes a retried append whose first attempt landed as done, appending nothing', async () => {
      expect(await appendSerialized(redis, keys, one('b'), { key, value: at('b'), expect: { stored: at('a') } })).to.deep.equal({ refused: false, appended: 0 });
      expect(await redis.xlen(keys.events)).to.equal(2);
    });

    it('with the cursor missing, appends only when the stream\'s last entry is still the one expected', async () => {
      await redis.del(key);
      const [last] = await redis.xrevrange(keys.events, '+', '-', 'COUNT', 1);
      const lastEntryId = last![0];
      await appendSerialized(redis, keys, one('x'));  // an unguarded write after the writer looked
      expect(await appendSerialized(redis, keys, one('c'), { key, value: at('c'), expect: { stored: null, lastEntryId } })).to.deep.equal({ refused: true });
      expect(await redis.get(key)).to.equal(null);
      const [now] = await redis.xrevrange(keys.events, '+', '-', 'COUNT', 1);
      expect(await appendSerialized(redis, keys, one('c'), { key, value: at('c'), expect: { stored: null, lastEntryId: now![0] } })).to.deep.equal({ refused: false, appended: 1 });
      expect(await ids()).to.deep.equal(['{"id":"a"}', '{"id":"b"}', '{"id":"x"}', '{"id":"c"}']);
      expect(await redis.get(key)).to.equal(at('c'));
    });
  });
});
