/**
 * The workload generator: on every slot it spends a budget of `rate` events per second
 * on actions drawn from a seeded PRNG (so a seed replays the same story), preferring
 * policies that are due on the accelerated schedule clock. Each landed event moves that
 * clock on by SCHEDULE_STEP seconds: a month of renewals plays out in a few thousand
 * events, while block times stay real.
 */
import type { Logger } from 'pino';
import type { Chain } from './chain.js';
import type { Actors } from './genesis.js';
import { createPrng } from './prng.js';
import { submitTransaction } from './submit.js';
import { signedTransaction } from './transactions.js';
import * as admin from './workload-admin-actions.js';
import { duePolicies, type WorkloadModel } from './workload-model.js';
import type { Action, Plan, WorkloadEnv } from './workload-plan.js';
import * as policy from './workload-policy-actions.js';

export const SCHEDULE_STEP = 1_800;

/**
 * The budget is in events: a deliberately failing transaction costs nothing of it (it is
 * a bounded share of the plans), and a step with nothing to plan costs a quarter of an
 * event, so the workload delivers its rate of events and still cannot spin. A budget left
 * over by late ticks (a loaded machine) is kept for up to BACKLOG_SECONDS of the rate.
 */
const NO_PLAN_COST = 0.25;
const BACKLOG_SECONDS = 5;
/**
 * A tick spends at most this much wall time; the budget left waits for the next tick. The
 * RPC shares the localnet's one thread: a loaded machine's backlog spent at once (seconds
 * of work) left reads unanswered for tens of seconds, which no real node does.
 */
export const MAX_TICK_MS = 100;

export interface WorkloadOptions {
  rate: number;
  cpiEventShare: number;
  /** stop after the transaction that brings the workload's events to this many (0 or unset = never) */
  maxEvents?: number;
  /** wall time one tick may spend (default MAX_TICK_MS) */
  maxTickMs?: number;
  logger?: Logger;
}

export interface Workload {
  /** spend the budget accrued over `elapsedMs` */
  tick(elapsedMs: number): void;
  stats(): { transactions: number; failed: number; events: number };
  /** changes the rate from the next tick on (a test starts a paused workload when it is ready) */
  setRate(eventsPerSecond: number): void;
}

type Weight = number | ((m: WorkloadModel) => number);
const composables = (m: WorkloadModel): number => [...m.policies.values()].filter((p) => p.kind === 'composable').length;
const hasUsers = (m: WorkloadModel): boolean => m.userPayments.size > 0;

const TABLE: readonly [Weight, Action][] = [
  [(m) => (m.userPayments.size < 12 ? 4 : 0.2), policy.createUserPayment],
  [(m) => (!hasUsers(m) ? 0 : m.policies.size < 200 ? 6 : 0.5), policy.createPaymentPolicy],
  [(m) => (!hasUsers(m) ? 0 : composables(m) < 40 ? 1.2 : 0.1), policy.createComposablePolicy],
  [2, policy.pausePolicy],
  [2.5, policy.resumePolicy],
  [(m) => (m.policies.size > 150 ? 4 : 0.8), policy.deletePolicy],
  // Rare on chain, yet a story of 5,000 events must hold each kind (the end-to-end proof
  // covers every one). A user payment or an extra gateway is deletable only while nothing
  // uses it, so those deletions are tried often; most tries find nothing and draw again.
  [0.8, policy.deleteUserPayment],
  [0.4, admin.changeFeeBps],
  [0.25, admin.changeFeeRecipient],
  [0.25, admin.changeSigner],
  [0.15, admin.createExtraGateway],
  [0.8, admin.deleteExtraGateway],
  [0.08, admin.setEmergencyPause(true)],
  [0.08, admin.changeProgramAuthority],
  [0.3, admin.failingTransaction],
  [0.25, admin.noiseTransaction],
];

export function createWorkload(chain: Chain, actors: Actors, opts: WorkloadOptions): Workload {
  const prng = createPrng(`workload:${chain.seed}`);
  const model: WorkloadModel = {
    admin: actors.admin,
    gateways: [
      ...actors.gateways.map((g) => ({
        address: g.address, authority: g.authority, signer: g.signer, feeRecipient: g.feeRecipient.publicKey, fixture: true, referral: false, selfDriven: false,
      })),
      ...actors.workloadGateways.map((g) => ({
        address: g.address, authority: g.authority, signer: g.signer, feeRecipient: g.feeRecipient.publicKey, fixture: true, referral: true, selfDriven: true,
      })),
    ],
    userPayments: new Map(),
    policies: new Map(),
    scheduleNow: chain.blockTime(),
    counter: 0,
    programPaused: false,
  };
  const env: WorkloadEnv = {
    chain, model, prng, actors, merchants: actors.merchants,
  };
  const stats = { transactions: 0, failed: 0, events: 0 };
  let budget = 0;
  let rate = opts.rate;
  const done = (): boolean => (opts.maxEvents ?? 0) > 0 && stats.events >= (opts.maxEvents ?? 0);

  const choose = (): Plan | undefined => {
    if (model.programPaused) return admin.setEmergencyPause(false)(env);
    const due = duePolicies(model);
    if (due.length > 0 && prng.chance(0.55)) {
      const plan = policy.executeDue(env, prng.pick(due));
      if (plan) return plan;
    }
    for (let attempt = 0; attempt < 6; attempt += 1) {
      const weights = TABLE.map(([w]) => (typeof w === 'number' ? w : w(model)));
      let r = prng.next() * weights.reduce((a, b) => a + b, 0);
      const idx = weights.findIndex((w) => (r -= w) < 0);
      const plan = TABLE[idx === -1 ? 0 : idx]?.[1](env);
      if (plan) return plan;
    }
    return undefined;
  };

  const step = (): number => {
    const plan = choose();
    if (!plan) return NO_PLAN_COST;
    const tx = signedTransaction(plan.payer, plan.signers, plan.ixs, chain.latestBlockhash().blockhash, 0);
    const out = submitTransaction(chain, tx, {
      verifySignatures: false,
      commit: true,
      exec: { clock: { now: chain.blockTime(), scheduleNow: model.scheduleNow }, viaCpi: () => prng.chance(opts.cpiEventShare) },
    });
    if (out.kind !== 'executed' || !out.record) return NO_PLAN_COST;
    stats.transactions += 1;
    if (out.result.err === null) plan.after?.();
    else stats.failed += 1;
    const events = out.record.events.length;
    stats.events += events;
    model.scheduleNow += SCHEDULE_STEP * Math.max(1, events);
    if (out.result.err !== null && !plan.label.startsWith('failed')) {
      opts.logger?.debug({ label: plan.label, err: out.result.err, logs: out.result.logs }, 'workload transaction failed');
    }
    return events;
  };

  return {
    tick: (elapsedMs) => {
      if (rate <= 0 || done()) return;
      budget = Math.min(budget + (rate * elapsedMs) / 1000, rate * BACKLOG_SECONDS + 5);
      const until = performance.now() + (opts.maxTickMs ?? MAX_TICK_MS);
      for (let guard = 0; budget >= 1 && guard < 100_000 && !done() && performance.now() < until; guard += 1) budget -= step();
    },
    stats: () => ({ ...stats }),
    setRate: (r) => { rate = Math.max(0, r); },
  };
}
