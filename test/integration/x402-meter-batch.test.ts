import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { runScriptGrouped } from '../../commands/x402/meter-batch.js';
import { METER_SCRIPT, meterKeys } from '../../commands/x402/meter-slices.js';

describe('x402 meter scripts grouped per round of the event loop', () => {
  let env: TestEnv;
  before(async () => { env = await createTestEnv('meter_batch'); });
  after(async () => { await env.close(); });

  const draw = (key: string, cost: number, limit: number) =>
    runScriptGrouped(env.redis, METER_SCRIPT, meterKeys(key), [String(cost), String(limit), String(Math.floor(Date.now() / 1000) + 60), '0', '0']);

  it('runs every concurrent call as its own atomic check: together they never pass the limit, each learns its own answer', async () => {
    const key = `${env.prefix}meter-batch:a`;
    await draw(`${env.prefix}meter-batch:warm`, 1, 1); // the script loaded on the connection
    const streams = new Set<unknown>();
    let alone = 0;
    const original = env.redis.sendCommand.bind(env.redis);
    // the scripts' round trips: a pipeline's commands share one stream object
    env.redis.sendCommand = ((...a: Parameters<typeof original>) => {
      if (a[0].name === 'evalsha') { if (a[1]) streams.add(a[1]); else alone += 1; }
      return original(...a);
    });
    try {
      const answers = await Promise.all(Array.from({ length: 25 }, () => draw(key, 3, 60)));
      const admitted = answers.filter((r) => r[0] === 1);
      expect(admitted).to.have.length(20);
      // each admitted call holds its own slice: 0, 3, 6, ... 57
      expect(admitted.map((r) => r[3]).sort((x, y) => x - y)).to.deep.equal(Array.from({ length: 20 }, (_, i) => i * 3));
      expect(answers.filter((r) => r[0] === 0).every((r) => r[1] === 60)).to.equal(true);
      expect(await env.redis.get(key)).to.equal('60');
      expect(streams.size).to.equal(1);
      expect(alone).to.equal(0);
    } finally {
      env.redis.sendCommand = original;
    }
  });

  it('fails only the call whose script errs, and sends a call alone in its round by itself', async () => {
    const key = `${env.prefix}meter-batch:b`;
    await env.redis.set(`${env.prefix}meter-batch:text`, 'not a number');
    const [good, bad] = await Promise.allSettled([draw(key, 5, 10), draw(`${env.prefix}meter-batch:text`, 5, 10)]);
    expect(good.status).to.equal('fulfilled');
    expect(bad.status).to.equal('rejected');
    const alone = await draw(key, 5, 10);
    expect(alone[0]).to.equal(1);
    expect(alone[1]).to.equal(10);
    expect((await draw(key, 1, 10))[0]).to.equal(0);
  });
});
