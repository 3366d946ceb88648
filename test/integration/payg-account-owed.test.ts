/**
 * A payer account's usage not charged yet, kept by the ledger itself (migration 1015): a Redis
 * restored from an older snapshot cannot take it past the exposure the merchant accepts.
 *
 * The account's position in Redis only ever moves up, and a slice overlapping a row the ledger
 * holds is refused, so a counter that went back in time is caught when it hands out a position
 * a row still holds. A request that ended unanswered deletes its row, though, and leaves a gap:
 * a restored counter handed those positions out again, met no row, and its outstanding lacked
 * every chunk counted after the snapshot. Found by the money model under load (MODEL_SEED=724190:
 * an account owing 35,000 against a bound of 30,000). The real ledger on Postgres, the real
 * counters in Redis, requests ended unanswered the way the middleware ends them.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { createUsageLedger } from '../../commands/settlement/usage-ledger.js';
import { createRelease } from '../../commands/x402/account-outstanding.js';
import { chargeExecuted, chargeFailed, markUnbillable } from '../../commands/settlement/charges.js';
import { meterRequest } from '../../commands/x402/metering.js';
import { paygScheme } from '../../commands/x402/schemes/payg.js';
import type { SchemeContext, X402Grant } from '../../commands/x402/schemes/scheme.js';
import type { PayAsYouGoType } from '../../src/kernel/domain/policy-type.js';

describe('pay-as-you-go: the ledger keeps each account\'s outstanding and refuses a row past its limit', function () {
  this.timeout(30_000);
  let env: TestEnv;
  before(async () => { env = await createTestEnv('payg-account-owed'); });
  after(async () => { await env?.close(); });

  const now = Math.floor(Date.now() / 1000);
  const paygType: PayAsYouGoType = {
    kind: 'PayAsYouGo', max_amount_per_period: '1000000', max_chunk_amount: '1000', period_length_seconds: '86400',
    current_period_start: String(now - 60), current_period_total: '0', expiry_date: null,
  };
  /** an account's policies, metered 10 a request against an exposure of 30 */
  const accountUnder = (account: string) => {
    const ledger = createUsageLedger(env.db);
    const ctx = { redis: env.redis, redisPrefix: env.prefix, usage: ledger } as unknown as SchemeContext;
    const meter = (policy: string, id: string) => meterRequest(env.redis, env.prefix, policy, paygType, 10n, now,
      { ledger, requestId: `${account}:${id}`, gateway: 'gw', userPayment: account }, { amount: 1_000_000n, exposure: 30n, refuse: () => 'unfunded' });
    return {
      meter,
      async admit(policy: string, id: string) {
        const m = await meter(policy, id);
        expect(m.ok, `${id}: ${m.ok ? '' : m.reason}`).to.equal(true);
        await ledger.served(`${account}:${id}`);
      },
      unanswered: (id: string) => paygScheme.answered!(ctx, { scheme: 'x402://payg', metered: { requestId: `${account}:${id}` } } as X402Grant, false),
      /** what the ledger's rows say the account owes, and what its tally says */
      async owed() {
        const rows = await sql<{ rows: string; tally: string | null }>`
          SELECT (SELECT coalesce(sum(u.chunk), 0) FROM payg_usage u LEFT JOIN payg_charges c ON c.id = u.charge_id
                  WHERE u.user_payment = ${account} AND u.unbillable_reason IS NULL AND (c.id IS NULL OR c.status <> 'executed'))::text AS rows,
                 (SELECT owed::text FROM payg_account_owed WHERE user_payment = ${account}) AS tally`.execute(env.db);
        return { rows: Number(rows.rows[0]!.rows), tally: Number(rows.rows[0]!.tally ?? 0) };
      },
      /** the account's keys in Redis, as an older snapshot holds them */
      async snapshot() {
        const keys = await env.redis.keys(`${env.prefix}x402:outstanding*${account}`);
        return Promise.all(keys.map(async (k) => ({ k, dump: (await env.redis.dumpBuffer(k)), ttl: await env.redis.pttl(k) })));
      },
      async restore(snap: { k: string; dump: Buffer; ttl: number }[]) {
        const m = env.redis.multi();
        for (const s of snap) m.restore(s.k, s.ttl > 0 ? s.ttl : 0, s.dump, 'REPLACE');
        await m.exec();
      },
    };
  };

  it('a restored outstanding that hands out a given-back gap again is refused at the exposure', async () => {
    const a = accountUnder('account-gap');
    await a.admit('policy-1', 'x');
    const older = await a.snapshot(); // owes 10, position 10
    await a.admit('policy-1', 'a1');
    await a.admit('policy-1', 'a2');
    await a.unanswered('a1');
    await a.unanswered('a2'); // their rows deleted: positions [10,30) held by nothing
    await a.admit('policy-1', 'b1');
    await a.admit('policy-1', 'b2'); // [30,50): the account owes 30, its exposure
    expect(await a.owed()).to.deep.equal({ rows: 30, tally: 30 });

    await a.restore(older); // Redis: owes 10, position 10
    // another policy of the account (a period counter of its own, nothing to overlap there)
    const c1 = await a.meter('policy-2', 'c1');
    expect(c1.ok, 'a restored outstanding admitted past the exposure').to.equal(false);
    expect(c1.ok ? '' : c1.reason).to.match(/30 is used and not charged on chain yet; this request costs 10 and the requirement's maxUnsettledAmount is 30/);
    expect(await a.owed()).to.deep.equal({ rows: 30, tally: 30 });
  });

  it('the tally follows every way a row leaves or rejoins the outstanding', async () => {
    const a = accountUnder('account-paths');
    for (const id of ['p', 'q', 'r']) await a.admit('policy-3', id);
    expect(await a.owed()).to.deep.equal({ rows: 30, tally: 30 });
    const release = createRelease(env.redis, env.prefix);
    const charge = async (ids: string[]) => {
      const c = await env.db.insertInto('payg_charges').values({ policy: 'policy-3', gateway: 'gw', amount: String(10 * ids.length), status: 'sending', payment_count_before: 0, signature: `sig-${ids.join('')}`, blockhash: 'bh', wire: '' })
        .returningAll().executeTakeFirstOrThrow() as unknown as { id: string; policy: string; gateway: string; signature: string | null };
      await env.db.updateTable('payg_usage').set({ charge_id: c.id }).where('request_id', 'in', ids.map((i) => `account-paths:${i}`)).execute();
      return c;
    };
    const sent = await charge(['p']);
    expect(await a.owed(), 'a charge in flight is still owed').to.deep.equal({ rows: 30, tally: 30 });
    await chargeExecuted(env.db, sent.id, release);
    expect(await a.owed(), 'executed: out').to.deep.equal({ rows: 20, tally: 20 });
    const refused = await charge(['q']);
    await chargeFailed(env.db, refused as never, 'refused', false, { outcome: 'past_due' }, release);
    expect(await a.owed(), 'failed: back to unsettled, still owed').to.deep.equal({ rows: 20, tally: 20 });
    await markUnbillable(env.db, { policy: 'policy-3', gateway: 'gw' }, 'PolicyDeleted', { outcome: 'unbillable' }, release);
    expect(await a.owed(), 'unbillable: out').to.deep.equal({ rows: 0, tally: 0 });
    await a.admit('policy-3', 's');
    await a.unanswered('s');
    expect(await a.owed(), 'admitted, then unanswered').to.deep.equal({ rows: 0, tally: 0 });
  });
});
