/**
 * The ends of an attempt: send and confirm stored bytes, and write what came of it (the
 * decision, its attempt row, its lifecycle events). Shared by a first attempt (execute.ts)
 * and the resolution of an intent left in doubt (recover.ts).
 */
import type { Keypair } from '@solana/web3.js';
import type { Logger } from '../../infra/log/logger.js';
import type { Db } from '../../infra/postgres/database.js';
import { confirm, send, type SendResult, type SignatureFate } from '../../infra/solana/sender.js';
import { readExecutionContext, unconfirmedAbsence, type ChainIo } from './chain.js';
import { readExecutionContexts } from './chain-batch.js';
import { afterFailure, afterSuccess, type DecideOptions } from './decide.js';
import { failureOfRefusal, failureOnChain, pauseOnChain, type Failure } from './failure.js';
import { ensureIntent, forgetTransaction, releaseIntent, settleIntent, type Intent } from './intents.js';
import { asPolicyType, asStatus } from '../../src/kernel/domain/policy-type.js';
import { nextPaymentDue } from '../../src/kernel/domain/schedule.js';
import { announce, type LifecycleDeps } from './lifecycle-events.js';
import type { Absences } from '../settlement/absence.js';

export interface ExecutorDeps {
  db: Db;
  io: ChainIo;
  /** this process's claim name */
  me: string;
  signerOf: (gateway: string) => Keypair | undefined;
  nowMs: () => number;
  decide: Omit<DecideOptions, 'nowMs'>;
  confirmTimeoutMs: number;
  lifecycle: LifecycleDeps;
  logger: Logger;
  /** when the program's emergency pause was last warned about (execute.ts); undefined: every time */
  pauseWarning?: { lastMs: number };
  /** policies read missing: a due payment is dropped for it only once the absence is confirmed (absence.ts) */
  absences: Absences;
}

const NOT_DUE_YET_RETRY_MS = 1000;

/** A raw constraint failed on chain names no account: the config tells whether it was the emergency pause. */
export async function onChain(deps: ExecutorDeps, i: Intent, f: Failure): Promise<Failure> {
  if (f.code !== 'ConstraintRaw') return f;
  const c = await readExecutionContext(deps.io, i.policy);
  return 'class' in c ? f : pauseOnChain(f, c.config);
}

/** The policy's payment_count moved past the one stored with the intent (or the policy is gone). */
async function paidMeanwhile(deps: ExecutorDeps, i: Intent): Promise<boolean> {
  const c = await readExecutionContext(deps.io, i.policy);
  // read missing once (a node behind may not have it): not paid, the next attempt reads it again
  if (unconfirmedAbsence(deps.absences, i.policy, c)) return false;
  if ('class' in c) return true;
  return i.payment_count_before !== null && Number(c.policy.data['payment_count']) > i.payment_count_before;
}

/**
 * Sends the intent's stored bytes and confirms them: a first send, or a resend of bytes
 * that may have reached the chain before (`resend`, after a crash or a lost answer).
 */
export async function sendAndConfirm(deps: ExecutorDeps, i: Intent, resend = false): Promise<void> {
  const sent = await send(deps.io, i.wire ?? '');
  if (sent.kind !== 'sent') return notSent(deps, i, sent, resend);
  return confirmed(deps, i, await confirm(deps.io, i.signature ?? '', { timeoutMs: deps.confirmTimeoutMs }));
}

/**
 * A send that did not go through. Only the program's refusal of a first send landed
 * nothing for sure, and is classified. Every other answer (a node behind, a rate limit,
 * an unknown code, an unknown blockhash) says nothing of whether these bytes land, and a
 * resend's refusal may be simulated against what its first send changed: the intent keeps
 * its bytes in doubt and the chain decides on a later round (recover.ts).
 */
export async function notSent(deps: ExecutorDeps, i: Intent, sent: Exclude<SendResult, { kind: 'sent' }>, resend: boolean): Promise<void> {
  if (sent.kind === 'in_doubt' || resend) return releaseIntent(deps.db, i.id, deps.me, deps.nowMs() + deps.decide.retryMs);
  const f = failureOfRefusal(sent.refusal);
  // the chain's clock (its block time) runs a little behind ours: not due yet is not "nothing to pay"
  if (f.code === 'PaymentNotDue' && !(await paidMeanwhile(deps, i))) {
    await forgetTransaction(deps.db, i.id, deps.me);
    return releaseIntent(deps.db, i.id, deps.me, deps.nowMs() + NOT_DUE_YET_RETRY_MS);
  }
  return fail(deps, i, f);
}

/** What the chain said of a sent signature, written; not confirmed in time keeps the bytes for the next round. */
export async function confirmed(deps: ExecutorDeps, i: Intent, fate: SignatureFate): Promise<void> {
  if (fate.kind === 'landed') return succeed(deps, i);
  if (fate.kind === 'failed') return fail(deps, i, await onChain(deps, i, failureOnChain(fate.refusal)));
  return releaseIntent(deps.db, i.id, deps.me, deps.nowMs() + deps.decide.retryMs);
}

/**
 * The policy's next due date, as the chain holds it once a payment landed, becomes an
 * intent at once. Waiting for the read model would make the next payment as late as the
 * indexer and the projector are behind: under load, more than a short period, whose due
 * dates the program then skips. The read model still brings any the chain read misses.
 */
export async function enqueueNext(deps: ExecutorDeps, executed: readonly Intent[]): Promise<void> {
  if (executed.length === 0) return;
  try {
    const contexts = await readExecutionContexts(deps.io, executed.map((i) => i.policy));
    for (const [k, i] of executed.entries()) {
      const c = contexts[k]!;
      // paused since the payment: its next due date is still owed once resumed, so queued too (parked when met)
      if ('class' in c || asStatus(c.policy.data['status']) === 'Completed') continue;
      const due = nextPaymentDue(asPolicyType(c.policy.data['policy_type']), 'Active');
      // the count tells two milestones of one timestamp apart
      const count = Number(c.policy.data['payment_count']);
      if (due !== null && (Number(due) > Number(i.due_at) || count > i.payment_index)) await ensureIntent(deps.db, i, Number(due), Number(due) * 1000, count);
    }
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message, policies: executed.length }, 'next due dates not read; the read model brings them');
  }
}

export async function succeed(deps: ExecutorDeps, i: Intent, note?: string): Promise<void> {
  const d = afterSuccess({ status: i.status, dunningStep: i.dunning_step, consecutiveFailures: i.consecutive_failures });
  const lagMs = Math.max(0, deps.nowMs() - Number(i.due_at) * 1000);
  const ok = await settleIntent(deps.db, i, deps.me, d, { outcome: 'executed', signature: i.signature, lagMs, reason: note ?? '' }, true);
  if (!ok) return;
  deps.logger.info({ policy: i.policy, dueAt: i.due_at, signature: i.signature, lagMs }, 'scheduled payment executed');
  await enqueueNext(deps, [i]);
  await announceSuccess(deps, i);
}

/** The events of an execution (subscription.recovered after past due), once it is recorded. */
export async function announceSuccess(deps: ExecutorDeps, i: Intent): Promise<void> {
  const d = afterSuccess({ status: i.status, dunningStep: i.dunning_step, consecutiveFailures: i.consecutive_failures });
  for (const name of d.events) {
    await announce(deps.lifecycle, {
      name, key: `${name}:${i.policy}:${i.due_at}`, gateway: i.gateway, policy: i.policy, trackingId: i.tracking_id,
      dueAt: Number(i.due_at), details: { signature: i.signature, failedAttempts: i.dunning_step },
    });
  }
}

export async function fail(deps: ExecutorDeps, i: Intent, f: Failure): Promise<void> {
  const d = afterFailure({ status: i.status, dunningStep: i.dunning_step, consecutiveFailures: i.consecutive_failures }, f, { ...deps.decide, nowMs: deps.nowMs() });
  const ok = await settleIntent(deps.db, i, deps.me, d, { outcome: d.outcome, reasonCode: f.code, reason: f.reason, signature: i.signature });
  if (!ok) return;
  deps.logger.info({ policy: i.policy, dueAt: i.due_at, outcome: d.outcome, code: f.code }, 'scheduled payment not executed');
  const nextRetryAt = d.nextAttemptAtMs === undefined || d.status === 'given_up' ? null : new Date(d.nextAttemptAtMs).toISOString();
  for (const name of d.events) {
    await announce(deps.lifecycle, {
      name, key: name === 'payment.failed' ? `${name}:${i.policy}:${i.due_at}:${d.dunningStep}` : `${name}:${i.policy}:${i.due_at}`,
      gateway: i.gateway, policy: i.policy, trackingId: i.tracking_id, dueAt: Number(i.due_at),
      details: { reason: f.reason, code: f.code, attempt: d.dunningStep, nextRetryAt },
    });
  }
}
