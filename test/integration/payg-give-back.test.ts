/**
 * A pay-as-you-go request that ended unanswered gives its chunk back (schemes/payg.ts answered,
 * meter-slices.ts GIVE_BACK_SCRIPT): always to its account's outstanding; to its period's counter
 * by moving it back only while its slice is the last the counter handed out, else as a hole the
 * meter script hands out again before the counter moves. A counter moved back below the slices of
 * the requests admitted after it handed them out again: every request meeting one was refused by
 * the ledger (an overlap) and admitted again from the ledger's mark, its whole group statement
 * failing with it; found in the x402 bench, where requests cut off by the load generator made every
 * later request of the policy fail its statement, 5 statements and 6 Redis round trips a request.
 * A slice in the middle kept as nothing was lost to the payer: that much of the period's cap gone.
 * The real ledger on Postgres, the real counters in Redis.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { createUsageLedger } from '../../commands/settlement/usage-ledger.js';
import { meterRequest, usageCounterKey } from '../../commands/x402/metering.js';
import { accountOutstandingKey } from '../../commands/x402/account-outstanding.js';
import { holesKey } from '../../commands/x402/meter-slices.js';
import { paygScheme } from '../../commands/x402/schemes/payg.js';
import type { SchemeContext, X402Grant } from '../../commands/x402/schemes/scheme.js';
import type { PayAsYouGoType } from '../../src/kernel/domain/policy-type.js';
import { countStatements, type StatementCount } from '../support/pg-statements.js';

describe('pay-as-you-go: a chunk given back never moves its counter below a slice held after it', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let inserts: StatementCount;
  before(async () => {
    env = await createTestEnv('payg-give-back');
    inserts = countStatements((text) => text.startsWith('INSERT INTO payg_usage'));
  });
  after(async () => {
    inserts?.restore();
    await env?.close();
  });

  const now = Math.floor(Date.now() / 1000);
  const paygType = (cap: number, settled = 0): PayAsYouGoType => ({
    kind: 'PayAsYouGo', max_amount_per_period: String(cap), max_chunk_amount: '1000', period_length_seconds: '86400',
    current_period_start: String(now - 60), current_period_total: String(settled), expiry_date: null,
  });
  /** one policy's counters and ledger rows, its requests admitted and ended unanswered the way the middleware does */
  const policyUnder = (policy: string, type: PayAsYouGoType) => {
    const ledger = createUsageLedger(env.db);
    const account = `account-${policy}`;
    const ctx = { redis: env.redis, redisPrefix: env.prefix, usage: ledger } as unknown as SchemeContext;
    const key = usageCounterKey(env.prefix, policy, type.current_period_start);
    return {
      key,
      counter: () => env.redis.get(key),
      owed: () => env.redis.get(accountOutstandingKey(env.prefix, account)),
      holes: async () => (await env.redis.zrange(holesKey(key), 0, -1, 'WITHSCORES')).join(' '),
      meter: (id: string) => meterRequest(env.redis, env.prefix, policy, type, 10n, now, { ledger, requestId: `${policy}:${id}`, gateway: 'gw', userPayment: account },
        { amount: 1_000_000n, exposure: 1_000_000n, refuse: () => 'unfunded' }),
      async admit(id: string) {
        const m = await this.meter(id);
        expect(m.ok, `${id}: ${m.ok ? '' : m.reason}`).to.equal(true);
        return m.ok ? m.periodTotal : -1n;
      },
      unanswered: (id: string) => paygScheme.answered!(ctx, { scheme: 'x402://payg', metered: { requestId: `${policy}:${id}` } } as X402Grant, false),
      slices: async () => (await env.db.selectFrom('payg_usage').select(['request_id', 'period_slice']).where('policy', '=', policy)
        .orderBy('period_slice').execute()).map((r) => `${r.request_id.slice(policy.length + 1)} ${r.period_slice}`),
    };
  };

  it('gives back the account\'s outstanding always; the period\'s room from the top, or as a hole handed out again', async () => {
    const p = policyUnder('policy-give-back', paygType(1_000_000));
    for (const id of ['a', 'b', 'c']) await p.admit(id);
    expect([await p.counter(), await p.owed()]).to.deep.equal(['30', '30']);

    await p.unanswered('b'); // a slice in the middle: [10,20)
    expect(await p.counter(), 'the counter stays: c holds [20,30)').to.equal('30');
    expect(await p.holes(), 'b\'s slice kept as a hole (start, end)').to.equal('10 20');
    expect(await p.owed(), 'the outstanding comes down').to.equal('20');
    inserts.n = 0;
    expect(await p.admit('d'), 'the period\'s use: a, c, d').to.equal(30n);
    expect(inserts.n, 'd written in one statement, no overlap met').to.equal(1);
    expect([await p.counter(), await p.holes()], 'd took the hole, the counter did not move').to.deep.equal(['30', '']);
    await p.admit('e');
    expect(await p.counter()).to.equal('40');

    await p.unanswered('c'); // [20,30): a hole again
    await p.unanswered('e'); // [30,40), the last handed out: the counter moves back over it and the hole below
    expect([await p.counter(), await p.holes(), await p.owed()]).to.deep.equal(['20', '', '20']);
    inserts.n = 0;
    await p.admit('f');
    expect(inserts.n, 'f written in one statement').to.equal(1);
    expect(await p.slices()).to.deep.equal(['a [0,10)', 'd [10,20)', 'f [20,30)']);
  });

  it('admits into a hole at the period\'s cap: the payer keeps what was given back', async () => {
    const p = policyUnder('policy-hole-cap', paygType(30));
    for (const id of ['a', 'b', 'c']) await p.admit(id);
    const full = await p.meter('x');
    expect(full.ok, 'the cap is reached').to.equal(false);
    await p.unanswered('b');
    expect(await p.admit('d'), 'b\'s room used by d').to.equal(30n);
    expect((await p.meter('y')).ok, 'and then the cap holds').to.equal(false);
    expect(await p.slices()).to.deep.equal(['a [0,10)', 'd [10,20)', 'c [20,30)']);
  });

  it('never hands out a hole the ledger holds (Redis restored from an older snapshot) or one below what the chain charged', async () => {
    const p = policyUnder('policy-hole-stale', paygType(1_000_000));
    for (const id of ['a', 'b']) await p.admit(id);
    // a hole a stale Redis brings back: a's slice [0,10), which the ledger holds
    await env.redis.zadd(holesKey(p.key), 10, '0');
    inserts.n = 0;
    await p.admit('c');
    expect(inserts.n, 'refused once (an overlap), admitted again from the ledger\'s mark').to.equal(2);
    expect(await p.holes(), 'the holes of a counter found behind the ledger are forgotten').to.equal('');
    expect(await p.slices()).to.deep.equal(['a [0,10)', 'b [10,20)', 'c [20,30)']);

    // the chain charged 20 in the period: slices below 20 are its, a hole there is not handed out
    const q = policyUnder('policy-hole-floor', paygType(1_000_000, 20));
    for (const id of ['a', 'b']) await q.admit(id);
    await env.redis.zadd(holesKey(q.key), 10, '0');
    expect(await q.admit('c'), 'the period\'s use counts from the chain\'s total').to.equal(50n);
    expect(await q.slices()).to.deep.equal(['a [20,30)', 'b [30,40)', 'c [40,50)']);
    expect(await q.holes(), 'the hole below the floor dropped').to.equal('');
  });
});
