/**
 * A coherent story of Tributary events for the read-model and policy API tests, every
 * event encoded by Anchor's BorshCoder and decoded by our codec (test/support/anchor-events):
 * three gateways (one re-configured, one deleted), four user payments over two mints,
 * payment policies of all five variants, payments that complete some of them, status
 * changes, a deletion, and a composable policy executed twice. Keys are derived from
 * labels so a test can name them; addresses are the program's PDAs.
 */
import { createHash } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import { BASE_TIME, eventFields, makeEvent, randomSignature, type Overrides } from '../support/anchor-events.js';
import { createPrng } from '../../infra/localnet/prng.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import type { EventName } from '../../src/kernel/events/catalog.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { appendTestEvents } from '../support/anchor-events.js';
import type { TestEnv } from '../support/env.js';
import { waitFor } from '../support/process.js';
import { createRedis } from '../../infra/redis/client.js';
import { createLogger } from '../../infra/log/logger.js';
import { groupInfo } from '../../infra/redis/group-lag.js';
import { startProjection, type RunnerOptions } from '../../projections/runner/runner.js';
import type { Projection } from '../../projections/runner/projection.js';

export const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
export const USDT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
export const pda = createPdaDeriver(PROGRAM_ID);

export function key(label: string): string {
  return Keypair.fromSeed(createHash('sha256').update(`scenario:${label}`).digest()).publicKey.toBase58();
}

export const K = {
  adminG1: key('authority-1'), adminG2: key('authority-2'), adminG3: key('authority-3'),
  feeG1: key('fee-1'), feeG1b: key('fee-1b'), signerG1: key('signer-1'),
  w1: key('wallet-1'), w2: key('wallet-2'), w3: key('wallet-3'),
  r1: key('recipient-1'), r2: key('recipient-2'),
  target: key('target-program'),
};
export const G1 = pda.gateway(K.adminG1);
export const G2 = pda.gateway(K.adminG2);
export const G3 = pda.gateway(K.adminG3);
export const UP = {
  w1usdc: pda.userPayment(K.w1, USDC_DEV),
  w2usdc: pda.userPayment(K.w2, USDC_DEV),
  w1usdt: pda.userPayment(K.w1, USDT),
  w3usdc: pda.userPayment(K.w3, USDC_DEV),
};
export const P = {
  sub1: pda.paymentPolicy(UP.w1usdc, 1),
  once1: pda.paymentPolicy(UP.w1usdc, 2),
  mile1: pda.paymentPolicy(UP.w1usdc, 3),
  payg1: pda.paymentPolicy(UP.w1usdc, 4),
  upto1: pda.paymentPolicy(UP.w1usdc, 5),
  sub2: pda.paymentPolicy(UP.w2usdc, 1),
  once2: pda.paymentPolicy(UP.w2usdc, 2),
  subUsdt: pda.paymentPolicy(UP.w1usdt, 1),
  sub3: pda.paymentPolicy(UP.w3usdc, 1),
  comp1: pda.composablePolicy(UP.w1usdc, 1),
};

export const T0 = BASE_TIME;
const DAY = 86_400;

/** Builds the story; `seed` varies signatures only, so two builds with one seed are identical. */
export function buildScenario(seed = 'scenario'): TributaryEvent[] {
  const rng = createPrng(seed);
  const events: TributaryEvent[] = [];
  let slot = 10_000;
  const tx = (...items: [EventName, Overrides][]) => {
    slot += 5;
    const signature = randomSignature(rng);
    const blockTime = T0 + slot * 4; // ~ hours apart between transactions: days pass within the story
    items.forEach(([name, ov], index) => {
      events.push(makeEvent(name, ov, { seed: `${seed}:${events.length}`, signature, slot, blockTime, ixPath: String(index), index }));
    });
    return blockTime;
  };
  const timeOfNext = () => T0 + (slot + 5) * 4;

  tx(['ProgramConfigCreated', { admin: K.adminG1 }]);
  tx(['PaymentGatewayCreated', { authority: K.adminG1, fee_recipient: K.feeG1, gateway_fee_bps: 100, name: 'Gateway One', url: 'https://one.example' }]);
  tx(['PaymentGatewayCreated', { authority: K.adminG2, fee_recipient: K.adminG2, gateway_fee_bps: 250, name: 'Gateway Two', url: 'https://two.example' }]);
  tx(['PaymentGatewayCreated', { authority: K.adminG3, fee_recipient: K.adminG3, gateway_fee_bps: 0, name: 'Gateway Three', url: '' }]);
  tx(['GatewayFeeBpsChanged', { gateway: G1, old_fee_bps: 100, new_fee_bps: 150 }]);
  tx(['GatewaySignerChanged', { gateway: G1, old_signer: K.adminG1, new_signer: K.signerG1 }]);
  tx(['GatewayFeeRecipientChanged', { gateway: G1, old_fee_recipient: K.feeG1, new_fee_recipient: K.feeG1b }]);
  tx(['PaymentGatewayDeleted', { gateway: G3, authority: K.adminG3, name: 'Gateway Three' }]);

  tx(['UserPaymentCreated', { owner: K.w1, token_mint: USDC_DEV, token_account: key('ta-1') }]);
  tx(['UserPaymentCreated', { owner: K.w2, token_mint: USDC_DEV, token_account: key('ta-2') }]);
  tx(['UserPaymentCreated', { owner: K.w1, token_mint: USDT, token_account: key('ta-3') }]);

  const created = (up: string, id: number, gateway: string, recipient: string, policyType: unknown, memo: string): [EventName, Overrides] =>
    ['PaymentPolicyCreated', { user_payment: up, recipient, gateway, policy_id: id, created_policies_count: id - 1, policy_type: policyType, memo }];
  const start = timeOfNext();
  tx(created(UP.w1usdc, 1, G1, K.r1, { kind: 'Subscription', amount: '1000000', auto_renew: true, max_renewals: 3, payment_frequency: 'Monthly', next_payment_due: String(start) }, 'order-1'));
  tx(created(UP.w1usdc, 2, G1, K.r1, { kind: 'OneTime', amount: '5000000', due_date: String(start), expiry_date: null }, 'onetime-42'));
  tx(created(UP.w1usdc, 3, G1, K.r2, { kind: 'Milestone', milestone_amounts: ['100', '200', '300', '0'], milestone_timestamps: [String(start), String(start + DAY), String(start + 2 * DAY), '0'], current_milestone: 0, release_condition: 0, total_milestones: 3, escrow_amount: '600' }, 'mile'));
  tx(created(UP.w1usdc, 4, G2, K.r2, { kind: 'PayAsYouGo', max_amount_per_period: '1000', max_chunk_amount: '400', period_length_seconds: String(DAY), current_period_start: String(start), current_period_total: '0', expiry_date: String(start + 30 * DAY) }, 'payg'));
  tx(created(UP.w1usdc, 5, G2, K.r1, { kind: 'UpTo', max_amount: '777', valid_after: String(start), deadline: String(start + 7 * DAY) }, 'upto ünïcode'));
  tx(created(UP.w2usdc, 1, G2, K.r2, { kind: 'Subscription', amount: '18446744073709551615', auto_renew: false, max_renewals: null, payment_frequency: { kind: 'Custom', value: '3600' }, next_payment_due: String(start) }, 'order-2'));
  tx(created(UP.w2usdc, 2, G1, K.r2, { kind: 'OneTime', amount: '42', due_date: String(start), expiry_date: null }, 'onetime-42'));
  tx(created(UP.w1usdt, 1, G1, K.r1, { kind: 'Subscription', amount: '9', auto_renew: true, max_renewals: null, payment_frequency: 'Weekly', next_payment_due: String(start) }, 'order-1'));
  // a policy whose user payment is indexed after it (a stream out of chain order)
  tx(created(UP.w3usdc, 1, G2, K.r1, { kind: 'Subscription', amount: '5', auto_renew: true, max_renewals: null, payment_frequency: 'Daily', next_payment_due: String(start) }, 'order-3'));
  tx(['UserPaymentCreated', { owner: K.w3, token_mint: USDC_DEV, token_account: key('ta-4') }]);

  const forward = eventFields('ComposablePolicyCreated', {}, 'fwd')['forward_config'] as Record<string, unknown>;
  const forwardConfig = { ...forward, input_mint: USDC_DEV, output_mint: USDC_DEV, instruction_constraint: { ...(forward['instruction_constraint'] as object), program_id: K.target } };
  tx(['ComposablePolicyCreated', {
    composable_policy: P.comp1, user_payment: UP.w1usdc, gateway: G1, recipient: K.r2, policy_id: 1,
    policy_type: { kind: 'Subscription', amount: '300', auto_renew: true, max_renewals: 2, payment_frequency: 'Daily', next_payment_due: String(start) },
    memo: 'comp-1', forward_config: forwardConfig, pre_validation: 'Disabled', post_validation: { kind: 'ProgramCall', program_id: K.target },
    has_pre_validation_pda: false, has_post_validation_pda: true,
  }]);

  const pay = (policy: string, gateway: string, amount: string, record: number, memo: string, payer: string, recipient: string, mint = USDC_DEV) => {
    const t = timeOfNext();
    return tx(['PaymentRecord', { payment_policy: policy, gateway, amount, timestamp: String(t), memo, record_id: record, payer, recipient, token_mint: mint }]);
  };
  for (let i = 1; i <= 3; i += 1) pay(P.sub1, G1, '1000000', i, 'order-1', K.w1, K.r1);
  pay(P.once1, G1, '5000000', 1, 'onetime-42', K.w1, K.r1);
  pay(P.mile1, G1, '100', 1, 'mile', K.w1, K.r2);
  pay(P.mile1, G1, '200', 2, 'mile', K.w1, K.r2);
  pay(P.payg1, G2, '400', 1, 'payg', K.w1, K.r2);
  pay(P.payg1, G2, '300', 2, 'payg', K.w1, K.r2);
  pay(P.sub2, G2, '18446744073709551615', 1, 'order-2', K.w2, K.r2);
  pay(P.sub2, G2, '18446744073709551615', 2, 'order-2', K.w2, K.r2);
  pay(P.subUsdt, G1, '9', 1, 'order-1', K.w1, K.r1, USDT);
  tx(['PaymentPolicyStatusChanged', { payment_policy: P.sub2, old_status: 'Active', new_status: 'Paused' }]);
  tx(['PaymentPolicyStatusChanged', { payment_policy: P.sub2, old_status: 'Paused', new_status: 'Active' }]);
  tx(['PaymentPolicyStatusChanged', { payment_policy: P.upto1, old_status: 'Active', new_status: 'Paused' }]);
  tx(['PaymentPolicyDeleted', { payment_policy: P.sub3, owner: K.w3, policy_id: 1 }]);
  for (let i = 1; i <= 2; i += 1) {
    const t = timeOfNext();
    tx(['ComposableExecuted', {
      composable_policy: P.comp1, gateway: G1, target_program: K.target, input_amount: '300', output_amount: '295',
      gateway_fee: '4', protocol_fee: '1', recipient: K.r2, timestamp: String(t), record_id: i,
    }]);
  }
  // noise the read models must ignore: a payment of a policy never created
  pay(key('unknown-policy'), G2, '1', 1, 'ghost', K.w2, K.r2);
  return events;
}

/** Appends events to the test's stream and runs the given projections until each has consumed all of it. */
export async function project(env: TestEnv, projections: readonly Projection[], events: readonly TributaryEvent[], batchSize = 50): Promise<void> {
  await appendTestEvents(env, events);
  const opts: RunnerOptions = { batchSize, blockMs: 50, maxAttempts: 2, claimIdleMs: 30_000 };
  const blockers = projections.map(() => createRedis({ url: env.redisUrl, sentinels: [], sentinelName: '' }));
  const logger = createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent', 'test');
  const runs = projections.map((p, i) => startProjection({ db: env.db, redis: env.redis, blockingRedis: blockers[i]!, keys: env.keys, logger }, p, opts));
  try {
    await waitFor(async () => {
      const groups = await groupInfo(env.redis, env.keys.events);
      return projections.every((p) => groups.some((g) => g.name === p.name && g.lag === 0 && g.pending === 0));
    }, 60_000, 'projections to catch up');
  } finally {
    await Promise.all(runs.map((r) => r.stop()));
    for (const b of blockers) b.disconnect();
  }
  const dead = await Promise.all(projections.map((p) => env.redis.xlen(env.keys.deadLetters(p.name))));
  if (dead.some((n) => n > 0)) throw new Error(`dead letters: ${JSON.stringify(await env.redis.xrange(env.keys.deadLetters(projections[dead.findIndex((n) => n > 0)]!.name), '-', '+'))}`);
}
