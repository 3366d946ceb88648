/**
 * What becomes of a pay-as-you-go charge the settler sent: landed, refused (its usage put
 * back to be retried, or unbillable with the chain's reason), or in doubt until the chain
 * proves its fate (resolveInDoubt). Every end is kept as an attempt.
 */
import type { Db } from '../../infra/postgres/database.js';
import type { Logger } from '../../infra/log/logger.js';
import type { ReleaseOutstanding } from '../x402/account-outstanding.js';
import { asPolicyType } from '../../src/kernel/domain/policy-type.js';
import { confirm, resolveInDoubt as fateInDoubt, send } from '../../infra/solana/sender.js';
import { readExecutionContext, type ChainIo } from '../scheduler/chain.js';
import { failure, failureOfRefusal, failureOnChain, pauseOnChain, type Failure } from '../scheduler/failure.js';
import { chargeExecuted, chargeFailed, chargesInDoubt, markUnbillable, retryStates, type Charge } from './charges.js';
import { roomLeft } from './plan.js';
import { chainSeconds } from './chain-clock.js';
import { afterRefusedCharge, capExceeded, type RefusalOptions } from './refusals.js';

const IN_DOUBT_AFTER_MS = 5_000;

export interface ChargeOutcomeDeps {
  db: Db;
  io: ChainIo;
  nowMs: () => number;
  log: Logger;
  release: ReleaseOutstanding | undefined;
  confirmMs: number;
  /** a policy's next charge not before (ms), after a transient refusal; a landed charge clears it */
  backoff: Map<string, number>;
  /** why a policy's charge in flight is still in doubt, as its last resolution said */
  inDoubt: Map<string, string>;
  refusalOptions: () => RefusalOptions;
}

export interface ChargeOutcomes {
  /** Sends the charge's stored bytes and confirms them; true once it landed. */
  sendCharge: (c: Charge, resend: boolean) => Promise<boolean>;
  /** The policy's unsettled usage unbillable with the chain's reason (no charge could carry it). */
  unbillable: (p: { policy: string; gateway: string }, outcome: 'dropped' | 'given_up', f: Pick<Failure, 'code' | 'reason'>) => Promise<void>;
  /** Resolves the charges left in doubt by their signature. */
  resolveInDoubt: () => Promise<void>;
}

export function createChargeOutcomes(deps: ChargeOutcomeDeps): ChargeOutcomes {
  const { log, release, confirmMs, backoff, inDoubt, refusalOptions } = deps;

  async function landed(c: Charge): Promise<void> {
    const done = await chargeExecuted(deps.db, c.id, release);
    if (!done) return;
    backoff.delete(c.policy);
    log.info({ policy: c.policy, amount: c.amount, signature: c.signature, recordId: done.record_id }, 'pay-as-you-go usage charged');
  }


  /**
   * The program names a pay-as-you-go charge past the period's cap InsufficientDelegatedAmount, as it does a short delegation: the chain's policy tells which.
   * A raw constraint failed on chain is the emergency pause when the config says so.
   */
  async function readRefusal(c: Charge, f: Failure): Promise<Failure> {
    if (f.code === 'ConstraintRaw') {
      // a raw constraint failed on chain names no account: the config tells whether it was the emergency pause
      const ctx = await readExecutionContext(deps.io, c.policy);
      return 'class' in ctx ? f : pauseOnChain(f, ctx.config);
    }
    if (f.code !== 'InsufficientDelegatedAmount') return f;
    const ctx = await readExecutionContext(deps.io, c.policy);
    if ('class' in ctx) return ctx;
    const t = asPolicyType(ctx.policy.data['policy_type']);
    if (t.kind !== 'PayAsYouGo') return f;
    const room = roomLeft(t, await chainSeconds(deps.io, deps.nowMs()));
    return BigInt(c.amount) > room ? capExceeded(BigInt(c.amount), room, BigInt(t.max_amount_per_period)) : f;
  }

  async function refused(c: Charge, refusal: Failure): Promise<void> {
    const f = await readRefusal(c, refusal);
    const earlier = (await retryStates(deps.db, [c.policy])).get(c.policy)?.refusals ?? 0;
    const o = afterRefusedCharge(f, earlier, refusalOptions());
    const reason = o.kind === 'unbillable' ? o.reason : f.reason;
    if (!(await chargeFailed(deps.db, c, reason, o.kind === 'unbillable', { outcome: o.outcome, code: f.code, reason }, release))) return;
    if (o.kind === 'retry') backoff.set(c.policy, o.atMs);
    const fields = { policy: c.policy, amount: c.amount, code: f.code, outcome: o.outcome, reason };
    if (o.outcome === 'given_up') log.warn(fields, 'pay-as-you-go usage given up after the retry schedule: marked unbillable');
    // a refusal that waits on the retry schedule holds the policy's usage for its first step: an operator must see why
    else if (o.outcome === 'past_due') log.warn({ ...fields, retryAt: new Date(o.kind === 'retry' ? o.atMs : 0).toISOString() }, 'pay-as-you-go charge refused; retried on the retry schedule');
    else log.info(fields, o.kind === 'unbillable' ? 'pay-as-you-go usage unbillable' : 'pay-as-you-go charge refused; retried');
  }

  /** The policy's unsettled usage unbillable with the chain's reason (no charge could carry it). */
  async function unbillable(p: { policy: string; gateway: string }, outcome: 'dropped' | 'given_up', f: Pick<Failure, 'code' | 'reason'>): Promise<void> {
    const n = await markUnbillable(deps.db, p, f.reason, { outcome, code: f.code, reason: f.reason }, release);
    if (n > 0) log.warn({ policy: p.policy, code: f.code, chunks: n, reason: f.reason }, 'pay-as-you-go usage unbillable');
  }

  /**
   * Sends the charge's stored bytes and confirms them. Only the program's refusal of a
   * first send is the payer's: a resend's refusal may be simulated against what its first
   * send changed, and any other answer (a node behind, a rate limit, an unknown blockhash)
   * says nothing of whether the bytes land. The charge then stays in doubt, and a later
   * round asks the chain (resolveInDoubt), instead of putting back usage that may be paid.
   */
  async function sendCharge(c: Charge, resend: boolean): Promise<boolean> {
    const sent = await send(deps.io, c.wire);
    if (sent.kind === 'in_doubt' || (sent.kind === 'refused' && resend)) return false;
    if (sent.kind === 'refused') { await refused(c, failureOfRefusal(sent.refusal)); return false; }
    const fate = await confirm(deps.io, c.signature, { timeoutMs: confirmMs });
    if (fate.kind === 'landed') { await landed(c); return true; }
    if (fate.kind === 'failed') await refused(c, failureOnChain(fate.refusal));
    return false;
  }

  /** Whether the policy's payment_count is the one stored with the charge (a deleted policy counts nothing more); undefined unread. */
  async function countUnchanged(c: Charge): Promise<boolean | undefined> {
    try {
      const ctx = await readExecutionContext(deps.io, c.policy);
      return 'class' in ctx || Number(ctx.policy.data['payment_count']) === c.payment_count_before;
    } catch (err) {
      log.warn({ err: (err as Error).message, policy: c.policy }, 'policy not read; its charge stays in doubt');
      return undefined;
    }
  }

  /** A charge's usage goes back only once the chain proves its transaction can never land (sender.ts, resolveInDoubt). */
  async function resolveInDoubt(): Promise<void> {
    inDoubt.clear();
    for (const c of await chargesInDoubt(deps.db, IN_DOUBT_AFTER_MS)) {
      const v = await fateInDoubt(deps.io, c, () => countUnchanged(c));
      if (v.kind === 'landed') await landed(c);
      else if (v.kind === 'failed') await refused(c, failureOnChain(v.refusal));
      else if (v.kind === 'can_land') await sendCharge(c, true);
      else if (v.kind === 'cannot_land') await refused(c, failure('BlockhashNotFound', 'the charge never landed (its blockhash expired); its usage is charged again'));
      else if (v.kind === 'in_doubt') inDoubt.set(c.policy, v.reason);
      else if (v.kind === 'moved') {
        // one charge of a policy is in flight at a time: the count moved by this one, its status no longer kept
        log.warn({ policy: c.policy, signature: c.signature }, 'charge without a status, its policy\'s payment_count moved: recorded as landed');
        await landed(c);
      }
    }
  }

  return { sendCharge, unbillable, resolveInDoubt };
}
