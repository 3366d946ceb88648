/**
 * The merchant model as a pure function of the ordered events, over seeded random
 * histories the program allows: payers create, pay, pause, resume and delete policies at
 * several gateways, delete their user payment once its policies are gone and create it
 * again, so policy addresses are reused at other gateways. For each seed the model built
 * live equals its replays in pages of several sizes (projection digest), and every
 * gateway's MRR equals the sum the history itself gives (its active Subscriptions), never
 * negative. A failing seed is named in the assertion and replays exactly.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { makeEvent, randomSignature, type Overrides } from '../support/anchor-events.js';
import { createPrng, type Prng } from '../../infra/localnet/prng.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { merchantProjection } from '../../projections/merchant/projection.js';
import { projectionDigest, replayProjection } from '../../projections/replay.js';
import { monthlyMicro } from '../../src/kernel/domain/mrr.js';
import type { PolicyType } from '../../src/kernel/domain/policy-type.js';
import type { EventName } from '../../src/kernel/events/catalog.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { key, pda, project, T0, USDC_DEV } from './readmodels-scenario.js';

interface Pol { address: string; gateway: string; type: PolicyType; status: 'Active' | 'Paused' | 'Completed'; deleted: boolean; payments: number; renewals: number | null }
interface Payer { wallet: string; up: string; exists: boolean; count: number; policies: Pol[] }

const GATEWAYS = [0, 1, 2].map((i) => ({ authority: key(`rnd-authority-${i}`), address: pda.gateway(key(`rnd-authority-${i}`)) }));
const FREQUENCIES = ['Daily', 'Weekly', 'Monthly', 'Quarterly'];

function policyType(rng: Prng): PolicyType {
  const amount = String(1 + rng.int(5_000_000));
  const roll = rng.int(10);
  if (roll < 6) {
    return { kind: 'Subscription', amount, auto_renew: true, max_renewals: rng.chance(0.3) ? 2 : null, payment_frequency: rng.pick(FREQUENCIES), next_payment_due: String(T0) } as PolicyType;
  }
  if (roll < 8) return { kind: 'OneTime', amount, due_date: String(T0), expiry_date: null };
  return { kind: 'PayAsYouGo', max_amount_per_period: '10000000', max_chunk_amount: '1000000', period_length_seconds: '86400', current_period_start: String(T0), current_period_total: '0', expiry_date: null };
}

/** A random history in chain order, and each gateway's MRR at its end as the history gives it. */
function randomHistory(seed: string, steps: number): { events: TributaryEvent[]; mrr: Map<string, bigint> } {
  const rng = createPrng(`merchant-random:${seed}`);
  const events: TributaryEvent[] = [];
  let slot = 1_000;
  let time = T0;
  const tx = (name: EventName, ov: Overrides) => {
    slot += 1 + rng.int(5);
    time += 3_600 + rng.int(3 * 86_400);
    events.push(makeEvent(name, ov, { seed: `${seed}:${events.length}`, signature: randomSignature(rng), slot, blockTime: time, ixPath: '0', index: 0 }));
  };
  tx('ProgramConfigCreated', { admin: key('rnd-admin'), protocol_share_bps: 1500 });
  for (const [i, g] of GATEWAYS.entries()) tx('PaymentGatewayCreated', { authority: g.authority, fee_recipient: key(`rnd-fee-${i}`), gateway_fee_bps: 100 * i, name: `G${i}`, url: '' });
  const payers: Payer[] = [0, 1, 2].map((i) => ({ wallet: key(`rnd-wallet-${i}`), up: pda.userPayment(key(`rnd-wallet-${i}`), USDC_DEV), exists: false, count: 0, policies: [] }));
  const live = (p: Payer) => p.policies.filter((x) => !x.deleted);

  for (let s = 0; s < steps; s += 1) {
    const payer = rng.pick(payers);
    const mine = live(payer);
    const roll = rng.int(100);
    if (!payer.exists) {
      tx('UserPaymentCreated', { owner: payer.wallet, token_mint: USDC_DEV, token_account: key(`rnd-ta-${payer.wallet}`) });
      Object.assign(payer, { exists: true, count: 0, policies: [] });
    } else if (mine.length === 0 && roll < 50) {
      // the program deletes a user payment only with no policy left; its count restarts
      tx('UserPaymentDeleted', { user_payment: payer.up, owner: payer.wallet, rent_payer: payer.wallet });
      payer.exists = false;
    } else if (roll < 20 || mine.length === 0) {
      const id = (payer.count += 1);
      const type = policyType(rng);
      const gateway = rng.pick(GATEWAYS).address;
      tx('PaymentPolicyCreated', { user_payment: payer.up, recipient: key('rnd-recipient'), gateway, policy_id: id, created_policies_count: id - 1, policy_type: type, memo: 'rnd' });
      payer.policies.push({ address: pda.paymentPolicy(payer.up, id), gateway, type, status: 'Active', deleted: false, payments: 0, renewals: type.kind === 'Subscription' ? type.max_renewals : null });
    } else if (roll < 50) {
      const p = rng.pick(mine);
      if (p.status !== 'Active') continue;
      const amount = p.type.kind === 'Subscription' || p.type.kind === 'OneTime' ? p.type.amount : String(1 + rng.int(1_000_000));
      p.payments += 1;
      tx('PaymentRecord', { payment_policy: p.address, gateway: p.gateway, amount, timestamp: String(time), memo: 'rnd', record_id: p.payments, payer: payer.wallet, recipient: key('rnd-recipient'), token_mint: USDC_DEV });
      if (p.renewals !== null) p.renewals -= 1;
      if (p.type.kind === 'OneTime' || p.renewals === 0) p.status = 'Completed';
    } else if (roll < 65) {
      const p = rng.pick(mine);
      if (p.status === 'Completed') continue;
      const to = p.status === 'Active' ? 'Paused' : 'Active';
      tx('PaymentPolicyStatusChanged', { payment_policy: p.address, old_status: p.status, new_status: to });
      p.status = to;
    } else if (roll < 95) {
      const p = rng.pick(mine);
      tx('PaymentPolicyDeleted', { payment_policy: p.address, owner: payer.wallet, policy_id: payer.policies.indexOf(p) + 1 });
      p.deleted = true;
    }
  }
  const mrr = new Map(GATEWAYS.map((g) => [g.address, 0n]));
  for (const p of payers.flatMap((x) => live(x))) {
    if (p.status === 'Active') mrr.set(p.gateway, mrr.get(p.gateway)! + monthlyMicro(p.type));
  }
  return { events, mrr };
}

describe('merchant read model: random histories with reused policy addresses', function () {
  this.timeout(240_000);
  const envs: TestEnv[] = [];
  after(async () => { for (const e of envs) await e.close(); });

  for (const seed of ['a', 'b', 'c']) {
    it(`seed ${seed}: live equals every replay, MRR equals the history's, never negative`, async () => {
      const { events, mrr } = randomHistory(seed, 300);
      const reused = events.filter((e) => e.name === 'UserPaymentDeleted').length;
      expect(reused, `seed ${seed} reuses addresses`).to.be.greaterThan(0);
      const env = await createTestEnv(`merchant_random_${seed}`);
      envs.push(env);
      await project(env, [archiveProjection, merchantProjection], events, 1 + events.length % 4);
      const live = await projectionDigest(env.db, merchantProjection);
      const rows = await env.db.selectFrom('merchant_mrr').selectAll().execute();
      for (const [g, want] of mrr) expect(BigInt(rows.find((r) => r.gateway === g)?.mrr_micro ?? '0'), `seed ${seed} MRR of ${g}`).to.equal(want);
      for (const page of [50_000, 7]) {
        const r = await replayProjection(env.db, merchantProjection, { page, waitMs: 10_000 });
        expect(r.digest, `seed ${seed}, pages of ${page}`).to.equal(live);
      }
      const negative = await sql<{ n: string }>`
        SELECT (SELECT count(*) FROM merchant_mrr WHERE mrr_micro < 0) + (SELECT count(*) FROM merchant_revenue WHERE mrr_micro < 0) AS n`.execute(env.db);
      expect(negative.rows[0]!.n, `seed ${seed}`).to.equal('0');
    });
  }
});
