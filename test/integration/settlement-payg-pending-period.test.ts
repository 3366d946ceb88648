/**
 * Pay-as-you-go usage metered after the chain's period ended is charged. The program starts
 * the next period only at the first charge after the old one elapsed; until then the meter
 * holds the usage in a pending period, and the settler must charge it.
 *
 * And a policy whose due usage gets no charge is not passed over in silence: the settler
 * warns with the reason, at most once a minute per policy (a soak saw a policy's usage left
 * uncharged for minutes with nothing in the log).
 *
 * Real settler, the hostile localnet (every fault on), the usage ledger in Postgres.
 */
import { expect } from 'chai';
import { pino } from 'pino';
import { payAndFetch } from '../../src/app/index.js';
import { createLogger } from '../../infra/log/logger.js';
import { latestBlockhash, readExecutionContext, signExecution } from '../../commands/scheduler/chain.js';
import { ADMISSION_SECONDS, chargeBasis, openCharge, unsettledRows } from '../../commands/settlement/charges.js';
import { chainSeconds } from '../../commands/settlement/chain-clock.js';
import { startSettler } from '../../commands/settlement/settler.js';
import { asPolicyType } from '../../src/kernel/domain/policy-type.js';
import { DEMO_PATH } from './x402-harness.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';

const PRICE = 10_000n;
const PERIOD = 15;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('settler: pay-as-you-go usage held in a pending period is charged', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;

  before(async () => {
    s = await startSchedulerHarness('payg-pending-period', {
      X402_DEMO_PAYG_PRICE: String(PRICE), X402_DEMO_PAYG_MAX_CHUNK: String(2n * PRICE), X402_DEMO_PAYG_MAX_PER_PERIOD: String(3n * PRICE),
      X402_DEMO_PAYG_PERIOD_SECONDS: String(PERIOD), PAYG_SETTLE_THRESHOLD: '1', PAYG_SETTLE_INTERVAL_MS: '500', PAYG_ROLLOVER_MARGIN_SECONDS: '2',
    }, { faults: process.env['T_FAULTS'] ?? 'all', faultsSeed: process.env['T_SEED'] ?? 'pp' });
  });
  after(async () => { await s?.close(); });

  it('a period filled to its cap, then usage after its end: all of it charged', async () => {
    const settler = startSettler({ db: s.h.env.db, io: s.io, config: s.config, logger: createLogger('silent', 'test'), nowMs: () => Date.now() });
    try {
      const paid = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'x402://payg' });
      expect(paid.response.status).to.equal(200);
      const policy = paid.paid!.policy!;
      const bearer = async () => (await fetch(`${s.h.api.url}${DEMO_PATH}`, { headers: { authorization: `Bearer ${paid.paid!.jwt}` } })).status;
      expect([await bearer(), await bearer()], 'the period filled to its cap').to.deep.equal([200, 200]);
      const ctx = await readExecutionContext(s.io, policy);
      if ('class' in ctx) throw new Error(ctx.reason);
      const t = asPolicyType(ctx.policy.data['policy_type']);
      if (t.kind !== 'PayAsYouGo') throw new Error('not pay-as-you-go');
      const end = Number(t.current_period_start) + PERIOD;
      while ((await chainSeconds(s.io, Date.now())) < end + 1) await sleep(500);
      const after: number[] = [];
      for (let i = 0; i < 3; i += 1) after.push(await bearer());
      const served = after.filter((x) => x === 200).length;
      const want = (3n + BigInt(served)) * PRICE;
      const until = Date.now() + 40_000;
      const total = () => s.records(policy).reduce((a, r) => a + r.amount, 0n);
      while (total() < want && Date.now() < until) await sleep(500);
      expect(total(), 'every request served is charged').to.equal(want);
    } finally {
      await settler.stop();
    }
  });

  it('due usage held back by a charge in flight is warned about with the reason, once a minute', async () => {
    const paid = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'x402://payg' });
    expect(paid.response.status).to.equal(200);
    const policy = paid.paid!.policy!;
    expect((await fetch(`${s.h.api.url}${DEMO_PATH}`, { headers: { authorization: `Bearer ${paid.paid!.jwt}` } })).status).to.equal(200);
    await sleep(ADMISSION_SECONDS * 1000 + 500);
    // one chunk in a charge signed and stored, not sent (a settler that died before its send); the other waits behind it
    const [first] = await unsettledRows(s.h.env.db, policy);
    const ctx = await readExecutionContext(s.io, policy);
    if ('class' in ctx) throw new Error(ctx.reason);
    const signed = signExecution(s.io, ctx, s.signer, await latestBlockhash(s.io), PRICE);
    const held = await openCharge(s.h.env.db, { policy, gateway: s.gateway, amount: PRICE, ...chargeBasis(ctx), ...signed }, [first!.request_id]);
    expect(held).to.have.property('status', 'sending');

    const lines: { policy?: string; why?: string; msg: string }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) });
    let offsetMs = 0;
    const settler = startSettler({ db: s.h.env.db, io: s.io, config: s.config, logger, nowMs: () => Date.now() + offsetMs }, { autoStart: false });
    const warned = () => lines.filter((l) => l.policy === policy && l.msg === 'pay-as-you-go usage due and not charged');
    try {
      await settler.tick(); // the stored charge is younger than the in-doubt age: not resolved yet
      await settler.tick();
      expect(warned().map((l) => l.why), 'one warning, with the reason').to.deep.equal(['another charge of the policy is in flight']);
      offsetMs = 61_000;
      await settler.tick();
      expect(warned(), 'again a minute later').to.have.length(2);
    } finally {
      await settler.stop();
    }
    expect(s.records(policy), 'nothing charged meanwhile').to.have.length(0);
  });
});
