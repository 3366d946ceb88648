/**
 * A prepaid credit's counter that Redis lost, or that went back to an older snapshot, is set
 * from the ledger with the gaps its rows leave as holes (prepaid/meter.ts, meter-slices.ts
 * seedCounter and raiseCounter): the draws given back when their requests ended unanswered are
 * the payer's to draw again. Before, a rebuilt counter stood at the ledger's high mark with no
 * holes, and the payer lost that much of a credit it had paid for. The real ledger on Postgres,
 * the real counter in Redis, draws given back the way the middleware gives them back.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { createCreditLedger, type CreditLedger } from '../../commands/x402/prepaid/ledger.js';
import { drawCredit, prepaidCounterKey } from '../../commands/x402/prepaid/meter.js';
import { giveBackDraw } from '../../commands/x402/prepaid/credit.js';
import { holesKey } from '../../commands/x402/meter-slices.js';

describe('prepaid: a counter rebuilt from the ledger keeps the draws given back', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let ledger: CreditLedger;
  before(async () => {
    env = await createTestEnv('prepaid-counter-rebuild');
    ledger = createCreditLedger(env.db);
  });
  after(async () => { await env?.close(); });

  const now = Math.floor(Date.now() / 1000);
  const credit = (policy: string) => {
    const key = prepaidCounterKey(env.prefix, policy);
    const deps = { redis: env.redis, redisPrefix: env.prefix, ledger } as Parameters<typeof giveBackDraw>[0];
    return {
      key,
      draw: (id: string) => drawCredit(env.redis, env.prefix, policy, 100n, 10n, now, ledger, { requestId: `${policy}:${id}`, gateway: 'gw' }),
      unanswered: (id: string) => giveBackDraw(deps, `${policy}:${id}`),
      /** draws until one is refused: how many were admitted */
      async drainCount() {
        for (let n = 0; ; n += 1) if (!(await this.draw(`drain-${n}`)).ok) return n;
      },
      drawn: async () => BigInt((await env.db.selectFrom('prepaid_usage').select((e) => e.fn.sum<string>('amount').as('t')).where('policy', '=', policy).executeTakeFirstOrThrow()).t ?? 0),
      snapshot: async () => Promise.all([key, holesKey(key)].map(async (k) => ({ k, dump: await env.redis.dumpBuffer(k), ttl: await env.redis.pttl(k) }))),
      async restore(snap: { k: string; dump: Buffer | null; ttl: number }[]) {
        const m = env.redis.multi();
        for (const s of snap) {
          if (s.dump) m.restore(s.k, s.ttl > 0 ? s.ttl : 0, s.dump, 'REPLACE'); else m.del(s.k);
        }
        await m.exec();
      },
    };
  };

  it('a counter Redis lost hands out the given-back draws again: the whole credit is drawn', async () => {
    const c = credit('credit-lost');
    for (const id of ['a', 'b', 'c', 'd', 'e']) expect((await c.draw(id)).ok).to.equal(true);
    await c.unanswered('b');
    await c.unanswered('d'); // holes [10,20) and [30,40); the counter stays at 50
    await env.redis.del(c.key, holesKey(c.key)); // Redis lost the counter
    expect(await c.drainCount(), 'the 30 drawn and 70 left: seven draws of 10').to.equal(7);
    expect(await c.drawn()).to.equal(100n);
  });

  it('a counter restored from an older snapshot, raised to the ledger, gets the holes given back after the snapshot', async () => {
    const c = credit('credit-restored');
    for (const id of ['a', 'b', 'c']) expect((await c.draw(id)).ok).to.equal(true);
    const older = await c.snapshot(); // at 30, no holes
    for (const id of ['d', 'e']) expect((await c.draw(id)).ok).to.equal(true);
    await c.unanswered('b'); // a hole [10,20) the snapshot does not know
    await c.restore(older);
    // the next draw takes [30,40), meets d's row, and the counter is raised to 50 with b's gap [10,20) as its hole
    expect(await c.drainCount(), '40 drawn (a, c, d, e) and 60 left: six draws of 10').to.equal(6);
    expect(await c.drawn()).to.equal(100n);
  });
});
