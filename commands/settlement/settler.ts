/**
 * The settler: charges metered pay-as-you-go usage on chain with
 * execute_payment(amount) as the gateway's delegated signer. Each round, first the
 * charges left in doubt (sent or not before a crash) are resolved by their signature,
 * exactly as the scheduler resolves its intents; then every policy whose unsettled usage
 * is due (plan.ts) gets charges until nothing fits. A refused charge puts its usage back
 * to be retried, or marks it unbillable with the chain's reason: at once when the policy
 * can never be charged for it (deleted, completed, expired, past the period's cap), after
 * the retry schedule when the payer keeps failing to pay or the policy stays paused
 * (refusals.ts). Every charge's end is kept as an attempt. While the program's emergency
 * pause is on (its config account), nothing is sent: the usage waits for it to be lifted.
 * With `upto`, each round also resolves the x402://upto settlements left sending (their
 * request's answer was lost and nobody asked again) from the chain (upto-marker.ts).
 *
 * Invariant: a usage row is in at most one charge that executed, so what is charged for
 * a policy never exceeds what was metered for it.
 */
import type { Keypair } from '@solana/web3.js';
import type { Db } from '../../infra/postgres/database.js';
import type { Logger } from '../../infra/log/logger.js';
import type { Config } from '../../src/kernel/config/config.js';
import type { Redis } from 'ioredis';
import pRetry from 'p-retry';
import type { ReleaseOutstanding } from '../x402/account-outstanding.js';
import { resolveUptoInDoubt } from '../x402/upto-marker.js';
import { asPolicyType, asStatus } from '../../src/kernel/domain/policy-type.js';
import { createRounds } from '../../infra/timers/rounds.js';
import { latestBlockhash, readExecutionContext, signExecution, type ChainIo } from '../scheduler/chain.js';
import { failure, programErrorText, programPaused, PROGRAM_PAUSED_WAIT_MS } from '../scheduler/failure.js';
import { activeSigners } from '../scheduler/signers.js';
import { syncGatewayStates } from '../scheduler/gateway-sync.js';
import { dropExpiredCreditReservations } from '../x402/prepaid/ledger.js';
import { prepaidCounterKey } from '../x402/prepaid/meter.js';
import { chargeBasis, dropExpiredReservations, openCharge, retryStates, unsettledPolicies, unsettledRows, type UnsettledPolicy } from './charges.js';
import { chargeDue, planCharge } from './plan.js';
import { chainSeconds } from './chain-clock.js';
import { createAbsences } from './absence.js';
import { nextChargeAtMs, pausedUsage } from './refusals.js';
import { createChargeOutcomes } from './charge-outcomes.js';

export interface SettlerDeps {
  db: Db;
  io: ChainIo;
  config: Config;
  logger: Logger;
  nowMs: () => number;
  /** takes charged or unbillable usage out of the payer accounts' outstanding in Redis (the meter's); default none */
  release?: ReleaseOutstanding;
  /** where x402://upto settlements keep their markers: those left sending are resolved each round (upto-marker.ts); default none */
  upto?: { redis: Redis; redisPrefix: string };
}

export interface RunningSettler { tick(): Promise<void>; stop(): Promise<void> }

/** Charges a policy gets in one round at most (each waits for its confirmation). */
const MAX_CHARGES_PER_ROUND = 20;
const NO_CHARGE_WARN_MS = 60_000;

export function startSettler(deps: SettlerDeps, opts: { autoStart?: boolean } = {}): RunningSettler {
  const s = deps.config.scheduler;
  const log = deps.logger.child({ component: 'settler' });
  const confirmMs = deps.config.x402.confirmTimeoutMs;
  // a long round checks between its steps whether the rounds were stopped (declared below, read only once started)
  const stopping = (): boolean => rounds.stopped;
  // a Redis that does not answer must not hold up recording a charge in Postgres: the outstanding
  // then counts the usage until its next rebuild from the ledger (refusing too much, never too little)
  const outstanding = deps.release;
  const release: ReleaseOutstanding | undefined = outstanding && (async (released, once) => {
    await outstanding(released, once).catch((err: Error) => log.warn({ err: err.message, once }, 'outstanding not released; set right at its next rebuild'));
  });

  // a transient refusal waits a few seconds; the retry schedule's waits are kept as attempts (retryStates)
  const backoff = new Map<string, number>();
  /** why a policy's charge in flight is still in doubt, as its last resolution said */
  const inDoubt = new Map<string, string>();
  /** policies read missing: their usage is made unbillable only once the absence is confirmed (absence.ts) */
  const absences = createAbsences(s.absenceConfirmMs, deps.nowMs);
  const refusalOptions = () => ({ nowMs: deps.nowMs(), scheduleMs: s.dunningScheduleMs, retryMs: s.retryMs });
  const { sendCharge, unbillable, resolveInDoubt } = createChargeOutcomes({
    db: deps.db, io: deps.io, nowMs: deps.nowMs, log, release, confirmMs, backoff, inDoubt, refusalOptions,
  });

  /**
   * `chainNowS`: the chain's clock (chain-clock.ts), by which the program judges the charge.
   * Answers why nothing was charged this round (undefined once a charge landed or the usage was settled as unbillable).
   */
  async function settlePolicy(p: UnsettledPolicy, signer: Keypair, chainNowS: number): Promise<string | undefined> {
    const { policy, gateway } = p;
    for (let n = 0; n < MAX_CHARGES_PER_ROUND && !stopping(); n += 1) {
      const none = (why: string): string | undefined => (n === 0 ? why : undefined);
      const ctx = await readExecutionContext(deps.io, policy);
      if ('class' in ctx && ctx.code === 'PolicyNotFound') {
        if (!absences.missing(policy)) return none(`${ctx.reason}: read again before its usage is made unbillable (a node behind may not have it yet)`);
      } else absences.found(policy);
      if ('class' in ctx) {
        if (ctx.class === 'dropped') await unbillable(p, 'dropped', ctx);
        return ctx.class === 'dropped' ? undefined : none(ctx.reason);
      }
      if (programPaused(ctx.config)) {
        // the program refuses every charge while its admin's emergency pause is on: none is sent (no fee spent), none counted
        backoff.set(policy, deps.nowMs() + PROGRAM_PAUSED_WAIT_MS);
        return none('the program is paused by its admin (emergency pause): its usage is charged once the pause is lifted');
      }
      const type = asPolicyType(ctx.policy.data['policy_type']);
      const status = asStatus(ctx.policy.data['status']);
      if (type.kind !== 'PayAsYouGo') { await unbillable(p, 'dropped', { code: 'InvalidPolicyType', reason: 'the policy is not pay-as-you-go' }); return; }
      if (status === 'Completed') { await unbillable(p, 'dropped', failure('PolicyCompleted', `${programErrorText('PolicyCompleted')}: the policy is completed`)); return; }
      if (status === 'Paused') {
        // a paused policy may be resumed: its usage waits, as long as the retry schedule
        const given = pausedUsage(p.oldestMs, refusalOptions());
        if (given?.kind === 'unbillable') await unbillable(p, 'given_up', { code: 'PolicyPaused', reason: given.reason });
        return given ? undefined : none('the policy is paused on chain: its usage waits for a resume');
      }
      const nowS = chainNowS;
      if (type.expiry_date !== null && Number(type.expiry_date) > 0 && nowS > Number(type.expiry_date)) {
        await unbillable(p, 'dropped', { code: 'PolicyExpired', reason: `${programErrorText('PolicyExpired')}: the policy expired before its usage was charged` });
        return;
      }
      const plan = planCharge(await unsettledRows(deps.db, policy), type, nowS);
      if (plan.kind === 'wait') return none(plan.why);
      const signed = signExecution(deps.io, ctx, signer, await latestBlockhash(deps.io), plan.amount);
      const charge = await openCharge(deps.db, { policy, gateway, amount: plan.amount, ...chargeBasis(ctx), ...signed }, plan.requestIds);
      if (charge === 'in_flight') return none(`another charge of the policy is in flight${inDoubt.has(policy) ? `, in doubt: ${inDoubt.get(policy)}` : ''}`);
      if (charge === 'stale') {
        log.warn({ policy, paymentCount: ctx.policy.data['payment_count'] }, 'the policy\'s read is older than a charge recorded for it (another settler, or a node behind): read again next round');
        return none('the policy read from the chain is older than its last charge: charged next round');
      }
      if (!(await sendCharge(charge, false))) return none('its charge was refused or is not confirmed yet');
    }
    return undefined;
  }

  async function tick(): Promise<void> {
    await resolveInDoubt();
    if (deps.upto) {
      // a settlement younger than its request's confirmation wait may still be answered by that request
      const u = await resolveUptoInDoubt({ ...deps.upto, io: deps.io, programId: deps.io.programId }, deps.nowMs(), { olderThanMs: confirmMs + 1000 })
        .catch((err: unknown) => { log.warn({ err: (err as Error).message }, 'upto settlements in doubt not resolved this round'); return undefined; });
      if (u && u.settled + u.cleared > 0) log.info(u, 'upto settlements left sending resolved from the chain');
    }
    absences.prune();
    const dropped = await dropExpiredReservations(deps.db);
    if (dropped > 0) log.warn({ chunks: dropped }, 'pay-as-you-go requests never answered (their process died): dropped, not charged');
    const credits = await dropExpiredCreditReservations(deps.db);
    if (credits.length > 0) {
      // their counters rebuilt from the ledger on their next draw: the slices the rows held are the payer's again
      const redis = deps.upto;
      if (redis) {
        await pRetry(() => redis.redis.del(...credits.map((c) => prepaidCounterKey(redis.redisPrefix, c))), { retries: 3, minTimeout: 200 })
          .catch((err: unknown) => { log.error({ err: (err as Error).message, credits }, 'prepaid counters not dropped after their reservations: the payer gets those slices back when each is rebuilt (idle or lost)'); });
      }
      log.warn({ credits: credits.length }, 'prepaid rows recorded ahead and never served (their process died): deleted, not drawn');
    }
    if ((await syncGatewayStates(deps.db, deps.io)).length === 0) return;
    const signers = await activeSigners(deps.db, deps.config.keys.encryptionKey);
    const nowMs = deps.nowMs();
    const policies = await unsettledPolicies(deps.db);
    const chainNowS = policies.length > 0 ? await chainSeconds(deps.io, nowMs) : 0;
    const states = await retryStates(deps.db, policies.map((p) => p.policy));
    for (const p of policies) {
      if (stopping()) return;
      const signer = signers.get(p.gateway);
      const state = states.get(p.policy);
      const waitUntil = Math.max(backoff.get(p.policy) ?? 0, state ? nextChargeAtMs(state.refusals, state.lastAtMs, s.dunningScheduleMs) : 0);
      const due = p.total >= BigInt(s.settleThreshold) || nowMs - p.oldestMs >= s.settleIntervalMs;
      if (!signer) { if (due) quiet.noCharge(p, `no active signer for gateway ${p.gateway}`); continue; }
      if (waitUntil > nowMs) {
        if (due) quiet.noCharge(p, `the retry schedule waits until ${new Date(waitUntil).toISOString()} (${state?.refusals ?? 0} refusals counted)`);
        continue;
      }
      backoff.delete(p.policy);
      try {
        const ctx = await readExecutionContext(deps.io, p.policy);
        const type = 'class' in ctx ? undefined : asPolicyType(ctx.policy.data['policy_type']);
        const active = !('class' in ctx) && asStatus(ctx.policy.data['status']) === 'Active';
        // a policy the chain no longer charges is settled (as unbillable) at once; the others when due
        if (type?.kind === 'PayAsYouGo' && active && !chargeDue(p.total, p.oldestMs, type, {
          nowMs, chainNowSeconds: chainNowS, thresholdAmount: BigInt(s.settleThreshold), intervalMs: s.settleIntervalMs, rolloverMarginSeconds: s.rolloverMarginSeconds,
        })) continue;
        const why = await settlePolicy(p, signer, chainNowS);
        if (why !== undefined) quiet.noCharge(p, why);
      } catch (err) {
        log.warn({ err: (err as Error).message, policy: p.policy }, 'settling failed; retried next round');
      }
    }
  }

  const quiet = noChargeWarnings(log, deps.nowMs);
  const period = Math.min(1000, s.settleIntervalMs);
  const rounds = createRounds(tick, period, (err) => log.warn({ err: err.message }, 'settler round failed'));
  if (opts.autoStart !== false) rounds.start();

  return {
    tick,
    stop: () => rounds.stop(),
  };
}

/** A policy with due usage that got no charge is warned about with the reason, at most once a minute per policy. */
function noChargeWarnings(log: Logger, nowMs: () => number): { noCharge(p: UnsettledPolicy, why: string): void } {
  const warned = new Map<string, number>();
  return {
    noCharge(p, why) {
      const last = warned.get(p.policy);
      if (last !== undefined && nowMs() - last < NO_CHARGE_WARN_MS) return;
      warned.set(p.policy, nowMs());
      log.warn({ policy: p.policy, gateway: p.gateway, unsettled: p.total.toString(), oldest: new Date(p.oldestMs).toISOString(), why }, 'pay-as-you-go usage due and not charged');
    },
  };
}
