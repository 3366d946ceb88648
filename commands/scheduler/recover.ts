/**
 * An intent found `sending`: its signed bytes were stored before the send, and whether
 * they reached the chain is unknown (a crash, a lost answer, a slow confirmation). The
 * chain decides before anything new is signed:
 *   - the signature landed → executed; it failed → classified as any failure;
 *   - the policy gone → dropped as any failure of that kind, once a read the confirmation
 *     window later says so too (absence.ts); until then looked at again later;
 *   - unseen, blockhash still valid, signed by the signer the gateway names → the same
 *     bytes again (one signature: at most once); any answer to that resend but a landing
 *     keeps the intent in doubt, looked at again on a later round;
 *   - unseen, blockhash expired, or signed by a signer the gateway no longer names (the
 *     gateway was stopped and served again under a new one) → these bytes can never
 *     land. The policy's payment_count beyond the one stored with the intent means
 *     someone paid this due date (the payer, say, or these bytes with their status
 *     pruned): dropped as paid. Otherwise a new transaction is built ('rebuild');
 *   - a chain that does not answer one of these reads → looked at again later.
 */
import { Transaction } from '@solana/web3.js';
import { RpcResponseError, RpcUnavailableError } from '../../infra/solana/rpc-client.js';
import { resolveInDoubt } from '../../infra/solana/sender.js';
import { text } from '../../src/kernel/domain/event-data.js';
import { readExecutionContext, unconfirmedAbsence, type ExecutionContext } from './chain.js';
import { failure, failureOnChain, type Failure } from './failure.js';
import { fail, onChain, sendAndConfirm, succeed, type ExecutorDeps } from './outcomes.js';
import { forgetTransaction, releaseIntent, type Intent } from './intents.js';

/** The fee payer (the gateway's signer) of stored bytes. */
function signerOf(wire: string | null): string | undefined {
  if (!wire) return undefined;
  try {
    return Transaction.from(Buffer.from(wire, 'base64')).feePayer?.toBase58();
  } catch {
    return undefined;
  }
}

export async function recoverSending(deps: ExecutorDeps, i: Intent): Promise<'done' | 'rebuild'> {
  try {
    let read: ExecutionContext | Failure | undefined;
    const v = await resolveInDoubt(deps.io, { signature: i.signature ?? '', blockhash: i.blockhash }, async () => {
      read = await readExecutionContext(deps.io, i.policy);
      return 'class' in read || !countMoved(i, read);
    });
    if (v.kind === 'landed') return await succeed(deps, i, 'confirmed after a restart or a timeout').then(() => 'done');
    if (v.kind === 'failed') return await fail(deps, i, await onChain(deps, i, failureOnChain(v.refusal))).then(() => 'done');
    if (v.kind === 'in_doubt') return await releaseIntent(deps.db, i.id, deps.me, deps.nowMs() + deps.decide.retryMs).then(() => 'done');
    const c = read ?? await readExecutionContext(deps.io, i.policy);
    // read missing once (a node behind may not have it): looked at again, dropped only once confirmed
    if (unconfirmedAbsence(deps.absences, i.policy, c)) return await releaseIntent(deps.db, i.id, deps.me, deps.nowMs() + deps.decide.retryMs).then(() => 'done');
    if ('class' in c) return await fail(deps, i, c).then(() => 'done');
    // bytes signed by a signer the gateway no longer names (stopped, then served again
    // under a new one) are refused whenever they arrive: as good as expired
    if (v.kind === 'can_land' && signerOf(i.wire) === text(c.gateway.data, 'signer')) {
      await sendAndConfirm(deps, i, true);
      return 'done';
    }
    if (v.kind === 'moved' || countMoved(i, c)) {
      await fail(deps, i, failure('PaymentNotDue', 'paid by another transaction while this one was in doubt'));
      return 'done';
    }
    return (await forgetTransaction(deps.db, i.id, deps.me)) ? 'rebuild' : 'done';
  } catch (err) {
    if (!(err instanceof RpcUnavailableError || err instanceof RpcResponseError)) throw err;
    await releaseIntent(deps.db, i.id, deps.me, deps.nowMs() + deps.decide.retryMs);
    return 'done';
  }
}

/** The policy's payment_count beyond the one stored with the intent: some execution landed since it was signed. */
function countMoved(i: Intent, c: ExecutionContext): boolean {
  return i.payment_count_before !== null && Number(c.policy.data['payment_count']) > i.payment_count_before;
}
