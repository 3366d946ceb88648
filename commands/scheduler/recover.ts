/**
 * An intent found `sending`: its signed bytes were stored before the send, and whether
 * they reached the chain is unknown (a crash, a lost answer, a slow confirmation). The
 * chain decides before anything new is signed:
 *   - the signature landed → executed; it failed → classified as any failure;
 *   - the policy gone → dropped as any failure of that kind;
 *   - unseen, blockhash still valid, signed by the signer the gateway names → the same
 *     bytes again (one signature: at most once);
 *   - unseen, blockhash expired, or signed by a signer the gateway no longer names (the
 *     gateway was stopped and served again under a new one) → these bytes can never
 *     land. The policy's payment_count beyond the one stored with the intent means
 *     someone paid this due date (the payer, say): dropped as paid. Otherwise a new
 *     transaction is built ('rebuild').
 */
import { Transaction } from '@solana/web3.js';
import { RpcUnavailableError } from '../../infra/solana/rpc-client.js';
import { text } from '../../src/kernel/domain/event-data.js';
import { blockhashStillValid, readExecutionContext, signatureFate } from './chain.js';
import { failure } from './failure.js';
import { fail, sendAndConfirm, succeed, type ExecutorDeps } from './outcomes.js';
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
    // the blockhash before the status: once it has expired at the commitment, every bank that could
    // hold the transaction is at or below that one, so the status read next is final. The other
    // order saw a transaction confirming between the reads as unseen, and then as someone else's payment.
    const canLand = i.blockhash ? await blockhashStillValid(deps.io, i.blockhash) : false;
    const fate = await signatureFate(deps.io, i.signature ?? '');
    if (fate.kind === 'landed') return await succeed(deps, i, 'confirmed after a restart or a timeout').then(() => 'done');
    if (fate.kind === 'failed') return await fail(deps, i, fate.failure).then(() => 'done');
    const c = await readExecutionContext(deps.io, i.policy);
    if ('class' in c) return await fail(deps, i, c).then(() => 'done');
    // bytes signed by a signer the gateway no longer names (stopped, then served again
    // under a new one) are refused whenever they arrive: as good as expired
    const signerServes = signerOf(i.wire) === text(c.gateway.data, 'signer');
    if (signerServes && canLand) {
      await sendAndConfirm(deps, i);
      return 'done';
    }
    if (i.payment_count_before !== null && Number(c.policy.data['payment_count']) > i.payment_count_before) {
      await fail(deps, i, failure('PaymentNotDue', 'paid by another transaction while this one was in doubt'));
      return 'done';
    }
    return (await forgetTransaction(deps.db, i.id, deps.me)) ? 'rebuild' : 'done';
  } catch (err) {
    if (!(err instanceof RpcUnavailableError)) throw err;
    await releaseIntent(deps.db, i.id, deps.me, deps.nowMs() + deps.decide.retryMs);
    return 'done';
  }
}
