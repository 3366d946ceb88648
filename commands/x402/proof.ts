/**
 * The payer's proof in a Payment payload. A landed transaction is public (getTransaction
 * gives its bytes back, /v1/events lists its signature), so the transaction alone proves
 * nothing about who sends it. The proof never goes on chain:
 *
 *   payload.proof = { signedAt: <unix seconds>, signature: <base58 ed25519 signature> }
 *
 * signed by the payer (the policy's owner) over the UTF-8 bytes of
 *
 *   tributary-x402|<requirement id>|<resource>|<transaction signature, or - when no transaction is sent>|<signedAt>
 *
 * with signedAt within PROOF_WINDOW_SECONDS of the server's clock. It is required on
 * every path that yields a JWT: a new transaction, a policy the payer holds already, and
 * the repeat of a settled header. A proof is answered once (spent-proofs.ts): a copy of a
 * header (a proxy's log, an MCP host's transcript) gets no JWT, and the payer signs a fresh
 * proof each time it presents a payment, even the same transaction again.
 */
import bs58 from 'bs58';
import { signDetached, verifyStrict } from '../../infra/crypto/ed25519.js';

export const PROOF_PREFIX = 'tributary-x402';
export const PROOF_WINDOW_SECONDS = 300;
/** in the message when the payload carries no transaction (a policy the payer holds already) */
export const NO_TRANSACTION = '-';

export interface PaymentProof { signedAt: number; signature: string }

export interface ProofFields {
  requirementId: string;
  resource: string;
  /** the transaction's signature (base58); undefined when no transaction is sent */
  transactionSignature: string | undefined;
  signedAt: number;
}

export function proofMessage(f: ProofFields): string {
  return [PROOF_PREFIX, f.requirementId, f.resource, f.transactionSignature ?? NO_TRANSACTION, String(f.signedAt)].join('|');
}

/**
 * A signedAt for a new proof by `payer`: now, or one past the last this process gave the payer.
 * The message holds no nonce, so two proofs of one payment signed within a second would be
 * the same proof, and the second refused as spent; the window (±PROOF_WINDOW_SECONDS) leaves
 * room for a burst running a few seconds ahead.
 */
const lastSignedAt = new Map<string, number>();
export function freshSignedAt(payer: string, nowSeconds: number): number {
  const at = Math.max(nowSeconds, (lastSignedAt.get(payer) ?? 0) + 1);
  lastSignedAt.set(payer, at);
  return at;
}

/** The proof a payer attaches: `secretKey` is the payer's 64-byte Solana secret key. */
export function signPaymentProof(secretKey: Uint8Array, f: Omit<ProofFields, 'signedAt'>, signedAt: number): PaymentProof {
  const signature = signDetached(new TextEncoder().encode(proofMessage({ ...f, signedAt })), secretKey);
  return { signedAt, signature: bs58.encode(signature) };
}

/** Why the proof does not show that `payer` sends this payment now, or undefined when it does. */
export function proofProblem(
  proof: PaymentProof | undefined, payer: string, f: Omit<ProofFields, 'signedAt'>, nowSeconds: number,
): string | undefined {
  if (!proof) {
    return `the Payment payload carries no proof: payload.proof = {signedAt, signature}, the payer's ed25519 signature of "${PROOF_PREFIX}|<requirement id>|<resource>|<transaction signature or ->|<signedAt>"`;
  }
  if (Math.abs(nowSeconds - proof.signedAt) > PROOF_WINDOW_SECONDS) {
    return `the payment proof was signed at ${proof.signedAt}, more than ${PROOF_WINDOW_SECONDS} s from the server's clock (${nowSeconds}); sign it again`;
  }
  let sig: Uint8Array;
  let key: Uint8Array;
  try {
    sig = bs58.decode(proof.signature);
    key = bs58.decode(payer);
  } catch {
    return 'payload.proof.signature is not base58';
  }
  const message = new TextEncoder().encode(proofMessage({ ...f, signedAt: proof.signedAt }));
  if (!verifyStrict(sig, message, key)) {
    return `the payment proof is not the payer's (${payer}) signature of "${proofMessage({ ...f, signedAt: proof.signedAt })}"`;
  }
  return undefined;
}
