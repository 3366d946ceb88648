/**
 * The merchant model fed with the read-model story (readmodels-scenario.ts) through the
 * stream and the runner: revenue equals a direct sum over the archive in every bucket,
 * before and after a replay; MRR, subscribers and subscription counts match what the
 * story did by hand; a gateway in net mode is charged the fee on top.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { merchantProjection } from '../../projections/merchant/projection.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { projectionDigest, replayProjection } from '../../projections/replay.js';
import { microToDecimal, monthlyMicro } from '../../src/kernel/domain/mrr.js';
import { buildScenario, G1, G2, K, P, project, USDC_DEV, USDT } from './readmodels-scenario.js';
import { archiveRevenue } from '../support/merchant-archive.js';

const revenueRows = (env: TestEnv) => env.db.selectFrom('merchant_revenue')
  .select(['gateway', 'token_mint', 'bucket', sql<string>`bucket_start::text`.as('bucket_start'), sql<string>`gross::text`.as('gross'),
    sql<string>`gateway_fee::text`.as('gateway_fee'), sql<string>`protocol_fee::text`.as('protocol_fee'), sql<string>`net::text`.as('net'),
    sql<string>`payments::text`.as('payments')])
  .where('payments', '>', '0')
  .orderBy('gateway').orderBy('token_mint').orderBy('bucket').orderBy('bucket_start').execute();

describe('merchant read model built from the event stream', () => {
  let env: TestEnv;
  const events = buildScenario();

  before(async () => {
    env = await createTestEnv('merchant');
    await project(env, [archiveProjection, merchantProjection], [...events, ...events.slice(0, 20)]);
  });
  after(async () => { await env?.close(); });

  it('is registered with the projector', () => {
    expect(PROJECTIONS).to.include(merchantProjection);
  });

  it('revenue equals a direct sum over the archive, bucket by bucket, and again after a replay', async () => {
    const direct = await archiveRevenue(env.db);
    expect(direct.length).to.be.greaterThan(6);
    // the config's share is whatever the story's ProgramConfigCreated said; fees are not all zero
    expect(direct.some((b) => b.protocol_fee !== '0')).to.equal(true);
    expect(await revenueRows(env)).to.deep.equal(direct);
    const digest = await projectionDigest(env.db, merchantProjection);
    await replayProjection(env.db, merchantProjection);
    expect(await revenueRows(env)).to.deep.equal(direct);
    expect(await projectionDigest(env.db, merchantProjection)).to.equal(digest);
  });

  it('MRR: active Subscriptions normalized to a month, per gateway and mint, hand-computed', async () => {
    const mrr = await env.db.selectFrom('merchant_mrr').selectAll().execute();
    const of = (g: string, m: string) => microToDecimal(BigInt(mrr.find((r) => r.gateway === g && r.token_mint === m)?.mrr_micro ?? '0'));
    // G1/USDC: sub1 (Monthly, 3 renewals) completed by its third payment
    expect(of(G1, USDC_DEV)).to.equal('0');
    // G1/USDT: 9 weekly → 9 · 52 / 12 = 39
    expect(of(G1, USDT)).to.equal('39');
    // G2/USDC: sub2 u64::MAX hourly (paused then resumed) → u64::MAX · 8760 / 12; sub3 deleted
    expect(of(G2, USDC_DEV)).to.equal((18446744073709551615n * 730n).toString());
    expect(monthlyMicro({ kind: 'Subscription', amount: '5', auto_renew: true, max_renewals: null, payment_frequency: 'Daily', next_payment_due: '0' }) > 0n).to.equal(true);
  });

  it('revenue buckets count new and ended subscriptions and carry the MRR at their end', async () => {
    const months = await env.db.selectFrom('merchant_revenue').selectAll().where('bucket', '=', 'month').execute();
    const sum = (g: string, k: 'new_subscriptions' | 'ended_subscriptions') => months.filter((r) => r.gateway === g).reduce((n, r) => n + r[k], 0);
    // G1: sub1, once1, mile1, once2 (w2), subUsdt created; sub1, once1 and once2? (once2 never paid) → sub1 and once1 ended
    expect(sum(G1, 'new_subscriptions')).to.equal(5);
    expect(sum(G1, 'ended_subscriptions')).to.equal(2);
    // G2: payg1, upto1, sub2, sub3 created; sub3 deleted
    expect(sum(G2, 'new_subscriptions')).to.equal(4);
    expect(sum(G2, 'ended_subscriptions')).to.equal(1);
    const lastG1Usdt = months.filter((r) => r.gateway === G1 && r.token_mint === USDT).sort((a, b) => Number(b.bucket_start) - Number(a.bucket_start))[0]!;
    expect(microToDecimal(BigInt(lastG1Usdt.mrr_micro))).to.equal('39');
  });

  it('subscribers: one row per gateway, mint and payer with policies, status, totals and next due', async () => {
    const rows = await env.db.selectFrom('merchant_subscribers').selectAll().execute();
    const w1g1 = rows.find((r) => r.gateway === G1 && r.token_mint === USDC_DEV && r.payer === K.w1)!;
    expect(w1g1.policies).to.deep.equal([P.sub1, P.once1, P.mile1].sort());
    expect(w1g1).to.include({ status: 'active', active_policies: 1, payments: '6' });
    // past due is the scheduler's (queries/merchant/subscribers.ts): the model keeps no column for it
    expect(w1g1).to.not.have.property('past_due');
    expect(w1g1.total_paid).to.equal(String(3 * 1_000_000 + 5_000_000 + 100 + 200));
    expect(w1g1.next_due).to.not.equal(null);
    const w3 = rows.find((r) => r.payer === K.w3)!;
    expect(w3).to.include({ gateway: G2, status: 'ended', active_policies: 0, payments: '0' });
    expect(w3.policies).to.deep.equal([]);
    const w1usdt = rows.find((r) => r.token_mint === USDT)!;
    expect(w1usdt).to.include({ gateway: G1, payer: K.w1, status: 'active', total_paid: '9' });
  });
});

describe('merchant read model: a gateway in net mode', () => {
  let env: TestEnv;
  const events = buildScenario('net');

  after(async () => { await env?.close(); });

  it('charges the payer the fee on top and pays the recipient the whole amount', async () => {
    env = await createTestEnv('merchant_net');
    const split = events.findIndex((e) => e.name === 'UserPaymentCreated');
    await project(env, [merchantProjection], events.slice(0, split));
    // no event carries the feature flags: the net flag is set as an operator would
    await env.db.updateTable('merchant_gateways').set({ net_mode: true }).where('gateway', '=', G2).execute();
    await project(env, [merchantProjection], events.slice(split));
    const share = Number((events.find((e) => e.name === 'ProgramConfigCreated')!.data['protocol_share_bps']));
    const month = await env.db.selectFrom('merchant_revenue').selectAll()
      .where('gateway', '=', G2).where('token_mint', '=', USDC_DEV).where('bucket', '=', 'month').execute();
    const totals = month.reduce((t, r) => ({ gross: t.gross + BigInt(r.gross), net: t.net + BigInt(r.net), gw: t.gw + BigInt(r.gateway_fee), pr: t.pr + BigInt(r.protocol_fee) }), { gross: 0n, net: 0n, gw: 0n, pr: 0n });
    // G2 (250 bps): payg 400 + 300, sub2 2 · u64::MAX, and a ghost payment of 1
    const amounts = [400n, 300n, 18446744073709551615n, 18446744073709551615n, 1n];
    const fee = (a: bigint) => (a * 250n) / 10_000n;
    const protocol = (a: bigint) => (fee(a) * BigInt(share)) / 10_000n;
    expect(totals.net).to.equal(amounts.reduce((s, a) => s + a, 0n));
    expect(totals.gross).to.equal(amounts.reduce((s, a) => s + a + fee(a), 0n));
    expect(totals.pr).to.equal(amounts.reduce((s, a) => s + protocol(a), 0n));
    expect(totals.gw).to.equal(amounts.reduce((s, a) => s + fee(a) - protocol(a), 0n));
  });
});
