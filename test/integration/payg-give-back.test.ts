/**
 * A pay-as-you-go request that ended unanswered gives its chunk back (schemes/payg.ts answered,
 * meter-slices.ts GIVE_BACK_SCRIPT): always to its account's outstanding, and to its period's
 * counter only while its slice is the last the counter handed out. A counter moved back below the
 * slices of the requests admitted after it handed them out again: every request meeting one was
 * refused by the ledger (an overlap) and admitted again from the ledger's mark, its whole group
 * statement failing with it; found in the x402 bench, where requests cut off by the load
 * generator made every later request of the policy fail its statement, 5 statements and 6 Redis round trips a
 * request. The real ledger on Postgres, the real counters in Redis.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { createUsageLedger } from '../../commands/settlement/usage-ledger.js';
import { meterRequest, usageCounterKey } from '../../commands/x402/metering.js';
import { accountOutstandingKey } from '../../commands/x402/account-outstanding.js';
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

  it('gives back the account\'s outstanding always, and the period\'s room only from the top', async () => {
    const ledger = createUsageLedger(env.db);
    const now = Math.floor(Date.now() / 1000);
    const type: PayAsYouGoType = {
      kind: 'PayAsYouGo', max_amount_per_period: '1000000', max_chunk_amount: '1000', period_length_seconds: '86400',
      current_period_start: String(now - 60), current_period_total: '0', expiry_date: null,
    };
    const policy = 'policy-give-back';
    const account = 'account-give-back';
    const ctx = { redis: env.redis, redisPrefix: env.prefix, usage: ledger } as unknown as SchemeContext;
    const counter = () => env.redis.get(usageCounterKey(env.prefix, policy, type.current_period_start));
    const owed = () => env.redis.get(accountOutstandingKey(env.prefix, account));
    const admit = async (requestId: string) => {
      const m = await meterRequest(env.redis, env.prefix, policy, type, 10n, now, { ledger, requestId, gateway: 'gw', userPayment: account },
        { amount: 1_000_000n, exposure: 1_000_000n, refuse: () => 'unfunded' });
      expect(m.ok, requestId).to.equal(true);
    };
    const unanswered = (requestId: string) => paygScheme.answered!(ctx, { scheme: 'x402://payg', metered: { requestId } } as X402Grant, false);
    const slices = async () => (await env.db.selectFrom('payg_usage').select(['request_id', 'period_slice']).where('policy', '=', policy)
      .orderBy('request_id').execute()).map((r) => `${r.request_id} ${r.period_slice}`);

    for (const id of ['a', 'b', 'c']) await admit(id);
    expect([await counter(), await owed()]).to.deep.equal(['30', '30']);

    await unanswered('b'); // a slice in the middle: [10,20)
    expect(await counter(), 'the counter stays: c holds [20,30)').to.equal('30');
    expect(await owed(), 'the outstanding comes down').to.equal('20');
    inserts.n = 0;
    await admit('d');
    expect(inserts.n, 'd written in one statement, no overlap met').to.equal(1);

    await unanswered('d'); // the last slice handed out: [30,40)
    expect(await counter(), 'the top slice\'s room given back').to.equal('30');
    expect(await owed()).to.equal('20');
    inserts.n = 0;
    await admit('e');
    expect(inserts.n, 'e written in one statement').to.equal(1);
    expect(await slices()).to.deep.equal(['a [0,10)', 'c [20,30)', 'e [30,40)']);
  });
});
