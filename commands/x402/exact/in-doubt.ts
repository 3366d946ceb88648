/**
 * A recorded exact signature whose fate the chain has not told yet: sent again while it
 * can still land, or proven never to land (then the payment failed as expired).
 */
import { getCompiledTransactionMessageDecoder, type Address } from '@solana/kit';
import type { PaymentRequirements } from '@x402/core/types';
import type { decodeTransactionFromPayload, FacilitatorSvmSigner } from '@x402/svm';
import { blockhashValid, send, status, type SenderIo } from '../../../infra/solana/sender.js';
import { signatureOfWire } from './svm-signer.js';

export type Decoded = ReturnType<typeof decodeTransactionFromPayload>;

/**
 * A recorded signature the chain has no status for while its blockhash is still valid:
 * its send may never have reached a leader, so the same bytes go again (the fee payer's
 * signature of the message is deterministic; the chain lands one signature at most once).
 * Any other fate is left to the package's re-confirmation.
 */
export async function resendWhileItCanLand(
  io: SenderIo, signerOf: () => Promise<FacilitatorSvmSigner>, tx: Decoded, wire: string, r: PaymentRequirements, signature: string,
): Promise<void> {
  if ((await status(io, signature, { history: true })).kind !== 'unseen') return;
  const { lifetimeToken } = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  if ((await blockhashValid(io, lifetimeToken)) !== true) return;
  const signer = await signerOf();
  const signed = await signer.signTransaction(wire, String(r.extra['feePayer']) as Address, r.network);
  if (signatureOfWire(signed).signature === signature) await send(io, signed);
}

/**
 * A recorded signature that can never land: its blockhash expired, read FIRST (a status
 * read first could miss a landing that happens before the expiry is read), and no status
 * for it even with the history searched.
 */
export async function neverLands(io: SenderIo, tx: Decoded, signature: string): Promise<boolean> {
  const { lifetimeToken } = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  if ((await blockhashValid(io, lifetimeToken)) !== false) return false;
  return (await status(io, signature, { history: true })).kind === 'unseen';
}

/**
 * Whether the chain says the signature failed. An answer that only says "not confirmed"
 * (the package's terminal answer when it could not record a pending signature, say) leaves
 * a transaction that may still land: only the chain's failure makes it terminal.
 */
export async function knownFailed(io: SenderIo, signature: string): Promise<boolean> {
  try {
    return (await status(io, signature, { history: true })).kind === 'failed';
  } catch {
    return false;
  }
}
