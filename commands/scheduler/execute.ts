/**
 * One execution intent, one attempt. The chain is the judge at every step:
 *
 * 1. An intent left `sending` (a crash, a timeout) is resolved first (recover.ts): the
 *    stored signature landed → executed; failed → classified; unseen with a valid
 *    blockhash → the same bytes sent again; unseen with an expired blockhash → it can
 *    never land, so the policy account decides (paid already, or built anew).
 * 2. The policy is read from the chain: deleted, paused, completed → dropped (deleted only
 *    once a read the confirmation window after the first says so too: a node behind may not
 *    have a new policy yet, absence.ts; until then looked at again on the short retry); its due
 *    date later than the intent's → paid already (dropped); still ahead of the chain's
 *    clock → looked at again then; another due date that has come → that intent instead.
 *    The program's emergency pause (its config account) → looked at again in a few
 *    seconds: nothing is sent while the program would refuse it, nothing counted.
 * 3. execute_payment is signed as the gateway's signer, stored with the intent, sent with
 *    preflight, and confirmed. A refused preflight landed nothing and is classified.
 */
import { text } from '../../src/kernel/domain/event-data.js';
import { asPolicyType, asStatus } from '../../src/kernel/domain/policy-type.js';
import { nextPaymentDue } from '../../src/kernel/domain/schedule.js';
import { latestBlockhash, readExecutionContext, signExecution, unconfirmedAbsence, type ExecutionContext } from './chain.js';
import type { Keypair } from '@solana/web3.js';
import { failure, programPaused, PROGRAM_PAUSED_WAIT_MS, type Failure } from './failure.js';
import { gatewayMayRelease } from './release.js';
import { ensureIntent, markSending, releaseIntent, type Intent } from './intents.js';
import { fail, sendAndConfirm, type ExecutorDeps } from './outcomes.js';
import { recoverSending } from './recover.js';

export type { ExecutorDeps };

export async function processIntent(deps: ExecutorDeps, i: Intent): Promise<void> {
  if (i.status === 'sending') {
    const r = await recoverSending(deps, i);
    if (r === 'done') return;
    i = { ...i, status: i.dunning_step > 0 ? 'past_due' : 'pending', wire: null, signature: null, blockhash: null };
  }
  await attempt(deps, i);
}

const dueOf = (c: ExecutionContext): number | null => {
  const due = nextPaymentDue(asPolicyType(c.policy.data['policy_type']), asStatus(c.policy.data['status']));
  return due === null ? null : Number(due);
};

/** What the chain's accounts say of an intent: send it now, not at all (why), or look again later. */
export type Verdict =
  | { kind: 'send'; signer: Keypair; context: ExecutionContext }
  | { kind: 'fail'; failure: Failure; supersededBy?: { due: number; index: number } }
  | { kind: 'later'; atMs: number; programPaused?: true; absent?: Failure };

export function judge(deps: Pick<ExecutorDeps, 'signerOf' | 'decide' | 'absences'>, i: Intent, c: ExecutionContext | Failure, nowMs: number): Verdict {
  const signer = deps.signerOf(i.gateway);
  if (!signer) return { kind: 'later', atMs: nowMs + deps.decide.retryMs };
  // one answer "missing" is not a deletion: neither dropped nor counted towards the dunning schedule or the cooldown
  const absent = unconfirmedAbsence(deps.absences, i.policy, c);
  if (absent) return { kind: 'later', atMs: nowMs + deps.decide.retryMs, absent };
  if ('class' in c) return { kind: 'fail', failure: c };
  // the program refuses every execution while its admin's emergency pause is on: none is sent (no fee spent), none counted
  if (programPaused(c.config)) return { kind: 'later', atMs: nowMs + PROGRAM_PAUSED_WAIT_MS, programPaused: true };
  const status = asStatus(c.policy.data['status']);
  if (status !== 'Active') return { kind: 'fail', failure: failure(status === 'Paused' ? 'PolicyPaused' : 'PolicyCompleted', `the policy is ${status}`) };
  if (text(c.gateway.data, 'signer') !== signer.publicKey.toBase58()) {
    return { kind: 'fail', failure: failure('SignerNotDelegated', `the gateway's signer on chain is ${text(c.gateway.data, 'signer')}, not the service's ${signer.publicKey.toBase58()}`) };
  }
  const due = dueOf(c);
  const dueAt = Number(i.due_at);
  if (due === null) return { kind: 'fail', failure: failure('PolicyCompleted', 'nothing more is scheduled for the policy') };
  if (!gatewayMayRelease(asPolicyType(c.policy.data['policy_type']))) {
    return { kind: 'fail', failure: failure('Unauthorized', 'a milestone its owner or recipient releases, never the gateway\'s signer') };
  }
  // the payment count tells apart two payments of one due date (milestones of one timestamp); -1: not known
  const count = Number(c.policy.data['payment_count']);
  const index = i.payment_index;
  if (due > dueAt || (index >= 0 && count > index)) return { kind: 'fail', failure: failure('PaymentNotDue', `already paid: the chain's next due date is ${due}, its payment count ${count}`) };
  if (due !== dueAt || (index >= 0 && count !== index)) {
    return { kind: 'fail', failure: failure('PaymentNotDue', `superseded: the chain's due date is ${due}, its payment count ${count}`), supersededBy: { due, index: count } };
  }
  if (due > Math.floor(nowMs / 1000)) return { kind: 'later', atMs: due * 1000 + 500 };
  return { kind: 'send', signer, context: c };
}

/** The verdicts that send nothing, written. */
export async function settleVerdict(deps: ExecutorDeps, i: Intent, v: Exclude<Verdict, { kind: 'send' }>): Promise<void> {
  if (v.kind === 'later') {
    if (v.programPaused) warnProgramPaused(deps, i);
    if (v.absent) deps.logger.info({ policy: i.policy, dueAt: i.due_at, reason: v.absent.reason }, 'read missing: read again before the payment is dropped (a node behind may not have the policy yet)');
    return releaseIntent(deps.db, i.id, deps.me, v.atMs);
  }
  if (v.supersededBy !== undefined) await ensureIntent(deps.db, i, v.supersededBy.due, undefined, v.supersededBy.index);
  return fail(deps, i, v.failure);
}

const PAUSE_WARN_MS = 60_000;

/** The emergency pause holds every due execution: warned about at most once a minute per process, not once per intent. */
function warnProgramPaused(deps: ExecutorDeps, i: Intent): void {
  const w = deps.pauseWarning;
  const now = deps.nowMs();
  if (w && now - w.lastMs < PAUSE_WARN_MS) return;
  if (w) w.lastMs = now;
  deps.logger.warn({ policy: i.policy, dueAt: i.due_at }, 'the program is paused by its admin (emergency pause): due executions wait until it is lifted');
}

async function attempt(deps: ExecutorDeps, i: Intent): Promise<void> {
  const c = deps.signerOf(i.gateway) ? await readExecutionContext(deps.io, i.policy) : failure('failed', 'no signer');
  const v = judge(deps, i, c, deps.nowMs());
  if (v.kind !== 'send') return settleVerdict(deps, i, v);
  const signed = signExecution(deps.io, v.context, v.signer, await latestBlockhash(deps.io), null);
  const before = Number(v.context.policy.data['payment_count']);
  if (!(await markSending(deps.db, i.id, deps.me, { ...signed, paymentCountBefore: before }))) return;
  await sendAndConfirm(deps, { ...i, status: 'sending', signature: signed.signature, wire: signed.wire, blockhash: signed.blockhash, payment_count_before: before });
}
