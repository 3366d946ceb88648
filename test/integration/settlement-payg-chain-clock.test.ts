/**
 * The settler plans a pay-as-you-go charge with the chain's clock. The program rolls a
 * policy's period by Clock::unix_timestamp (the block's time, behind the local clock): a
 * settler reading its own clock past the period's end planned the whole cap as room, sent a
 * charge the program refused as over the cap, and marked the usage unbillable. Planned by the
 * chain's clock, a charge carries what the chain's period still takes, and the rest waits.
 *
 * Real settler, localnet chain, the usage ledger in Postgres.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { payAndFetch } from '../../src/app/index.js';
import { createLogger } from '../../infra/log/logger.js';
import { ADMISSION_SECONDS } from '../../commands/settlement/charges.js';
import { startSettler } from '../../commands/settlement/settler.js';
import { createUsageLedger } from '../../commands/settlement/usage-ledger.js';
import { DEMO_PATH } from './x402-harness.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';

const PRICE = 10_000n;
const PERIOD = 3600;

describe('settler: pay-as-you-go charges planned with the chain\'s clock', function () {
  this.timeout(90_000);
  let s: SchedulerHarness;

  before(async () => {
    s = await startSchedulerHarness('payg-chain-clock', {
      X402_DEMO_PAYG_PRICE: String(PRICE), X402_DEMO_PAYG_MAX_CHUNK: String(2n * PRICE), X402_DEMO_PAYG_MAX_PER_PERIOD: String(3n * PRICE),
      X402_DEMO_PAYG_PERIOD_SECONDS: String(PERIOD), PAYG_SETTLE_THRESHOLD: '1', PAYG_SETTLE_INTERVAL_MS: '500',
    });
  });
  after(async () => { await s?.close(); });

  const settleWith = async (offsetMs: number) => {
    await new Promise((r) => setTimeout(r, ADMISSION_SECONDS * 1000 + 500));
    const settler = startSettler({ db: s.h.env.db, io: s.io, config: s.config, logger: createLogger('silent', 'test'), nowMs: () => Date.now() + offsetMs }, { autoStart: false });
    try { await settler.tick(); } finally { await settler.stop(); }
  };

  it('a local clock past the chain\'s period end charges only the room the chain\'s period has left', async () => {
    const paid = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'x402://payg' });
    expect(paid.response.status).to.equal(200);
    const policy = paid.paid!.policy!;
    const bearer = () => fetch(`${s.h.api.url}${DEMO_PATH}`, { headers: { authorization: `Bearer ${paid.paid!.jwt}` } });
    expect((await bearer()).status).to.equal(200);
    await settleWith(0);
    expect(s.records(policy).map((r) => r.amount), 'the two requests charged: 20,000 of the 30,000 cap').to.deep.equal([2n * PRICE]);

    // usage of 20,000 more waits (metered at another node when the period had room, say); the chain's
    // period has 10,000 left until its end, an hour away by the chain's clock
    const [row] = await s.h.env.db.selectFrom('payg_usage').selectAll().where('policy', '=', policy).execute();
    const ledger = createUsageLedger(s.h.env.db);
    for (let i = 0; i < 2; i += 1) {
      const requestId = randomUUID();
      await ledger.record({ requestId, policy, gateway: s.gateway, userPayment: row!.user_payment ?? '', chunk: PRICE, periodStart: BigInt(row!.period_start) });
      await ledger.served(requestId);
    }
    await settleWith(PERIOD * 1000); // the settler's own clock says the period has ended
    expect(s.records(policy).map((r) => r.amount), 'what the chain\'s period takes, not the whole cap').to.deep.equal([2n * PRICE, PRICE]);
    const rows = await s.h.env.db.selectFrom('payg_usage').select(['charge_id', 'unbillable_reason']).where('policy', '=', policy).execute();
    expect(rows.filter((r) => r.unbillable_reason !== null), 'nothing marked unbillable').to.have.length(0);
    expect(rows.filter((r) => r.charge_id === null), 'the rest waits for the chain\'s next period').to.have.length(1);
  });
});
