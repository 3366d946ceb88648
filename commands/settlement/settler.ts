/**
 * The settler: charges metered pay-as-you-go usage on chain with
 * execute_payment(amount) as the gateway's delegated signer. Each round, first the
 * charges left in doubt (sent or not before a crash) are resolved by their signature,
 * exactly as the scheduler resolves its intents; then every policy whose unsettled usage
 * is due (plan.ts) gets charges until nothing fits. A refused charge puts its usage back, or marks it unbillable with the
 * chain's reason when the policy cannot be charged any more (deleted, paused, expired).
 *
 * Invariant: a usage row is in at most one charge that executed, so what is charged for
 * a policy never exceeds what was metered for it.
 */
import type { Keypair } from '@solana/web3.js';
import type { Db } from '../../infra/postgres/database.js';
import type { Logger } from '../../infra/log/logger.js';
import type { Config } from '../../src/kernel/config/config.js';
import { asPolicyType, asStatus } from '../../src/kernel/domain/policy-type.js';
import { createRounds } from '../../infra/timers/rounds.js';
import {
  awaitSignature, blockhashStillValid, latestBlockhash, readExecutionContext, sendSigned, signExecution, signatureFate, type ChainIo,
} from '../scheduler/chain.js';
import { failure, type Failure } from '../scheduler/failure.js';
import { activeSigners } from '../scheduler/signers.js';
import { syncGatewayStates } from '../scheduler/gateway-sync.js';
import {
  chargeExecuted, chargeFailed, chargesInDoubt, markUnbillable, openCharge, unsettledPolicies, unsettledRows, type Charge,
} from './charges.js';
import { chargeDue, planCharge } from './plan.js';

export interface SettlerDeps {
  db: Db;
  io: ChainIo;
  config: Config;
  logger: Logger;
  nowMs: () => number;
}

export interface RunningSettler { tick(): Promise<void>; stop(): Promise<void> }

/** Charges a policy gets in one round at most (each waits for its confirmation). */
const MAX_CHARGES_PER_ROUND = 20;
const IN_DOUBT_AFTER_MS = 5_000;

export function startSettler(deps: SettlerDeps, opts: { autoStart?: boolean } = {}): RunningSettler {
  const s = deps.config.scheduler;
  const log = deps.logger.child({ component: 'settler' });
  const confirmMs = deps.config.x402.confirmTimeoutMs;
  // a long round checks between its steps whether the rounds were stopped (declared below, read only once started)
  const stopping = (): boolean => rounds.stopped;

  async function landed(c: Charge): Promise<void> {
    const done = await chargeExecuted(deps.db, c.id);
    if (!done) return;
    log.info({ policy: c.policy, amount: c.amount, signature: c.signature, recordId: done.record_id }, 'pay-as-you-go usage charged');
  }

  // a policy whose charge the chain refused (balance, delegation, cap) waits an interval before the next try
  const backoff = new Map<string, number>();

  async function refused(c: Charge, f: Failure): Promise<void> {
    const unbillable = f.class === 'dropped';
    await chargeFailed(deps.db, c.id, f.reason, unbillable);
    if (!unbillable) backoff.set(c.policy, deps.nowMs() + s.settleIntervalMs);
    log.info({ policy: c.policy, amount: c.amount, code: f.code, unbillable }, 'pay-as-you-go charge refused');
  }

  async function sendCharge(c: Charge): Promise<boolean> {
    const sent = await sendSigned(deps.io, c.wire);
    if (!sent.ok) {
      if ('unknown' in sent) return false;
      await refused(c, sent.failure);
      return false;
    }
    const fate = await awaitSignature(deps.io, c.signature, confirmMs);
    if (fate.kind === 'landed') { await landed(c); return true; }
    if (fate.kind === 'failed') await refused(c, fate.failure);
    return false;
  }

  async function resolveInDoubt(): Promise<void> {
    for (const c of await chargesInDoubt(deps.db, IN_DOUBT_AFTER_MS)) {
      const fate = await signatureFate(deps.io, c.signature);
      if (fate.kind === 'landed') await landed(c);
      else if (fate.kind === 'failed') await refused(c, fate.failure);
      else if (await blockhashStillValid(deps.io, c.blockhash)) await sendCharge(c);
      else await refused(c, failure('BlockhashNotFound', 'the charge never landed (its blockhash expired); its usage is charged again'));
    }
  }

  async function settlePolicy(policy: string, gateway: string, signer: Keypair): Promise<void> {
    for (let n = 0; n < MAX_CHARGES_PER_ROUND && !stopping(); n += 1) {
      const ctx = await readExecutionContext(deps.io, policy);
      if ('class' in ctx) { await markUnbillable(deps.db, policy, ctx.reason); return; }
      const type = asPolicyType(ctx.policy.data['policy_type']);
      const status = asStatus(ctx.policy.data['status']);
      if (type.kind !== 'PayAsYouGo') { await markUnbillable(deps.db, policy, 'the policy is not pay-as-you-go'); return; }
      if (status !== 'Active') return; // a paused policy may be resumed; its usage waits
      const nowS = Math.floor(deps.nowMs() / 1000);
      if (type.expiry_date !== null && Number(type.expiry_date) > 0 && nowS > Number(type.expiry_date)) {
        await markUnbillable(deps.db, policy, 'PolicyExpired (6065): the policy expired before its usage was charged');
        return;
      }
      const plan = planCharge(await unsettledRows(deps.db, policy), type, nowS);
      if (plan.kind === 'wait') return;
      const signed = signExecution(deps.io, ctx, signer, await latestBlockhash(deps.io), plan.amount);
      const charge = await openCharge(deps.db, {
        policy, gateway, amount: plan.amount, paymentCountBefore: Number(ctx.policy.data['payment_count']), ...signed,
      }, plan.requestIds);
      if (!charge) return; // another settler is charging this policy
      if (!(await sendCharge(charge))) return;
    }
  }

  async function tick(): Promise<void> {
    await resolveInDoubt();
    if ((await syncGatewayStates(deps.db, deps.io)).length === 0) return;
    const signers = await activeSigners(deps.db, deps.config.keys.encryptionKey);
    const nowMs = deps.nowMs();
    for (const p of await unsettledPolicies(deps.db)) {
      if (stopping()) return;
      const signer = signers.get(p.gateway);
      if (!signer || (backoff.get(p.policy) ?? 0) > nowMs) continue;
      backoff.delete(p.policy);
      const ctx = await readExecutionContext(deps.io, p.policy);
      if ('class' in ctx) { await markUnbillable(deps.db, p.policy, ctx.reason); continue; }
      const type = asPolicyType(ctx.policy.data['policy_type']);
      if (type.kind === 'PayAsYouGo' && !chargeDue(p.total, p.oldestMs, type, {
        nowMs, thresholdAmount: BigInt(s.settleThreshold), intervalMs: s.settleIntervalMs, rolloverMarginSeconds: s.rolloverMarginSeconds,
      })) continue;
      try {
        await settlePolicy(p.policy, p.gateway, signer);
      } catch (err) {
        log.warn({ err: (err as Error).message, policy: p.policy }, 'settling failed; retried next round');
      }
    }
  }

  const period = Math.min(1000, s.settleIntervalMs);
  const rounds = createRounds(tick, period, (err) => log.warn({ err: err.message }, 'settler round failed'));
  if (opts.autoStart !== false) rounds.start();

  return {
    tick,
    stop: () => rounds.stop(),
  };
}
