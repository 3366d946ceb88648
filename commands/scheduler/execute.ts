/**
 * One execution intent, one attempt. The chain is the judge at every step:
 *
 * 1. An intent left `sending` (a crash, a timeout) is resolved first (recover.ts): the
 *    stored signature landed → executed; failed → classified; unseen with a valid
 *    blockhash → the same bytes sent again; unseen with an expired blockhash → it can
 *    never land, so the policy account decides (paid already, or built anew).
 * 2. The policy is read from the chain: deleted, paused, completed → dropped; its due
 *    date later than the intent's → paid already (dropped); still ahead of the chain's
 *    clock → looked at again then; another due date that has come → that intent instead.
 * 3. execute_payment is signed as the gateway's signer, stored with the intent, sent with
 *    preflight, and confirmed. A refused preflight landed nothing and is classified.
 */
import { text } from '../../src/kernel/domain/event-data.js';
import { asPolicyType, asStatus } from '../../src/kernel/domain/policy-type.js';
import { nextPaymentDue } from '../../src/kernel/domain/schedule.js';
import { latestBlockhash, readExecutionContext, signExecution, type ExecutionContext } from './chain.js';
import { failure } from './failure.js';
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

async function attempt(deps: ExecutorDeps, i: Intent): Promise<void> {
  const signer = deps.signerOf(i.gateway);
  if (!signer) return releaseIntent(deps.db, i.id, deps.me, deps.nowMs() + deps.decide.retryMs);
  const c = await readExecutionContext(deps.io, i.policy);
  if ('class' in c) return fail(deps, i, c);
  const status = asStatus(c.policy.data['status']);
  if (status !== 'Active') return fail(deps, i, failure(status === 'Paused' ? 'PolicyPaused' : 'PolicyCompleted', `the policy is ${status}`));
  if (text(c.gateway.data, 'signer') !== signer.publicKey.toBase58()) {
    return fail(deps, i, failure('SignerNotDelegated', `the gateway's signer on chain is ${text(c.gateway.data, 'signer')}, not the service's ${signer.publicKey.toBase58()}`));
  }
  const due = dueOf(c);
  const dueAt = Number(i.due_at);
  const nowS = Math.floor(deps.nowMs() / 1000);
  if (due === null) return fail(deps, i, failure('PolicyCompleted', 'nothing more is scheduled for the policy'));
  if (due > dueAt) return fail(deps, i, failure('PaymentNotDue', `already paid: the chain's next due date is ${due}`));
  if (due !== dueAt) {
    await ensureIntent(deps.db, i, due);
    return fail(deps, i, failure('PaymentNotDue', `superseded: the chain's due date is ${due}`));
  }
  if (due > nowS) return releaseIntent(deps.db, i.id, deps.me, due * 1000 + 500);

  const signed = signExecution(deps.io, c, signer, await latestBlockhash(deps.io), null);
  const before = Number(c.policy.data['payment_count']);
  if (!(await markSending(deps.db, i.id, deps.me, { ...signed, paymentCountBefore: before }))) return;
  await sendAndConfirm(deps, { ...i, status: 'sending', signature: signed.signature, wire: signed.wire, blockhash: signed.blockhash, payment_count_before: before });
}

