/**
 * A policy address the program reuses: a user payment whose policies are deleted, then
 * itself deleted and created again, restarts its policy count, so `payment_policy(up, 1)`
 * names a new policy, here at another gateway each time. Built live in small batches,
 * then replayed from the archive in pages of several sizes: the merchant tables are the
 * same (projection digest), each generation is counted at its own gateway, and no MRR,
 * running or in a revenue bucket, is ever negative.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { makeEvent, randomSignature, type Overrides } from '../support/anchor-events.js';
import { createPrng } from '../../infra/localnet/prng.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { merchantProjection } from '../../projections/merchant/projection.js';
import { projectionDigest, replayProjection } from '../../projections/replay.js';
import { monthlyMicro } from '../../src/kernel/domain/mrr.js';
import type { PolicyType } from '../../src/kernel/domain/policy-type.js';
import type { EventName } from '../../src/kernel/events/catalog.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { archiveRevenue } from '../support/merchant-archive.js';
import { key, pda, project, T0, USDC_DEV } from './readmodels-scenario.js';

const W = key('reuse-wallet');
const W2 = key('reuse-wallet-2');
const GA = pda.gateway(key('reuse-authority-a'));
const GB = pda.gateway(key('reuse-authority-b'));
const UP = pda.userPayment(W, USDC_DEV);
const UP2 = pda.userPayment(W2, USDC_DEV);
const P = pda.paymentPolicy(UP, 1);
const sub = (amount: string, payment_frequency: string): PolicyType => ({
  kind: 'Subscription', amount, auto_renew: true, max_renewals: null, payment_frequency, next_payment_due: String(T0),
} as PolicyType);
const GEN = [
  { gateway: GA, type: sub('1000000', 'Monthly') },
  { gateway: GB, type: sub('5000000', 'Daily') },
  { gateway: GA, type: sub('2000000', 'Weekly') },
] as const;
const OTHER = sub('3000000', 'Monthly');

/** The story in chain order; every generation of P is paid before the next one replaces it. */
function reuseStory(): TributaryEvent[] {
  const rng = createPrng('merchant-reuse');
  const events: TributaryEvent[] = [];
  let slot = 50_000;
  const tx = (name: EventName, ov: Overrides) => {
    slot += 10;
    events.push(makeEvent(name, ov, { seed: `reuse:${events.length}`, signature: randomSignature(rng), slot, blockTime: T0 + slot * 40, ixPath: '0', index: 0 }));
  };
  const pay = (gateway: string, amount: string, record: number, policy = P, payer = W) => tx('PaymentRecord', {
    payment_policy: policy, gateway, amount, timestamp: String(T0 + slot * 40), memo: 'reuse', record_id: record, payer, recipient: key('reuse-recipient'), token_mint: USDC_DEV,
  });
  const created = (up: string, id: number, gateway: string, type: PolicyType) => tx('PaymentPolicyCreated', {
    user_payment: up, recipient: key('reuse-recipient'), gateway, policy_id: id, created_policies_count: id - 1, policy_type: type, memo: 'reuse',
  });
  tx('ProgramConfigCreated', { admin: key('reuse-admin'), protocol_share_bps: 2000 });
  tx('PaymentGatewayCreated', { authority: key('reuse-authority-a'), fee_recipient: key('reuse-fee-a'), gateway_fee_bps: 100, name: 'A', url: '' });
  tx('PaymentGatewayCreated', { authority: key('reuse-authority-b'), fee_recipient: key('reuse-fee-b'), gateway_fee_bps: 200, name: 'B', url: '' });
  tx('UserPaymentCreated', { owner: W2, token_mint: USDC_DEV, token_account: key('reuse-ta-2') });
  created(UP2, 1, GB, OTHER);
  pay(GB, '3000000', 1, pda.paymentPolicy(UP2, 1), W2);
  GEN.forEach((g, i) => {
    tx('UserPaymentCreated', { owner: W, token_mint: USDC_DEV, token_account: key('reuse-ta') });
    created(UP, 1, g.gateway, g.type);
    pay(g.gateway, g.type.kind === 'Subscription' ? g.type.amount : '0', 1);
    pay(g.gateway, g.type.kind === 'Subscription' ? g.type.amount : '0', 2);
    if (i === GEN.length - 1) return;
    tx('PaymentPolicyStatusChanged', { payment_policy: P, old_status: 'Active', new_status: 'Paused' });
    tx('PaymentPolicyStatusChanged', { payment_policy: P, old_status: 'Paused', new_status: 'Active' });
    tx('PaymentPolicyDeleted', { payment_policy: P, owner: W, policy_id: 1 });
    tx('UserPaymentDeleted', { user_payment: UP, owner: W, rent_payer: W });
  });
  return events;
}

const mrrRows = async (env: TestEnv) => (await env.db.selectFrom('merchant_mrr').select(['gateway', 'mrr_micro']).execute())
  .map((r) => ({ gateway: r.gateway, mrr: BigInt(r.mrr_micro) }));

const negativeMrr = async (env: TestEnv) => (await sql<{ n: string }>`
  SELECT (SELECT count(*) FROM merchant_mrr WHERE mrr_micro < 0) + (SELECT count(*) FROM merchant_revenue WHERE mrr_micro < 0) AS n`.execute(env.db)).rows[0]!.n;

describe('merchant read model: a policy address reused at another gateway', function () {
  this.timeout(120_000);
  let env: TestEnv;
  let live: string;

  before(async () => {
    env = await createTestEnv('merchant_reuse');
    // stream reads of one entry (a few to a transaction): each generation is written and read back across batches
    await project(env, [archiveProjection, merchantProjection], reuseStory(), 1);
    live = await projectionDigest(env.db, merchantProjection);
  });
  after(async () => { await env?.close(); });

  it('counts each generation at its own gateway: the last one live, the others ended', async () => {
    const policy = await env.db.selectFrom('merchant_policies').selectAll().where('address', '=', P).executeTakeFirstOrThrow();
    expect(policy).to.include({ gateway: GA, deleted: false, status: 'Active', counted: true, payer: W });
    const mrr = await mrrRows(env);
    expect(mrr.find((r) => r.gateway === GA)?.mrr).to.equal(monthlyMicro(GEN[2].type));
    expect(mrr.find((r) => r.gateway === GB)?.mrr).to.equal(monthlyMicro(OTHER));
    const months = await env.db.selectFrom('merchant_revenue').selectAll().where('bucket', '=', 'month').execute();
    const sum = (g: string, k: 'new_subscriptions' | 'ended_subscriptions') => months.filter((r) => r.gateway === g).reduce((n, r) => n + r[k], 0);
    expect([sum(GA, 'new_subscriptions'), sum(GA, 'ended_subscriptions')]).to.deep.equal([2, 1]);
    expect([sum(GB, 'new_subscriptions'), sum(GB, 'ended_subscriptions')]).to.deep.equal([2, 1]);
  });

  it('keeps the payer a subscriber of the gateway it left, ended, and of the one it came back to, active', async () => {
    const rows = await env.db.selectFrom('merchant_subscribers').selectAll().where('payer', '=', W).execute();
    const at = (g: string) => rows.find((r) => r.gateway === g)!;
    expect(at(GA)).to.include({ status: 'active', active_policies: 1, payments: '4', total_paid: '6000000' });
    expect(at(GA).policies).to.deep.equal([P]);
    expect(at(GB)).to.include({ status: 'ended', active_policies: 0, payments: '2', total_paid: '10000000', next_due: null });
    expect(at(GB).policies).to.deep.equal([]);
  });

  it('never shows a negative MRR, live or replayed', async () => {
    expect(await negativeMrr(env)).to.equal('0');
  });

  it('is the same model replayed from the archive, whatever the page size', async () => {
    for (const page of [50_000, 7, 2]) {
      const r = await replayProjection(env.db, merchantProjection, { page, waitMs: 10_000 });
      expect(r.digest, `pages of ${page}`).to.equal(live);
      expect(await negativeMrr(env)).to.equal('0');
    }
    const direct = await archiveRevenue(env.db);
    const revenue = await env.db.selectFrom('merchant_revenue').select(['gateway', 'bucket', sql<string>`gross::text`.as('gross')])
      .where('payments', '>', '0').execute();
    expect(revenue.length).to.equal(direct.length);
    for (const d of direct) expect(revenue.some((r) => r.gateway === d.gateway && r.bucket === d.bucket && r.gross === d.gross), JSON.stringify(d)).to.equal(true);
  });
});
