/**
 * The payment: connect a wallet, have it sign the session's transaction as the service
 * built it, then the proof that the wallet is the payer (the x402 proof text over the
 * transaction's first signature), send both, and go to the merchant's success page.
 */
import { base58, firstSignature, fromBase64, toBase64 } from '../shared/bytes.js';
import { ApiError, messageOf } from '../shared/http.js';
import type { StatusLine } from '../shared/status.js';
import type { Connected } from '../shared/wallet.js';
import { walletMessage } from '../shared/wallet.js';
import { paySession, unsignedTransaction, type ProofParts, type TransactionAnswer } from './session.js';

/** The text the payer's wallet signs (docs/proof-of-possession.md): the service's template with the signature filled in. */
export function proofText(proof: ProofParts, txSignature: string): string {
  return proof.template.split('{signature}').join(txSignature);
}

export type Outcome = { done: true; redirectUrl: string } | { done: false; closed?: 'complete' | 'expired' };

/** A failure in the words the page shows; 409/410 also close the page. */
function failed(err: unknown, status: StatusLine, stage: 'wallet' | 'service'): Outcome {
  if (err instanceof ApiError) {
    if (err.status === 409) { status.say(`This checkout is already paid. ${err.message}`, 'error'); return { done: false, closed: 'complete' }; }
    if (err.status === 410) { status.say(`This checkout has expired. ${err.message}`, 'error'); return { done: false, closed: 'expired' }; }
    status.say(`The payment did not go through: ${err.message}`, 'error');
    return { done: false };
  }
  status.say(stage === 'wallet' ? walletMessage(err) : `The payment did not go through: ${messageOf(err)}`, 'error');
  return { done: false };
}

export async function pay(sessionId: string, wallet: Connected, status: StatusLine): Promise<Outcome> {
  let built: TransactionAnswer;
  try {
    status.say('Preparing the transaction…');
    built = await unsignedTransaction(sessionId, wallet.address);
  } catch (err) {
    return failed(err, status, 'service');
  }
  let signedTx: Uint8Array;
  let proofSignature: string;
  try {
    status.say(`Approve the payment in ${wallet.name}…`);
    signedTx = await wallet.signTransaction(fromBase64(built.transaction));
    const txSignature = base58(firstSignature(signedTx));
    status.say(`Approve the proof in ${wallet.name}…`);
    proofSignature = base58(await wallet.signMessage(new TextEncoder().encode(proofText(built.proof, txSignature))));
  } catch (err) {
    return failed(err, status, 'wallet');
  }
  try {
    status.say('Confirming…');
    const done = await paySession(sessionId, toBase64(signedTx), { signedAt: built.proof.signedAt, signature: proofSignature });
    status.say('Paid. Taking you back to the merchant…', 'ok');
    return { done: true, redirectUrl: done.redirectUrl };
  } catch (err) {
    return failed(err, status, 'service');
  }
}
