/**
 * The read models, fed with Anchor-encoded events through the stream and the runner:
 * what each model holds after the story in readmodels-scenario.ts, and that a replay
 * from the archive rebuilds every one of them to the same digest.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { makeEvents } from '../support/anchor-events.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { gatewaysProjection } from '../../projections/gateways/projection.js';
import { userPaymentsProjection } from '../../projections/user-payments/projection.js';
import { paymentPoliciesProjection } from '../../projections/policies/projection.js';
import { composablePoliciesProjection } from '../../projections/composable/projection.js';
import { paymentsProjection } from '../../projections/payments/projection.js';
import { statsProjection } from '../../projections/stats/projection.js';
import { paymentStats } from '../../projections/stats/query.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { projectionDigest, replayProjection } from '../../projections/replay.js';
import { buildScenario, G1, G2, G3, K, P, project, T0, UP, USDC_DEV, USDT } from './readmodels-scenario.js';
import { dataOf } from '../support/anchor-events.js';

const READ_MODELS = [gatewaysProjection, userPaymentsProjection, paymentPoliciesProjection, composablePoliciesProjection, paymentsProjection, statsProjection];

describe('read models built from the event stream', () => {
  let env: TestEnv;
  const events = buildScenario();

  before(async () => {
    env = await createTestEnv('readmodels');
    await project(env, [archiveProjection, ...READ_MODELS], [...events, ...events.slice(0, 20)]);
  });
  after(async () => { await env?.close(); });

  it('registers every read model with the projector', () => {
    for (const p of READ_MODELS) expect(PROJECTIONS).to.include(p);
  });

  it('gateways: PDA addresses, fee, fee recipient and signer changes, deletion', async () => {
    const rows = await env.db.selectFrom('gateways').selectAll().orderBy('name').execute();
    expect(rows.map((r) => r.address)).to.deep.equal([G1, G3, G2]);
    const g1 = rows[0]!;
    expect(g1).to.include({ authority: K.adminG1, fee_bps: 150, fee_recipient: K.feeG1b, signer: K.signerG1, name: 'Gateway One', url: 'https://one.example', active: true, deleted: false });
    expect(rows[1]).to.include({ active: false, deleted: true, url: '' });
    expect(rows[2]).to.include({ signer: K.adminG2, fee_bps: 250 });
  });

  it('user payments: PDA(owner, mint), token account', async () => {
    const rows = await env.db.selectFrom('user_payments').selectAll().execute();
    expect(rows).to.have.length(4);
    const w1usdt = rows.find((r) => r.address === UP.w1usdt)!;
    expect(w1usdt).to.include({ owner: K.w1, token_mint: USDT, active: true });
  });

  it('payment policies: all five variants with parameters, totals, status and next payment due', async () => {
    const rows = await env.db.selectFrom('payment_policies').selectAll().execute();
    const by = new Map(rows.map((r) => [r.address, r]));
    expect(new Set(rows.map((r) => r.variant))).to.deep.equal(new Set(['Subscription', 'OneTime', 'Milestone', 'PayAsYouGo', 'UpTo']));
    const sub1 = by.get(P.sub1)!;
    expect(sub1).to.include({ status: 'Completed', total_paid: '3000000', payment_count: 3, owner: K.w1, token_mint: USDC_DEV, tracking_id: 'order-1', next_payment_due: null });
    expect(sub1.memo).to.have.length(64);
    expect(by.get(P.sub2)).to.include({ status: 'Active', total_paid: (2n * 18446744073709551615n).toString(), payment_count: 2 });
    expect(by.get(P.sub2)!.next_payment_due).to.equal((by.get(P.sub2)!.policy_type as { next_payment_due: string }).next_payment_due);
    expect(by.get(P.once1)).to.include({ status: 'Completed', total_paid: '5000000', payment_count: 1 });
    const mile = by.get(P.mile1)!;
    expect(mile).to.include({ status: 'Active', total_paid: '300' });
    // the program keeps the escrow figure as created
    expect(mile.policy_type).to.include({ current_milestone: 2, escrow_amount: '600' });
    expect(mile.next_payment_due).to.equal(String(Number((mile.policy_type as { milestone_timestamps: string[] }).milestone_timestamps[2])));
    expect(by.get(P.payg1)).to.include({ status: 'Active', total_paid: '700', next_payment_due: null });
    expect(by.get(P.upto1)).to.include({ status: 'Paused', payment_count: 0 });
    expect(by.get(P.upto1)!.tracking_id).to.equal('upto ünïcode');
    expect(by.get(P.sub3)).to.include({ deleted: true, owner: K.w3, token_mint: USDC_DEV });
    expect(by.get(P.subUsdt)).to.include({ token_mint: USDT, total_paid: '9' });
  });

  it('subscriptions move their next payment due past each payment, as the program does', async () => {
    const sub2 = await env.db.selectFrom('payment_policies').selectAll().where('address', '=', P.sub2).executeTakeFirstOrThrow();
    const created = events.find((e) => e.name === 'PaymentPolicyCreated' && e.data['user_payment'] === UP.w2usdc && e.data['policy_id'] === 1)!;
    const first = BigInt((dataOf(created)['policy_type'] as { next_payment_due: string }).next_payment_due);
    // the first payment (due at once) moves the date one hour on; the second comes within
    // that hour, before the date, which the program leaves as it is (it would refuse the payment)
    expect(sub2.next_payment_due).to.equal((first + 3600n).toString());
    const subUsdt = await env.db.selectFrom('payment_policies').selectAll().where('address', '=', P.subUsdt).executeTakeFirstOrThrow();
    expect(BigInt(subUsdt.next_payment_due!) - first).to.equal(7n * 86_400n);
  });

  it('status history: creation, owner changes, and completion by a payment', async () => {
    const rows = await env.db.selectFrom('payment_policy_status_history').selectAll().where('policy', '=', P.sub2).orderBy('slot').execute();
    expect(rows.map((r) => [r.cause, r.old_status, r.new_status])).to.deep.equal([
      ['created', null, 'Active'], ['status_changed', 'Active', 'Paused'], ['status_changed', 'Paused', 'Active'],
    ]);
    const sub1 = await env.db.selectFrom('payment_policy_status_history').selectAll().where('policy', '=', P.sub1).orderBy('slot').execute();
    expect(sub1.map((r) => r.cause)).to.deep.equal(['created', 'payment']);
    expect(sub1[1]).to.include({ old_status: 'Active', new_status: 'Completed' });
  });

  it('composable policies: 32-byte memo, totals in and out, completion at max renewals', async () => {
    const c = await env.db.selectFrom('composable_policies').selectAll().where('address', '=', P.comp1).executeTakeFirstOrThrow();
    expect(c).to.include({ tracking_id: 'comp-1', total_paid: '600', total_output: '590', payment_count: 2, status: 'Completed', owner: K.w1, token_mint: USDC_DEV });
    expect(c.memo).to.have.length(32);
  });

  it('payments: one row per PaymentRecord and ComposableExecuted, with the trackingId of the memo', async () => {
    const rows = await env.db.selectFrom('payments').selectAll().execute();
    expect(rows.filter((r) => r.kind === 'PaymentRecord')).to.have.length(12);
    const comp = rows.filter((r) => r.kind === 'ComposableExecuted');
    expect(comp).to.have.length(2);
    expect(comp[0]).to.include({ tracking_id: 'comp-1', amount: '300', output_amount: '295', gateway_fee: '4', token_mint: USDC_DEV, target_program: K.target });
    expect(rows.find((r) => r.policy === P.sub2)).to.include({ amount: '18446744073709551615', tracking_id: 'order-2', payer: K.w2 });
  });

  it('stats: count and exact volume per gateway per day, and paymentStats over any range', async () => {
    const all = await paymentStats(env.db, {});
    expect(all).to.deep.equal({ count: 12, volume: (5_000_000n + 3_000_000n + 300n + 700n + 2n * 18446744073709551615n + 9n + 1n).toString() });
    expect(await paymentStats(env.db, { gateway: G2 })).to.deep.equal({ count: 5, volume: (700n + 2n * 18446744073709551615n + 1n).toString() });
    const payments = await env.db.selectFrom('payments').select(['at', 'amount', 'gateway']).where('kind', '=', 'PaymentRecord').execute();
    // every range, aligned to days or not, equals the sum over the payments it contains
    const times = payments.map((p) => Number(p.at));
    const edges = [T0, ...times, ...times.map((t) => t - 1), ...times.map((t) => t + 86_400), Math.floor(times[3]! / 86_400) * 86_400];
    for (const from of edges.slice(0, 12)) {
      for (const to of edges.slice(4, 16)) {
        const inRange = payments.filter((p) => Number(p.at) >= from && Number(p.at) <= to);
        const expected = from > to ? { count: 0, volume: '0' } : { count: inRange.length, volume: inRange.reduce((s, p) => s + BigInt(p.amount), 0n).toString() };
        expect(await paymentStats(env.db, { startTime: from, endTime: to }), `${from}..${to}`).to.deep.equal(expected);
      }
    }
    const days = await env.db.selectFrom('payment_stats_daily').selectAll().execute();
    expect(days.reduce((n, d) => n + Number(d.payments), 0)).to.equal(12);
  });

  it('replay from the archive rebuilds every read model to the live digest', async () => {
    for (const p of READ_MODELS) {
      const live = await projectionDigest(env.db, p);
      const replayed = await replayProjection(env.db, p);
      expect(replayed.digest, p.name).to.equal(live);
    }
  });
});

describe('read models under random events of every kind (extreme values, duplicates, no block time)', () => {
  let env: TestEnv;
  before(async () => { env = await createTestEnv('readmodels-fuzz'); });
  after(async () => { await env?.close(); });

  it('apply every event without a dead letter, and replay to the live digest', async () => {
    const events = makeEvents(3000, { seed: 'fuzz', duplicates: 0.05, nullBlockTime: 0.1 });
    await project(env, [archiveProjection, ...READ_MODELS], events);
    for (const p of READ_MODELS) {
      const live = await projectionDigest(env.db, p);
      expect((await replayProjection(env.db, p)).digest, p.name).to.equal(live);
    }
    const payments = await env.db.selectFrom('payments').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    expect(Number(payments.n)).to.be.greaterThan(0);
  });
});

describe('read models fed out of chain order (a policy or execution indexed before what it refers to)', () => {
  let env: TestEnv;
  before(async () => { env = await createTestEnv('readmodels-order'); });
  after(async () => { await env?.close(); });

  it('fill owner, mint and trackingId in afterwards, stored answers included', async () => {
    const story = buildScenario('order');
    const isLate = (e: (typeof story)[number]) => e.name === 'UserPaymentCreated' || e.name === 'ComposablePolicyCreated';
    // executions and policies first, then the user payments and the composable creation
    const models = [archiveProjection, paymentPoliciesProjection, composablePoliciesProjection, paymentsProjection];
    await project(env, models, story.filter((e) => !isLate(e)));
    await project(env, models, story.filter(isLate));
    const sub1 = await env.db.selectFrom('payment_policies').select(['owner', 'token_mint', 'doc']).where('address', '=', P.sub1).executeTakeFirstOrThrow();
    expect(sub1).to.include({ owner: K.w1, token_mint: USDC_DEV });
    expect(JSON.parse(sub1.doc!)).to.include({ owner: K.w1, tokenMint: USDC_DEV, status: 'Completed' });
    const executions = await env.db.selectFrom('payments').select(['tracking_id', 'token_mint', 'doc']).where('policy', '=', P.comp1).execute();
    expect(executions).to.have.length(2);
    for (const x of executions) {
      expect(x).to.include({ tracking_id: 'comp-1', token_mint: USDC_DEV });
      expect(JSON.parse(x.doc!)).to.include({ trackingId: 'comp-1', name: 'ComposableExecuted' });
    }
    // a replay meets the archive in the same order: the executions written before their
    // policy's creation, in pages of one and in one page, are filled as the live build filled them
    const live = await projectionDigest(env.db, paymentsProjection);
    for (const page of [1, 10_000]) expect((await replayProjection(env.db, paymentsProjection, { page })).digest, `pages of ${page}`).to.equal(live);
  });
});
